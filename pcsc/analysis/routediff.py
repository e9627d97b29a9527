"""The typed difference between two versions of a route (`pcsc diff HONEST REVISED`).

Transitions are matched by name:
- *removed* / *added*: a name on one side only;
- *retargeted*: a name on both sides whose source or target changed;
- *merged*: a retargeted transition that now ends where a removed transition of the
  honest chain ended: it absorbs that transition (a splice merges e_{k−1} and e_k);
- *seam skip*: a state of the honest chain that no longer appears on the revised
  chain (the revision skips it);
- *newly uncovered*: a material change (transition, field) that no discharged
  obligation covers in the revision and that was covered, or absent, in the honest
  route.
"""

from __future__ import annotations

import attrs

from pcsc.base.humanize import number
from pcsc.compiler.session import Compiled, gate_and_dock


@attrs.frozen
class Retarget:
    transition: str
    before: tuple[str, str]  # (source, target)
    after: tuple[str, str]


@attrs.frozen
class Merge:
    transition: str  # the revised transition
    absorbs: tuple[str, ...]  # removed honest transitions whose end it now reaches


@attrs.frozen
class Uncovered:
    transition: str
    field: str
    source: float | bool
    target: float | bool


@attrs.frozen
class RouteDiff:
    honest: str
    revised: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    retargeted: tuple[Retarget, ...]
    merged: tuple[Merge, ...]
    seam_skips: tuple[str, ...]
    newly_uncovered: tuple[Uncovered, ...]
    honest_score: float
    revised_score: float

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.retargeted or self.seam_skips or self.newly_uncovered)


def chain(c: Compiled) -> tuple[str, ...]:
    """The route's states in the order its transitions visit them, each once (on a
    graph route the branches' join is the target of several transitions)."""
    ts = c.route.transitions
    return tuple(dict.fromkeys((ts[0].source, *(t.target for t in ts)))) if ts else ()


def diff_routes(honest: Compiled, revised: Compiled) -> RouteDiff:
    before = {t.name: t for t in honest.route.transitions}
    after = {t.name: t for t in revised.route.transitions}
    removed = tuple(n for n in before if n not in after)
    added = tuple(n for n in after if n not in before)
    retargeted = tuple(
        Retarget(n, (before[n].source, before[n].target), (after[n].source, after[n].target))
        for n in after
        if n in before and (before[n].source, before[n].target) != (after[n].source, after[n].target)
    )
    merged = []
    order = [t.name for t in honest.route.transitions]
    for r in retargeted:
        i = order.index(r.transition)
        absorbed = []
        for name in order[i + 1:]:
            if name not in removed:
                break
            absorbed.append(name)
            if before[name].target == r.after[1]:
                merged.append(Merge(r.transition, tuple(absorbed)))
                break
    kept = set(chain(revised))
    skips = tuple(s for s in chain(honest) if s not in kept)
    was = {(u.transition, u.delta.field) for u in gate_and_dock(honest, "diff")[2].uncovered}
    newly = tuple(
        Uncovered(u.transition, u.delta.field, u.delta.source, u.delta.target)
        for u in gate_and_dock(revised, "diff")[2].uncovered
        if (u.transition, u.delta.field) not in was
    )
    return RouteDiff(
        honest=honest.route.name,
        revised=revised.route.name,
        added=added,
        removed=removed,
        retargeted=retargeted,
        merged=tuple(merged),
        seam_skips=skips,
        newly_uncovered=newly,
        honest_score=honest.numbers.score,
        revised_score=revised.numbers.score,
    )


def diff_packet(d: RouteDiff) -> dict[str, object]:
    return {
        "honest": d.honest,
        "revised": d.revised,
        "added": list(d.added),
        "removed": list(d.removed),
        "retargeted": [
            {"transition": r.transition, "before": {"source": r.before[0], "target": r.before[1]},
             "after": {"source": r.after[0], "target": r.after[1]}}
            for r in d.retargeted
        ],
        "merged": [{"transition": m.transition, "absorbs": list(m.absorbs)} for m in d.merged],
        "seam_skips": list(d.seam_skips),
        "newly_uncovered": [attrs.asdict(u) for u in d.newly_uncovered],
        "score": {"honest": d.honest_score, "revised": d.revised_score, "delta": d.revised_score - d.honest_score},
    }


def diff_text(d: RouteDiff) -> str:
    lines = [f"diff {d.honest} -> {d.revised}"]
    lines += [f"  removed     {n}" for n in d.removed]
    lines += [f"  added       {n}" for n in d.added]
    lines += [f"  retargeted  {r.transition}: {r.before[0]} -> {r.before[1]}  now  {r.after[0]} -> {r.after[1]}"
              for r in d.retargeted]
    lines += [f"  merged      {m.transition} absorbs {', '.join(m.absorbs)}" for m in d.merged]
    lines += [f"  seam skip   {s} (on the honest chain, not on the revised one)" for s in d.seam_skips]
    lines += [f"  uncovered   {u.transition}: {u.field} {number(u.source)} -> {number(u.target)} (newly)"
              for u in d.newly_uncovered]
    if d.empty:
        lines.append("  no typed difference")
    lines.append(f"  score {d.honest_score:,.2f} -> {d.revised_score:,.2f} "
                 f"({d.revised_score - d.honest_score:+,.2f}, both ungated)")
    return "\n".join(lines)



