"""Symbolic verification of the deletion identity with sympy (imported only here).

For a chain of n transitions and a seam k, the claim is

    fold(spliced) − fold(original) − Π_{i<k} p_i·[c_k + (1 − p_k)·R_{k+1}] = 0

as a polynomial in p_0…p_{n−1}, c_0…c_{n−1}, V over QQ. It is checked in sympy's
sparse polynomial ring (canonical form: equal polynomials are equal objects), never
with `simplify`, `equals` or `subs`, and cached per shape (n, k).

For the paper's formula the proof is made on the chain's first k + 1 transitions:
both folds end in the same suffix (the spliced chain's transitions from k on are the
original's from k + 1 on), so both R_0 are polynomials in p_0…p_k, c_0…c_k and that
suffix's value R_{k+1}; the residual is checked with R_{k+1} a free generator (the
ring's V), and a polynomial that is zero for a free R_{k+1} stays zero when the suffix
fold is substituted for it. The proof of (n, k) then costs O(k) terms instead of
O(n), and a 50-transition route's 48 proofs take a fraction of the full-chain time.
A formula passed in explicitly is checked on the full chain, as before.

A shape in the shipped table of proven identities (`pcsc.analysis.seams.proven`) is
not proved again, and its derivation is the table's: sympy is imported only for others.

When a command line run asks for it (`remember_proofs()`; `pcsc seams` does), shapes
proved once are remembered on disk too, in the user's private pcsc cache folder
(`pcsc.compiler.ircache.cache_folder`, so `PCSC_NO_CACHE=1` turns it off): a JSON list of the
(n, k) proved, in a file named by a hash of this module's source, the fold's
(`pcsc.score.fold`) and sympy's version, so an edited proof or fold, or another sympy,
proves again. Only proofs that held are stored; a
later run with the file present does not import sympy for them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from pcsc.analysis.seams import proven
from pcsc.score import fold
from pcsc.score.fold import chain_fold

#: What a proof depends on: this module and the fold it folds with (the proof file's name)
PROOF_SOURCES = (Path(__file__), Path(fold.__file__))

Formula = Callable[[list[Any], list[Any], Any, int], Any]


def paper_formula(ps: list[Any], cs: list[Any], R_next: Any, k: int) -> Any:
    """Π_{i<k} p_i · [c_k + (1 − p_k)·R_{k+1}] over any ring."""
    reach = 1
    for p in ps[:k]:
        reach = reach * p
    return reach * (cs[k] + (1 - ps[k]) * R_next)


def verify_shape(n: int, k: int, formula: Formula = paper_formula) -> bool:
    """True when the identity holds symbolically for (n, k) with ``formula``."""
    if formula is paper_formula:
        return _verify_cached(n, k)
    return _verify(n, k, formula)


def _verify_cached(n: int, k: int) -> bool:
    if proven.holds("chain", n, k):
        return True
    known = _proved()
    if (n, k) in known:
        return True
    verified = prove_shape(n, k)
    if verified:
        known.add((n, k))
        _remember(known)
    return verified


def _proved() -> set[tuple[int, int]]:
    """The shapes proved before, by this proof and this sympy (see the module)."""
    return _proved_at(_proof_file())


@cache
def _proved_at(path: Path | None) -> set[tuple[int, int]]:
    if path is None:
        return set()
    try:
        shapes = json.loads(path.read_text(encoding="utf-8"))
        return {(int(n), int(k)) for n, k in shapes}
    except Exception:  # no file, or not ours: prove again
        return set()


def _remember(known: set[tuple[int, int]]) -> None:
    path = _proof_file()
    if path is None:
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-proofs-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(sorted(known), f)
        os.replace(tmp, path)
    except OSError:
        pass


_DISK = [False]


def remember_proofs(on: bool = True) -> None:
    """Keep proved shapes on disk across runs (off by default: a library caller's
    process proves what it uses, once)."""
    _DISK[0] = on


def _proof_file() -> Path | None:
    return _proof_path() if _DISK[0] else None


@cache
def _proof_path() -> Path | None:
    from pcsc.compiler.ircache import cache_folder

    folder = cache_folder()
    if folder is None:
        return None
    try:
        from importlib.metadata import version

        sympy_version = version("sympy")
    except Exception:
        return None
    sources = b"".join(path.read_bytes() for path in PROOF_SOURCES)
    digest = hashlib.sha256(sources + sympy_version.encode()).hexdigest()[:20]
    return folder.parent / f"proofs-{digest}.json"


@cache
def prove_shape(n: int, k: int) -> bool:
    """The paper's identity for (n, k) proved with sympy (no table, no cache file)."""
    if not 1 <= k <= n - 2:
        raise ValueError(f"seam k={k} is not interior for n={n}")
    _, ps, cs, R_next = _ring(n)  # V stands for R_{k+1}, the shared suffix's value
    original = chain_fold(ps[: k + 1], cs[: k + 1], R_next)
    spliced = chain_fold(ps[:k], cs[:k], R_next)
    residual = spliced[0] - original[0] - paper_formula(ps, cs, R_next, k)
    return bool(residual == 0)


@cache
def _ring(n: int) -> tuple[Any, list[Any], list[Any], Any]:
    from sympy import QQ
    from sympy.polys.rings import ring

    names = [f"p{i}" for i in range(n)] + [f"c{i}" for i in range(n)] + ["V"]
    R, *gens = ring(names, QQ)
    return R, gens[:n], gens[n : 2 * n], gens[2 * n]


def _verify(n: int, k: int, formula: Formula) -> bool:
    if not 1 <= k <= n - 2:
        raise ValueError(f"seam k={k} is not interior for n={n}")
    _, ps, cs, V = _ring(n)
    original = chain_fold(ps, cs, V)
    spliced = chain_fold(ps[:k] + ps[k + 1 :], cs[:k] + cs[k + 1 :], V)
    residual = spliced[0] - original[0] - formula(ps, cs, original[k + 1], k)
    return bool(residual == 0)


def derivation(n: int, k: int) -> dict[str, str]:
    """For `pcsc seams --symbolic` under the paper's fold: the shipped table's entry
    (`pcsc.analysis.seams.proven`), else `derive(n, k)`."""
    stored = proven.stored_derivation("chain", n, k)
    return stored if stored is not None else derive(n, k)


def derive(n: int, k: int) -> dict[str, str]:
    """The difference of the two symbolic folds, with R_{k+1} kept as a symbol,
    factored; the paper's formula; and the residual, by sympy (a policy's own fold:
    `pcsc.analysis.seams.folds.fold_derivation`)."""
    import sympy

    ps = list(sympy.symbols(f"p0:{n}"))
    cs = list(sympy.symbols(f"c0:{n}"))
    R_next = sympy.Symbol(f"R{k + 1}")
    # fold the prefix 0..k of both chains down from R_{k+1}
    orig = chain_fold(ps[: k + 1], cs[: k + 1], R_next)[0]
    spliced = chain_fold(ps[:k], cs[:k], R_next)[0]
    difference = sympy.factor(sympy.expand(spliced - orig))
    paper = paper_formula(ps, cs, R_next, k)
    residual = sympy.expand(difference - paper)
    return {
        "fold": "chain",
        "shape": f"n={n}, k={k}",
        "difference": sympy.sstr(difference),
        "formula": sympy.sstr(paper),
        "paper": sympy.sstr(paper),
        "residual": sympy.sstr(residual),
        "verified": str(prove_shape(n, k)),
    }
