"""The detection ladder (docs/experiments.md): two detectors run on the same honest
routes and the same splices (every admissible deletion of every route).

- *typed-state detector*: GATE's coverage decision. A route is flagged when GATE
  suspends it (suspend-and-ask: a material change no discharged obligation covers).
  A splice that did not compile is not counted as detected.
- *structural proxy detector* (ours): deterministic, from edge structure alone, with
  no policy, no obligations and no types. A transition's *jump* in a numeric field is
  target value / source value, where both are > 0 (a field starting from zero has no
  ratio and is not judged). The *class reference* of (reference class, field) for a
  route is the largest jump that transitions of that class show in that field on the
  *other* honest routes of the cohort (leave one route out, so that a route never sets
  its own bar). A transition is flagged when its jump in some field exceeds
  `JUMP_MULTIPLE` times its class reference; a (class, field) with no reference is not
  judged. A route is flagged when any of its transitions is.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from pcsc.ir import Route
from pcsc.seams.analysis import RouteSeams
from pcsc.seams.splice import splice

#: A transition is flagged when it jumps more than this many times the largest jump its
#: class shows on the other honest routes. A constant of the detector, not of any policy.
JUMP_MULTIPLE = 2.0

Jumps = dict[tuple[str, str], list[tuple[str, float]]]  # (class, field) -> [(route, jump)]


def jumps(route: Route) -> list[tuple[str, str, float]]:
    """(reference class, field, jump) for every numeric field of every transition."""
    out = []
    for t in route.transitions:
        source, target = route.state(t.source), route.arrival(t)
        for name, before in source.values:
            after = target.get(name)
            if isinstance(before, bool) or isinstance(after, bool):
                continue
            if before > 0 and after > 0:
                out.append((t.ref_class, name, after / before))
    return out


def class_jumps(routes: Sequence[Route]) -> Jumps:
    """The honest cohort's jumps by (class, field), each with the route it came from."""
    table: Jumps = {}
    for r in routes:
        for cls, name, j in jumps(r):
            table.setdefault((cls, name), []).append((r.name, j))
    return table


def proxy_flags(route: Route, table: Jumps, own: str) -> bool:
    """The structural proxy's decision on ``route`` (an honest route or a splice of the
    honest route named ``own``, whose jumps do not count in the reference)."""
    for cls, name, j in jumps(route):
        others = [x for r, x in table.get((cls, name), ()) if r != own]
        if others and j > JUMP_MULTIPLE * max(others):
            return True
    return False


@attrs.frozen
class Ladder:
    splices: int
    honest: int
    typed_detections: int
    typed_honest_flags: int
    proxy_detections: int
    proxy_honest_flags: int


def ladder(results: Sequence[RouteSeams]) -> Ladder:
    routes = [r.compiled.route for r in results]
    table = class_jumps(routes)
    splices = typed = proxy = typed_honest = proxy_honest = 0
    for r, route in zip(results, routes, strict=True):
        typed_honest += r.honest_gate.verdict == "suspend-and-ask"
        proxy_honest += proxy_flags(route, table, route.name)
        for s in r.seams:
            splices += 1
            typed += s.pipeline is not None and s.pipeline.gate.verdict == "suspend-and-ask"
            proxy += proxy_flags(splice(route, s.k), table, route.name)
    return Ladder(splices, len(results), typed, typed_honest, proxy, proxy_honest)
