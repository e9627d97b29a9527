"""What changed between two policies, and which routes' numbers move (the library
behind `pcsc policy diff OLD NEW [FILE…|DIR]`).

The keys: the two *resolved* documents (after `extends` is merged, the documents the
hashes are taken over) compared key by key, each difference named by its dotted path
(`priors."devtools/first-users".p`), as added, removed or changed with old and new
values. Tables recurse; a table on one side only is one entry (a new reference class
is one `added`); `[[gates]]` are matched by `id` (`gates[id="…"]`); other arrays
compare whole. `policy.id`, `policy.version` and `policy.extends` name the policy
and are shown in the heading, not as changes. Numbers compare by value (TOML's `5e4`
and `50_000` are the same floor).

The routes: every route given is compiled twice, once under each policy, whatever
policy it pins (the pin, and its sha256, are overridden, never edited), and reports
the released score, the verdict, eligibility, the criteria score and bucket, the
binding transition, and per transition p and c, old → new. A route whose classes
or criteria one policy lacks does not compile under it: that is reported, with the
diagnostic, and the command exits 1.

This module adds no number: both sides run the ordinary pipeline (`Session`). It
lives outside `pcsc.policy` because it depends on the pipeline, and policies do not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from pcsc.base.humanize import money, plural
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.ir import PolicyRef, Route
from pcsc.lang.lower.route import PolicyFacts
from pcsc.lang.printer import number
from pcsc.policy.load import PolicyStore, _jsonable
from pcsc.policy.model import LoadedPolicy

IDENTITY = ("id", "version", "extends")  # keys of [policy] that name it; shown in the heading

Kind = Literal["added", "removed", "changed"]


# ---------------------------------------------------------------------- keys
@attrs.frozen
class KeyChange:
    path: str
    kind: Kind
    old: Any  # None when added
    new: Any  # None when removed


def _key(part: str) -> str:
    bare = part.replace("_", "a").replace("-", "a").isalnum() and part.isascii()
    return part if bare else json.dumps(part, ensure_ascii=False)


def _join(path: str, part: str) -> str:
    return f"{path}.{_key(part)}" if path else _key(part)


def same(a: Any, b: Any) -> bool:
    """Equal as policy values: numbers by value (1 and 1.0), never a bool for a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def diff_documents(old: dict[str, Any], new: dict[str, Any]) -> list[KeyChange]:
    """Key-by-key differences of two resolved policy documents, in document order
    (the old document's keys first, then the keys only the new one has)."""
    out: list[KeyChange] = []
    a, b = _jsonable(old), _jsonable(new)
    for doc in (a, b):
        header = doc.get("policy")
        if isinstance(header, dict):
            doc["policy"] = {k: v for k, v in header.items() if k not in IDENTITY}
    _walk(a, b, "", out)
    return out


def _walk(a: dict[str, Any], b: dict[str, Any], path: str, out: list[KeyChange]) -> None:
    for k in [*a, *(k for k in b if k not in a)]:
        here = _join(path, k)
        if k not in b:
            out.append(KeyChange(here, "removed", a[k], None))
        elif k not in a:
            out.append(KeyChange(here, "added", None, b[k]))
        elif isinstance(a[k], dict) and isinstance(b[k], dict):
            _walk(a[k], b[k], here, out)
        elif not path and k == "gates" and _gate_list(a[k]) and _gate_list(b[k]):
            _walk_gates(a[k], b[k], out)
        elif not same(a[k], b[k]):
            out.append(KeyChange(here, "changed", a[k], b[k]))


def _gate_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(g, dict) and isinstance(g.get("id"), str) for g in value)


def _walk_gates(a: list[dict[str, Any]], b: list[dict[str, Any]], out: list[KeyChange]) -> None:
    """Gates are matched by id: `gates[id="has-admissible-evidence"].rule`."""
    old = {g["id"]: g for g in a}
    new = {g["id"]: g for g in b}
    for gid in [*old, *(g for g in new if g not in old)]:
        here = f"gates[id={json.dumps(gid, ensure_ascii=False)}]"
        if gid not in new:
            out.append(KeyChange(here, "removed", old[gid], None))
        elif gid not in old:
            out.append(KeyChange(here, "added", None, new[gid]))
        else:
            _walk(old[gid], new[gid], here, out)


