"""`--set KEY=VALUE` on `compile`, `seams`, `gate`, `splice`, `explain`, `redteam` and
`policy diff`: what-if overrides (`pcsc.policy.overrides`),
never written back."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from pcsc.diagnostics.messages import E901_OVERRIDE, diag
from pcsc.diagnostics.model import Diagnostic, Span

if TYPE_CHECKING:
    from pcsc.cli.context import Context
    from pcsc.compiler.session import Session
    from pcsc.lang.ir import Route
    from pcsc.policy.overrides import Override


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
    return [diag(E901_OVERRIDE, Span.file_only("--set"), problem=m) for m in messages]


def apply_to_session(session: Session, routes: list[Route], overrides: tuple[Override, ...]) -> list[Route]:
    """Bind ``session`` to policies with the overrides and return the routes with theirs;
    an override that cannot be applied to a policy a route pins is a PCSC-E901 in the
    session (the routes are then returned unchanged, and compile nothing new)."""
    from pcsc.policy.load import PolicyError, PolicyStore
    from pcsc.policy.overrides import OverrideError, OverridingStore, override_route, unmatched

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


def parse(args: argparse.Namespace) -> tuple[tuple[Override, ...], list[Diagnostic]]:
    """The overrides of ``--set`` (none when the command was not given it), or the
    PCSC-E901 diagnostics of those that cannot be read."""
    from pcsc.policy.overrides import OverrideError, parse_overrides

    try:
        return parse_overrides(getattr(args, "set", None) or []), []
    except OverrideError as exc:
        return (), diagnostics(exc.messages)


def load(ctx: Context, files: Sequence[str], overrides: tuple[Override, ...]) -> tuple[Session, list[Route]]:
    """``ctx.load(files)`` with the overrides applied to the session and the routes.
    With overrides, the command then runs in this process: a worker rebuilds its
    session from the policy files, which the overrides are never written to."""
    session, routes = ctx.load(files)
    if overrides:
        ctx.args.jobs = 1
        ctx.args.scheduler = None
    return session, apply_to_session(session, routes, overrides)


def record(payload: dict[str, Any] | None, text: str | None, overrides: tuple[Override, ...],
           label: str = "what-if overrides") -> str | None:
    """Record the overrides in ``payload`` (its ``overrides`` key) and return ``text``
    headed by them, the one place a text report names them; both unchanged without
    overrides."""
    if not overrides:
        return text
    if payload is not None:
        payload["overrides"] = [o.json() for o in overrides]
    if text is None:
        return None
    return f"{label} (never written back): " + ", ".join(o.text for o in overrides) + "\n" + text


def note(overrides: tuple[Override, ...]) -> tuple[str, ...]:
    """The what-if line on standard error, for a command whose standard output is not a
    report that `record` heads (the route `splice` writes): said once, never twice."""
    if not overrides:
        return ()
    return ("what-if overrides (never written back): " + ", ".join(o.text for o in overrides),)
