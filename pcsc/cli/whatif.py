"""`--set KEY=VALUE` on `compile` and `policy diff`: what-if overrides (`pcsc.overrides`),
never written back."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import attrs

from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostic, Span

if TYPE_CHECKING:
    from pcsc.ir import Route
    from pcsc.overrides import Override
    from pcsc.pipeline import Session


def add_set_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=f"what-if: override a policy key by its TOML path (priors.\"devtools/scale\".p=0.2) or a "
        f"route's vision.tam/capture/defensibility (vision.tam=5B), route.transitions.T.cost.ITEM or "
        f"route.evidence.E.weight {what}; never written back",
    )


def diagnostics(messages: list[str]) -> list[Diagnostic]:
    """One PCSC-E901 per message, located at the command line."""
    return [Diagnostic.of(codes.E901, m, Span.file_only("--set"), "see docs/decisions.md") for m in messages]


def apply_to_session(session: Session, routes: list[Route], overrides: tuple[Override, ...]) -> list[Route]:
    """Bind ``session`` to policies with the overrides and return the routes with theirs;
    an override that cannot be applied to a policy a route pins is a PCSC-E901 in the
    session (the routes are then returned unchanged, and compile nothing new)."""
    from pcsc.overrides import OverrideError, OverridingStore, override_route, unmatched
    from pcsc.policy.load import PolicyError, PolicyStore

    if not overrides:
        return routes
    missing = unmatched(routes, overrides)
    if missing:
        for d in diagnostics(missing):
            if d not in session.diags.items:
                session.diags.items.append(d)
        return []
    base = PolicyStore(list(session.policies.search_path))
    store = OverridingStore(list(session.policies.search_path), overrides=overrides)
    out: list[Route] = []
    failed = False
    for route in routes:
        ref = str(route.policy)
        try:
            store.load_ref(ref)
        except OverrideError as exc:
            failed = True
            for d in diagnostics(exc.messages):
                if d not in session.diags.items:
                    session.diags.items.append(d)
            continue
        except PolicyError:
            pass  # compiling reports it
        pin = route.policy.sha256
        if pin is not None:
            # the pin names the policy before the what-if: check it there, then compile
            # under the overridden document, whose sha256 differs by design
            try:
                if base.load_ref(ref).sha256 == pin:
                    route = attrs.evolve(route, policy=attrs.evolve(route.policy, sha256=None))
            except PolicyError:
                pass
        out.append(override_route(route, overrides))
    if failed:
        return []
    session.policies = store
    return out