# ---------------------------------------------------------------------- routes under a given policy
@attrs.define
class PinnedStore(PolicyStore):
    """A policy store that answers the pinned policy's own reference with it (so a
    policy given by path needs no search path), and searches as usual otherwise."""

    pinned: LoadedPolicy | None = None

    def load_ref(self, ref: str, _chain: tuple[str, ...] = ()) -> LoadedPolicy:
        if self.pinned is not None and ref == self.pinned.ref:
            return self.pinned
        return super().load_ref(ref, _chain)


@attrs.define
class PinnedSession(Session):
    """A session that binds every route to one given policy instead of its own pin."""

    pinned: LoadedPolicy | None = None

    def bind(self, route: Route) -> LoadedPolicy | None:
        if self.pinned is None:
            return super().bind(route)
        policy = self.pinned.policy
        ref = PolicyRef(policy.id, policy.version, None, route.policy.span)
        return self.check_policy(attrs.evolve(PolicyFacts.of(route), policy=ref))


def pinned_session(loaded: LoadedPolicy, diags: Diagnostics, search_path: Sequence[Path] = ()) -> PinnedSession:
    store = PinnedStore(list(search_path), pinned=loaded)
    return PinnedSession(policies=store, diags=diags, pinned=loaded)


@attrs.frozen
class Side:
    """The numbers of one route under one policy, as the diff compares them."""

    score: float | None  # released; None when GATE withholds it
    ungated_score: float
    verdict: str
    eligible: bool
    criteria_score: float | None
    bucket: str | None
    binding: str
    transitions: tuple[tuple[str, float, float], ...]  # (name, p, c)

    @classmethod
    def of(cls, c: Compiled) -> Side:
        n = c.numbers
        return cls(
            c.decision.score,
            n.score,
            c.decision.verdict,
            n.eligible,
            n.criteria_score,
            n.bucket,
            n.transitions[n.binding].name,
            tuple((t.name, t.p, t.cost.c) for t in n.transitions),
        )

    def json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "ungated_score": self.ungated_score,
            "verdict": self.verdict,
            "eligible": self.eligible,
            "criteria_score": self.criteria_score,
            "bucket": self.bucket,
            "binding": self.binding,
        }


ROUTE_KEYS = ("score", "ungated_score", "verdict", "eligible", "criteria_score", "bucket", "binding")


@attrs.frozen
class RouteDiff:
    route: str
    file: str
    pinned: str  # the route's own pin, overridden on both sides
    old: Side | None  # None when the route does not compile under OLD
    new: Side | None
    old_errors: tuple[str, ...]
    new_errors: tuple[str, ...]

    @property
    def moved_keys(self) -> list[str]:
        if self.old is None or self.new is None:
            return []
        o, n = self.old.json(), self.new.json()
        return [k for k in ROUTE_KEYS if o[k] != n[k] or type(o[k]) is not type(n[k])]

    @property
    def transitions(self) -> list[tuple[str, tuple[float, float], tuple[float, float]]]:
        """(name, (p old, p new), (c old, c new)) for every transition, in chain order."""
        if self.old is None or self.new is None:
            return []
        return [
            (name, (p0, p1), (c0, c1))
            for (name, p0, c0), (_, p1, c1) in zip(self.old.transitions, self.new.transitions, strict=True)
        ]

    @property
    def moved_transitions(self) -> list[tuple[str, tuple[float, float], tuple[float, float]]]:
        return [t for t in self.transitions if t[1][0] != t[1][1] or t[2][0] != t[2][1]]

    @property
    def status(self) -> str:
        if self.old is None and self.new is None:
            return "fails under both"
        if self.old is None:
            return "fails under old"
        if self.new is None:
            return "fails under new"
        return "moves" if self.moved_keys or self.moved_transitions else "unchanged"

    @property
    def moves(self) -> bool:
        """Its numbers differ, or exist under one policy only."""
        return self.status in ("moves", "fails under old", "fails under new")


