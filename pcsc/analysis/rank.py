"""Rank competing routes and cohorts: gates first, then the policy's rank key (docs/formulas.md, docs/forecast.md).

The order is total and deterministic. Every route falls in one of four tiers, and a
route in an earlier tier ranks above every route in a later one, whatever the numbers:

1. ``released``: eligible, with a released score (verdict ``released``, ``docked``
   or ``ungated``), ordered by the rank key, highest first;
2. ``refused``: eligible, but GATE withheld the score (``suspend-and-ask``): ordered
   by the criteria score T whatever the key, since the withheld score must not order
   anything; a refused route is ranked, never an error;
3. ``ineligible-released`` and 4. ``ineligible-refused``: a failed eligibility gate
   (or a blocking risk gate) puts a route below every eligible route, whatever its
   score; among themselves they are ordered as tiers 1 and 2 are.

The rank key comes from the policy (``[ranking] key``): ``score`` (the default) is
the released score, ``criteria`` is T. A route without a value for a key (no
criteria, so T is null) ranks after the routes of its tier that have one. Ties on the
key are broken by the rest of a fixed sequence (`SEQUENCES`), each highest first:

- released tiers, key ``score``: the score, the score without the option to stop,
  T, the value of learning the first test (VOI of the first transition, net of its
  learning cost: `pcsc.score.voi`), then the route name, then the file;
- released tiers, key ``criteria``: T first, then the same keys as above;
- refused tiers: T, then the name, then the file (the withheld score, and everything
  computed from it, orders nothing).

The name and the file come last only so that the same routes always rank the same
way; ``decided_by`` names the first key of the sequence on which a route differs from
the route ranked just above it (``tier`` when they are in different tiers), so a
ranking decided by name says so. ``tied`` marks a route whose key value another route
of its tier shares.

Routes ranked together should share a policy. When they do not, `choose_key` says
so in a warning, and ranks by the key only if every policy names the same one; if
they name different keys, it refuses with `RankKeyConflict`.

This module only orders compiled routes; it reads no files and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import attrs

from pcsc._version import __version__
from pcsc.base.humanize import money, points
from pcsc.compiler.session import Compiled
from pcsc.diagnostics.messages import W751_RANKED_TOGETHER, phrase
from pcsc.score.route import score_without_stop
from pcsc.score.units import unit_key

RankKey = Literal["criteria", "score"]
#: What can decide the order of two routes, in the words `decided_by` uses.
TieKey = Literal["tier", "score", "score_without_stop", "criteria", "first_test_voi", "name", "file"]
#: How each tie key is named in text (`pcsc rank`, the report).
TIE_KEY_TEXT: dict[str, str] = {
    "tier": "tier",
    "score": "score",
    "score_without_stop": "score without the option to stop",
    "criteria": "T",
    "first_test_voi": "value of learning the first test",
    "name": "name",
    "file": "file",
}
#: The numeric keys after the tier, per rank key and tier kind; the name, then the file, follow.
SEQUENCES: dict[tuple[RankKey, bool], tuple[TieKey, ...]] = {
    ("score", True): ("score", "score_without_stop", "criteria", "first_test_voi"),
    ("criteria", True): ("criteria", "score", "score_without_stop", "first_test_voi"),
    ("score", False): ("criteria",),
    ("criteria", False): ("criteria",),
}
Tier = Literal["released", "refused", "ineligible-released", "ineligible-refused"]
TIERS: tuple[Tier, ...] = ("released", "refused", "ineligible-released", "ineligible-refused")


class RankKeyConflict(Exception):
    """Routes ranked together whose policies name different rank keys."""


@attrs.frozen
class KeyChoice:
    key: RankKey | None  # None when there is nothing to rank
    policies: tuple[str, ...]  # `id@version (sha256 prefix)` of every policy, sorted
    warnings: tuple[str, ...]


@attrs.frozen
class Ranked:
    rank: int  # 1-based, over everything ranked together
    of: int
    rank_in_file: int  # among the routes of the same file: the competing routes of one decision
    of_in_file: int
    tier: Tier
    key: RankKey
    key_value: float | None  # the value the route was ordered by: T for a refused route
    ordered_by: RankKey  # what key_value is: the key, or `criteria` for a refused route
    tied: bool
    compiled: Compiled
    decided_by: TieKey | None = None  # what put it below the route above; None for the first
    sequence: tuple[tuple[TieKey, float | None], ...] = ()  # the numeric keys it was ordered by, in order

    @property
    def eligible(self) -> bool:
        return self.tier in ("released", "refused")

    def info(self) -> dict[str, Any]:
        """The rank as stored beside a frozen packet and printed by `pcsc rank --format json`."""
        return {
            "rank": self.rank,
            "of": self.of,
            "rank_in_file": self.rank_in_file,
            "of_in_file": self.of_in_file,
            "tier": self.tier,
            "key": self.key,
            "key_value": self.key_value,
            "ordered_by": self.ordered_by,
            "tied": self.tied,
            "decided_by": self.decided_by,
            "sequence": [{"key": k, "value": v} for k, v in self.sequence],
        }


def policy_label(ref: str, sha256: str) -> str:
    """`id@version (sha256 prefix)`: how a policy is named where several meet."""
    return f"{ref} (sha256 {sha256[:12]})"


def _policy_label(c: Compiled) -> str:
    return policy_label(c.policy.ref, c.policy.sha256)


def choose_key(compiled: Sequence[Compiled]) -> KeyChoice:
    """The rank key of the policies of ``compiled``, with a warning when they differ.
    Raises `RankKeyConflict` when their policies name different keys."""
    if not compiled:
        return KeyChoice(None, (), ())
    by_policy: dict[str, list[Compiled]] = {}
    for c in compiled:
        by_policy.setdefault(_policy_label(c), []).append(c)
    labels = tuple(sorted(by_policy))
    if len(labels) == 1:
        return KeyChoice(compiled[0].policy.policy.ranking.key, labels, ())
    keys = {label: group[0].policy.policy.ranking.key for label, group in by_policy.items()}
    if len(set(keys.values())) > 1:
        named = "; ".join(
            f"{label} ranks by `{keys[label]}` ({_names(by_policy[label])})" for label in labels
        )
        raise RankKeyConflict(
            f"routes ranked together name different rank keys: {named}. Rank the routes of each "
            "policy separately, or give their policies the same [ranking] key"
        )
    key = next(iter(keys.values()))
    warning = phrase(W751_RANKED_TOGETHER, count=len(labels), policies=", ".join(labels), key=key)
    return KeyChoice(key, labels, (warning,))


def _names(group: list[Compiled]) -> str:
    names = [c.route.name for c in group]
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return ("route " if len(names) == 1 else "routes ") + shown


def tier_of(c: Compiled) -> Tier:
    refused = c.decision.score is None
    if c.numbers.eligible:
        return "refused" if refused else "released"
    return "ineligible-refused" if refused else "ineligible-released"


def key_value(c: Compiled, key: RankKey) -> float | None:
    """What orders the route inside its tier: T for a refused route (its score is withheld)."""
    if c.decision.score is None or key == "criteria":
        return c.numbers.criteria_score
    return c.decision.score


def tie_value(c: Compiled, key: TieKey) -> float | None:
    """The value of one numeric key of `SEQUENCES` for ``c`` (None: the route has none)."""
    if key == "criteria":
        return c.numbers.criteria_score
    if c.decision.score is None:
        return None  # never asked: a refused route is ordered by T alone
    if key == "score":
        return c.decision.score
    if key == "score_without_stop":
        if not c.numbers.fold.abandonment:
            return c.decision.score
        uncovered = c.coverage.uncovered_transitions if c.coverage is not None else ()
        return score_without_stop(c.numbers, c.decision.docked, uncovered)
    if key == "first_test_voi":
        voi = c.numbers.voi
        return None if voi is None or not voi.rows else voi.rows[0].voi
    raise ValueError(f"not a numeric tie key: {key}")


def sequence_of(c: Compiled, key: RankKey) -> tuple[tuple[TieKey, float | None], ...]:
    """The numeric keys that order ``c`` inside its tier, with their values, in order."""
    released = c.decision.score is not None
    return tuple((k, tie_value(c, k)) for k in SEQUENCES[(key, released)])


def _decided_by(above: tuple[Any, ...], below: tuple[Any, ...], keys: Sequence[TieKey]) -> TieKey:
    """The first key on which two order tuples (`rank`'s ``order``) differ."""
    if above[0] != below[0]:
        return "tier"
    names: tuple[TieKey, ...] = (*keys, "name", "file")
    for i, name in enumerate(names):
        if above[1 + i] != below[1 + i]:
            return name
    return "file"  # the same route twice: nothing separates them


def rank(compiled: Sequence[Compiled], key: RankKey) -> list[Ranked]:
    """``compiled`` in rank order (see the module docstring)."""
    sequences = {id(c): sequence_of(c, key) for c in compiled}

    def order(c: Compiled) -> tuple[Any, ...]:
        values = [(v is None, 0.0 if v is None else -v) for _, v in sequences[id(c)]]
        return (TIERS.index(tier_of(c)), *values, c.route.name, c.route.file)

    ordered = sorted(compiled, key=order)
    tier_values: dict[tuple[Tier, float | None], int] = {}
    for c in ordered:
        slot = (tier_of(c), key_value(c, key))
        tier_values[slot] = tier_values.get(slot, 0) + 1
    per_file: dict[str, int] = {}
    for c in ordered:
        per_file[c.route.file] = per_file.get(c.route.file, 0) + 1
    seen_in_file: dict[str, int] = {}
    out = []
    for i, c in enumerate(ordered, start=1):
        value = key_value(c, key)
        seen_in_file[c.route.file] = seen_in_file.get(c.route.file, 0) + 1
        decided: TieKey | None = None
        if i > 1:
            above = ordered[i - 2]
            decided = _decided_by(order(above), order(c), [k for k, _ in sequences[id(c)]])
        out.append(
            Ranked(
                rank=i,
                of=len(ordered),
                rank_in_file=seen_in_file[c.route.file],
                of_in_file=per_file[c.route.file],
                tier=tier_of(c),
                key=key,
                key_value=value,
                ordered_by="criteria" if c.decision.score is None else key,
                tied=value is not None and tier_values[(tier_of(c), value)] > 1,
                compiled=c,
                decided_by=decided,
                sequence=sequences[id(c)],
            )
        )
    return out


def decided_text(r: Ranked) -> str:
    """`T`, `name (every earlier key tied)`: what put the route below the one above."""
    if r.decided_by is None:
        return "—"
    if r.decided_by in ("name", "file"):
        return f"{r.decided_by} (every earlier key tied)"
    return TIE_KEY_TEXT[r.decided_by]


def rank_row(r: Ranked) -> dict[str, Any]:
    """One row of `pcsc rank --format json`: the rank and the numbers it was decided on."""
    c, n = r.compiled, r.compiled.numbers
    return {
        **r.info(),
        "route": c.route.name,
        "file": c.route.file,
        "policy": {"id": c.policy.policy.id, "version": c.policy.policy.version, "sha256": c.policy.sha256},
        "eligible": n.eligible,
        "gates": [{"id": g.id, "kind": g.kind, "passed": g.passed} for g in n.gates],
        "verdict": c.decision.verdict,
        "score": c.decision.score,
        "ungated_score": n.score,
        "criteria_score": n.criteria_score,
        "bucket": n.bucket,
        **unit_key(c.policy.policy),
    }


def rank_text(ranked: Sequence[Ranked], choice: KeyChoice) -> str:
    """The ranking as a table; `=` after a rank marks a tie on the key."""
    if not ranked:
        return "nothing to rank"

    def num(x: float | None, show: Callable[[float], str]) -> str:
        return "—" if x is None else show(x)

    key = ranked[0].key
    header = ("rank", "route", "file", "eligible", "verdict", f"key ({key})", "score", "T", "bucket", "decided by")
    rows = [header]
    for r in ranked:
        c, n = r.compiled, r.compiled.numbers
        amount = _amount(unit_key(c.policy.policy).get("unit"))
        shown_key = num(r.key_value, amount) if key == "score" else num(r.key_value, points)
        if r.tier.endswith("refused") and key == "score":
            shown_key = "withheld (T " + num(r.key_value, points) + ")"
        rows.append((
            f"{r.rank}{'=' if r.tied else ''}",
            c.route.name,
            c.route.file,
            "yes" if n.eligible else "no",
            c.decision.verdict,
            shown_key,
            num(c.decision.score, amount),
            num(n.criteria_score, points),
            n.bucket or "—",
            decided_text(r),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {0, 5, 6, 7}
    lines = []
    for row in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    source = ("policy " if len(choice.policies) == 1 else "policies ") + ", ".join(choice.policies)
    head = (
        f"ranked by {key}, the [ranking] key of {source}\n"
        "eligible routes first; released scores, then refused ones (ordered by T); "
        "'=' marks a tie on the key\n"
        f"ties broken by: {sequence_text(key)}; 'decided by' names the key that put a route below the one above"
    )
    return head + "\n" + "\n".join(lines)


def _amount(unit: str | None) -> Callable[[float], str]:
    """An amount as the table shows it: under a fold kept in another unit than usd, with
    that unit (a usd table is what it always was)."""
    return money if unit is None else lambda x: f"{money(x)} {unit}"


def sequence_text(key: RankKey) -> str:
    """The tie-break sequence of released routes under ``key``, in words."""
    keys = [TIE_KEY_TEXT[k] for k in SEQUENCES[(key, True)][1:]]
    return ", then ".join([*keys, "route name", "file"]) + " (refused routes: T, then route name, then file)"


def rank_packet(
    ranked: Sequence[Ranked], choice: KeyChoice, diagnostics: list[dict[str, Any]], inputs: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """`pcsc rank --format json`."""
    policies = sorted({(r.compiled.policy.policy.id, r.compiled.policy.policy.version, r.compiled.policy.sha256)
                       for r in ranked})
    return {
        "pcsc": __version__,
        "policy": {"id": policies[0][0], "version": policies[0][1], "sha256": policies[0][2]}
        if len(policies) == 1 else None,
        "policies": [{"id": i, "version": v, "sha256": h} for i, v, h in policies],
        "key": choice.key,
        "warnings": list(choice.warnings),
        "inputs": [{"path": p, "sha256": h} for p, h in inputs],
        "diagnostics": diagnostics,
        "ranking": [rank_row(r) for r in ranked],
    }
