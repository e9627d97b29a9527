"""Make or check the shipped table of proven identities (pcsc/analysis/seams/proven.json).

    python -m pcsc.tools.proofs          # rewrite the table
    python -m pcsc.tools.proofs --check  # exit 1 when the table is not what it would write

The shapes are those `pcsc seams --symbolic` asks for over every route of examples/,
and every seam of the plain 50-transition chain benchmarks/bench_seams.py times. Each
is proved with sympy here, with the table switched off, and stored with the derivation
`--symbolic` prints; the output is sorted, so the same sources and sympy give the same
bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

from pcsc.analysis.seams import proven

ROOT = Path(__file__).resolve().parents[2]
BENCH_CHAIN = 50  # benchmarks/bench_seams.py's cold chain


def example_shapes(root: Path = ROOT) -> set[tuple[str, int, int]]:
    """The (fold, n, k) that `pcsc seams --symbolic` of every example asks the table for."""
    from pcsc.cli.main import main

    proven.disable()
    asked = proven.record()
    files = sorted(str(p.relative_to(root)) for p in (root / "examples").rglob("*.route"))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.chdir(root):
        code = main(["seams", "--symbolic", "--format", "json", *files])
    if code != 0:
        raise SystemExit(f"pcsc seams of the examples exited {code}")
    return set(asked)


def entry(fold: str, n: int, k: int) -> dict[str, Any]:
    """The shape proved and derived with sympy, never from the table."""
    from pcsc.analysis.seams.folds import derive_fold, prove_fold_shape
    from pcsc.analysis.seams.payoffs import derive_payoffs, prove_payoff_shape
    from pcsc.analysis.seams.symbolic import derive, prove_shape

    proven.disable()
    stop = fold.endswith("abandonment")
    if fold == "chain":
        verified, derivation = prove_shape(n, k), derive(n, k)
    elif fold.startswith("payoffs"):
        verified, derivation = prove_payoff_shape(n, k, stop), derive_payoffs(n, k, stop)
    else:
        verified, derivation = prove_fold_shape(n, k, stop), derive_fold(n, k, stop)
    return {"fold": fold, "n": n, "k": k, "verified": bool(verified), "derivation": derivation}


def table_text(shapes: set[tuple[str, int, int]]) -> str:
    from importlib.metadata import version

    entries = [entry(*shape) for shape in sorted(shapes, key=lambda s: (proven.FOLDS.index(s[0]), s[1], s[2]))]
    if not all(e["verified"] for e in entries):
        raise SystemExit(f"not proved: {[(e['fold'], e['n'], e['k']) for e in entries if not e['verified']]}")
    table = {
        "made_by": "python -m pcsc.tools.proofs",
        "sources": proven.sources_digest(),
        "sympy": version("sympy"),
        "entries": entries,
    }
    return json.dumps(table, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def shipped_shapes() -> set[tuple[str, int, int]]:
    return example_shapes() | {("chain", BENCH_CHAIN, k) for k in range(1, BENCH_CHAIN - 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the shipped table instead of writing it")
    args = ap.parse_args(argv)
    shapes = shipped_shapes()
    text = table_text(shapes)
    if args.check:
        same = proven.TABLE.exists() and proven.TABLE.read_text(encoding="utf-8") == text
        print("proven.json is up to date" if same else "proven.json is stale: run python -m pcsc.tools.proofs")
        return 0 if same else 1
    proven.TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {proven.TABLE.relative_to(ROOT)}: {len(shapes)} shapes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