def compare_route(
    route: Route, old: PinnedSession, new: PinnedSession, new_route: Callable[[Route], Route] | None = None
) -> RouteDiff:
    """``new_route`` edits the route compiled under NEW (what-if route overrides)."""
    sides: list[Side | None] = []
    errors: list[tuple[str, ...]] = []
    for session, edited in ((old, route), (new, new_route(route) if new_route else route)):
        before = len(session.diags)
        compiled = session.compile_route(edited)
        sides.append(None if compiled is None else Side.of(compiled))
        found = (d.message for d in session.diags.items[before:] if d.severity == "error")
        errors.append(tuple(dict.fromkeys(found)))
    return RouteDiff(route.name, route.file, str(route.policy), sides[0], sides[1], errors[0], errors[1])


@attrs.frozen
class PolicyDiff:
    old: LoadedPolicy
    new: LoadedPolicy
    changes: tuple[KeyChange, ...]
    routes: tuple[RouteDiff, ...]

    def count(self, kind: Kind) -> int:
        return sum(1 for c in self.changes if c.kind == kind)

    @property
    def identical(self) -> bool:
        return self.old.sha256 == self.new.sha256


def diff_policies(
    old: LoadedPolicy,
    new: LoadedPolicy,
    routes: Iterable[Route],
    search_path: Sequence[Path] = (),
    new_route: Callable[[Route], Route] | None = None,
) -> PolicyDiff:
    """The key changes, and every route compiled under both policies. What a route
    cannot compile under (a class or criterion a policy lacks) is a finding of the
    diff, kept per route and side, not a diagnostic of the run."""
    under_old = pinned_session(old, Diagnostics(), search_path)
    under_new = pinned_session(new, Diagnostics(), search_path)
    compared = tuple(compare_route(r, under_old, under_new, new_route) for r in routes)
    return PolicyDiff(old, new, tuple(diff_documents(old.resolved, new.resolved)), compared)


# ---------------------------------------------------------------------- output
def _identity(loaded: LoadedPolicy) -> dict[str, Any]:
    return {
        "policy": loaded.ref,
        "id": loaded.policy.id,
        "version": loaded.policy.version,
        "extends": loaded.policy.policy.extends,
        "path": loaded.path,
        "sha256": loaded.sha256,
    }


def to_json(d: PolicyDiff) -> dict[str, Any]:
    routes = []
    for r in d.routes:
        routes.append(
            {
                "route": r.route,
                "file": r.file,
                "pinned": r.pinned,
                "status": r.status,
                "moves": r.moves,
                "moved": r.moved_keys,
                "old": None if r.old is None else r.old.json(),
                "new": None if r.new is None else r.new.json(),
                "errors": {"old": list(r.old_errors), "new": list(r.new_errors)},
                "transitions": [
                    {"name": name, "p": {"old": p[0], "new": p[1]}, "c": {"old": c[0], "new": c[1]},
                     "moved": p[0] != p[1] or c[0] != c[1]}
                    for name, p, c in r.transitions
                ],
            }
        )
    return {
        "old": _identity(d.old),
        "new": _identity(d.new),
        "identical": d.identical,
        "changes": [{"path": c.path, "kind": c.kind, "old": c.old, "new": c.new} for c in d.changes],
        "routes": routes,
        "summary": {
            "added": d.count("added"),
            "removed": d.count("removed"),
            "changed": d.count("changed"),
            "routes": len(d.routes),
            "move": sum(1 for r in d.routes if r.moves),
            "unchanged": sum(1 for r in d.routes if r.status == "unchanged"),
            "fail": sum(1 for r in d.routes if r.old is None or r.new is None),
        },
    }


