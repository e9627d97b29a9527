"""The detection ladder (docs/experiments.md): two detectors run on the same honest
routes and the same splices (every admissible deletion of every route, and the seeded
splice of each route that the experiment's Phase 0 random arm draws).

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

Honest flags are counted per route and per transition (edge): GATE flags a transition
with a material change no discharged obligation covers, the proxy one that jumps too far.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import attrs

from pcsc.analysis.seams.analysis import RouteSeams
from pcsc.analysis.seams.splice import splice
from pcsc.coverage import discharge_route
from pcsc.lang.ir import Route

#: A transition is flagged when it jumps more than this many times the largest jump its
#: class shows on the other honest routes. A constant of the detector, not of any policy.
JUMP_MULTIPLE = 2.0

Jumps = dict[tuple[str, str], list[tuple[str, float]]]  # (class, field) -> [(route, jump)]


def _transition_jumps(route: Route) -> Iterator[tuple[str, str, str, float]]:
    """(transition, reference class, field, jump) for every numeric field of every transition."""
    for t in route.transitions:
        source, target = route.state(t.source), route.arrival(t)
        for name, before in source.values:
            after = target.get(name)
            if isinstance(before, bool) or isinstance(after, bool):
                continue
            if before > 0 and after > 0:
                yield t.name, t.ref_class, name, after / before


def jumps(route: Route) -> list[tuple[str, str, float]]:
    """(reference class, field, jump) for every numeric field of every transition."""
    return [(cls, name, j) for _, cls, name, j in _transition_jumps(route)]


def class_jumps(routes: Sequence[Route]) -> Jumps:
    """The honest cohort's jumps by (class, field), each with the route it came from."""
    table: Jumps = {}
    for r in routes:
        for cls, name, j in jumps(r):
            table.setdefault((cls, name), []).append((r.name, j))
    return table


def proxy_flagged(route: Route, table: Jumps, own: str) -> set[str]:
    """The transitions the structural proxy flags on ``route`` (an honest route or a
    splice of the honest route named ``own``, whose jumps do not count in the reference)."""
    flagged = set()
    for transition, cls, name, j in _transition_jumps(route):
        others = [x for r, x in table.get((cls, name), ()) if r != own]
        if others and j > JUMP_MULTIPLE * max(others):
            flagged.add(transition)
    return flagged


def proxy_flags(route: Route, table: Jumps, own: str) -> bool:
    """The structural proxy's decision on a route: some transition of it is flagged."""
    return bool(proxy_flagged(route, table, own))


@attrs.frozen
class Ladder:
    splices: int
    honest: int
    typed_detections: int
    typed_honest_flags: int
    proxy_detections: int
    proxy_honest_flags: int
    seeded: int  # seeded splices: one per route with an admissible deletion
    typed_seeded_detections: int
    proxy_seeded_detections: int
    edges: int  # transitions of the honest routes
    typed_edge_flags: int
    proxy_edge_flags: int


def ladder(results: Sequence[RouteSeams], seeded: Mapping[str, int] | None = None) -> Ladder:
    """Both detectors on every splice, on the seeded splice of each route (``seeded``:
    route name -> the seam k drawn), and on the honest routes and their transitions."""
    seeded = seeded or {}
    routes = [r.compiled.route for r in results]
    table = class_jumps(routes)
    splices = typed = proxy = typed_honest = proxy_honest = 0
    seeds = typed_seeded = proxy_seeded = edges = typed_edges = proxy_edges = 0
    for r, route in zip(results, routes, strict=True):
        typed_honest += r.honest_gate.verdict == "suspend-and-ask"
        flagged = proxy_flagged(route, table, route.name)
        proxy_honest += bool(flagged)
        edges += len(route.transitions)
        proxy_edges += len(flagged)
        typed_edges += len(discharge_route(route, r.compiled.policy.policy).uncovered_transitions)
        for s in r.seams:
            caught = s.pipeline is not None and s.pipeline.gate.verdict == "suspend-and-ask"
            seen = proxy_flags(splice(route, s.k), table, route.name)
            splices += 1
            typed += caught
            proxy += seen
            if seeded.get(route.name) == s.k:
                seeds += 1
                typed_seeded += caught
                proxy_seeded += seen
    return Ladder(splices, len(results), typed, typed_honest, proxy, proxy_honest,
                  seeds, typed_seeded, proxy_seeded, edges, typed_edges, proxy_edges)