def show(value: Any, limit: int = 48) -> str:
    """A policy value in TOML-like text; long strings are cut (the JSON has them whole);
    numbers read as the route language writes them (`100_000`, `0.45`), exactly."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= limit else text[: limit - 2] + "…\""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {show(v, limit)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(show(v, limit) for v in value) + "]"
    if isinstance(value, int | float):
        return number(float(value))
    return repr(value)


def _pair(a: float, b: float, fmt: str) -> tuple[str, str]:
    """Both numbers in ``fmt``, or in full when ``fmt`` would print two different
    numbers the same."""
    x, y = format(a, fmt), format(b, fmt)
    return (x, y) if x != y or a == b else (repr(a), repr(b))


def _money(x: float | None) -> str:
    return "withheld" if x is None else money(x)


def _criteria(side: Side) -> str:
    return "—" if side.criteria_score is None else f"{side.criteria_score:.2f} ({side.bucket})"


def _arrow(a: str, b: str) -> str:
    return a if a == b else f"{a} → {b}"


def to_text(d: PolicyDiff, with_routes: bool) -> str:
    from pcsc.base.tables import table

    o, n = d.old, d.new

    def extends(lp: LoadedPolicy) -> str:
        return f"  (extends {lp.policy.policy.extends})" if lp.policy.policy.extends else ""

    lines = [
        f"policy diff  {o.ref} → {n.ref}",
        *table(
            [
                ("old", o.ref, f"sha256 {o.sha256}", o.path + extends(o)),
                ("new", n.ref, f"sha256 {n.sha256}", n.path + extends(n)),
            ],
            left=(0, 1, 2, 3),
        ),
        "",
    ]
    summary = f"{d.count('added')} added, {d.count('removed')} removed, {d.count('changed')} changed"
    if d.identical:
        lines.append(f"resolved documents: identical (same sha256); {summary}")
    else:
        lines.append(f"resolved documents, key by key: {summary}")
    rows = []
    for c in d.changes:
        value = show(c.new) if c.kind == "added" else show(c.old) if c.kind == "removed" else (
            f"{show(c.old)} → {show(c.new)}"
        )
        rows.append((c.kind, c.path, value))
    if rows:
        lines += table(rows, left=(0, 1, 2))
    if with_routes:
        lines += ["", route_summary(d), *route_lines(d)]
    return "\n".join(lines)


def route_summary(d: PolicyDiff) -> str:
    moving = sum(1 for r in d.routes if r.moves)
    one = sum(1 for r in d.routes if r.status in ("fails under old", "fails under new"))
    both = sum(1 for r in d.routes if r.status == "fails under both")
    n = len(d.routes)
    text = f"routes, each compiled under both policies (its own pin overridden): {plural(n, 'route')}, "
    text += f"{moving} move" + ("s" if moving == 1 else "")
    notes = [f"{one} compile under one policy only"] if one else []
    notes += [f"{both} under neither"] if both else []
    return text + (f" ({'; '.join(notes)})" if notes else "")


def route_lines(d: PolicyDiff) -> list[str]:
    from pcsc.base.tables import table

    if not d.routes:
        return []
    header = ("route", "file", "score old", "score new", "Δ score", "verdict", "eligible", "")
    rows = [header]
    for r in d.routes:
        old, new = r.old, r.new
        delta = "—"
        if old is not None and new is not None and old.score is not None and new.score is not None:
            delta = f"{new.score - old.score:+,.2f}"
        verdict = _arrow(old.verdict if old else "error", new.verdict if new else "error")
        yes = {True: "yes", False: "no"}
        eligible = _arrow(yes[old.eligible] if old else "—", yes[new.eligible] if new else "—")
        rows.append((
            r.route,
            r.file,
            _money(old.score) if old else "error",
            _money(new.score) if new else "error",
            delta,
            verdict,
            eligible,
            r.status,
        ))
    lines = table(rows, left=(0, 1, 5, 6, 7))
    for r in d.routes:
        if r.status == "unchanged":
            continue
        lines += ["", f"  {r.route} ({r.file}):"]
        for side, errors in (("old", r.old_errors), ("new", r.new_errors)):
            lines += [f"    does not compile under {side}: {m}" for m in errors]
        if r.old is None or r.new is None:
            continue
        extra = []
        o, n = r.old, r.new
        if o.ungated_score != n.ungated_score and (o.score != o.ungated_score or n.score != n.ungated_score):
            a, b = _pair(o.ungated_score, n.ungated_score, ",.2f")
            extra.append(f"ungated score {a} → {b}")
        if o.criteria_score != n.criteria_score or o.bucket != n.bucket:
            extra.append(f"criteria T {_criteria(o)} → {_criteria(n)}")
        if o.binding != n.binding:
            extra.append(f"binding {o.binding} → {n.binding}")
        if extra:
            lines.append("    " + "; ".join(extra))
        moved = r.moved_transitions
        if moved:
            trows = [("transition", "p old", "p new", "c old", "c new")]
            for name, p, c in moved:
                trows.append((name, *_pair(p[0], p[1], ".4f"), *_pair(c[0], c[1], ",.2f")))
            lines += table(trows, indent="    ")
    return lines
