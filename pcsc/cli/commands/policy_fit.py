"""`pcsc policy fit --policy ID@VERSION --version NEW`: propose a new policy version whose
priors are refitted (the prior that, after each transition's W, best explains the
outcomes, with a Beta penalty) from the ledger's resolved milestones; `--gains` also
refits the reweighting gains, `--calibration isotonic|platt` fits a calibration map;
`-o PATH` writes the TOML there instead of to standard output."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.messages import (
    E108_CANNOT_WRITE_THE,
    E746_NO_FORECAST,
    E746_NONE_RESOLVED,
    diag,
)
from pcsc.diagnostics.model import Finding, Span

if TYPE_CHECKING:
    from pcsc.forecast.records import History


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--policy", required=True, metavar="ID@VERSION", help="the policy to refit")
    p.add_argument("--version", required=True, help="the new version, e.g. 1.2.0")
    p.add_argument("--strength", type=options.decimal_number, default=20.0,
                   help="prior strength in pseudo-transitions (default: 20)")
    p.add_argument("--holdout", type=options.decimal_number, default=0.3,
                   help="share of routes held out for compare (default: 0.3)")
    p.add_argument("--cutoff", metavar="DATE",
                   help="fit only on routes whose forecasts were frozen before DATE (YYYY-MM-DD, UTC), holding "
                   "out the later ones for `policy compare --cutoff DATE`, instead of --holdout's split")
    p.add_argument("--gains", action="store_true",
                   help="also refit the reweighting gains (corroborate_gain, contradict_gain) from the frozen evidence")
    p.add_argument("--gain-strength", type=options.decimal_number, default=10.0, metavar="S",
                   help="the penalty (S/2)·Σ(g − g_old)² holding the gains toward the old ones (default: 10)")
    p.add_argument("--calibration", choices=("isotonic", "platt"),
                   help="also fit a calibration map applied to p after the prior and W")
    # not options.output: -o names the TOML written, not where the report goes
    p.add_argument("-o", "--output", dest="toml", metavar="PATH",
                   help="where to write the TOML (default: standard output)")
    options.ledger(p)
    options.as_of(p)
    options.search_paths(p, libraries=False)
    options.formats(p, "text", "json")


def failed(kind: str, diagnostics: list[Finding]) -> Outcome:
    """``ok`` false and the messages, for the policy commands that read the ledger."""
    from pcsc.cli.forecasting import messages

    return Outcome(kind, {"ok": False, "errors": messages(diagnostics, "error")}, diagnostics=diagnostics)


def history(ctx: Context, as_of: dt.date) -> History:
    """The ledger's resolved history (raises ``LedgerError``); the ledger is an input."""
    from pcsc.forecast.records import resolved_history

    return ctx.read_ledger(lambda ledger: resolved_history(ledger, as_of))


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    import tomli_w

    from pcsc.cli.failures import policy_diagnostics
    from pcsc.cli.forecasting import cutoff_date, ledger_diagnostic, resolution_date
    from pcsc.forecast.learn import cutoff_split, fit_policy, fitted_policy_document
    from pcsc.forecast.ledger import LedgerError
    from pcsc.policy.load import PolicyError

    when = resolution_date(args.as_of)
    try:
        old = ctx.policy(args.policy)
        found = history(ctx, when)
    except PolicyError as exc:
        return failed("policy-fit", policy_diagnostics(exc))
    except LedgerError as exc:
        return failed("policy-fit", [ledger_diagnostic(ctx.ledger_path(), str(exc))])
    key = (old.policy.id, old.policy.version)
    mine = [p for p in found.packets if (p["policy"]["id"], p["policy"]["version"]) == key]
    if not (args.strength > 0 and 0 <= args.holdout <= 1 and args.gain_strength > 0):
        from pcsc.cli.exits import UsageError

        raise UsageError("--strength and --gain-strength must be positive and --holdout in [0, 1]")
    if args.version == old.policy.version:
        from pcsc.cli.exits import UsageError

        raise UsageError(f"--version {args.version}: the refitted policy extends {old.policy.id}@{old.policy.version},"
                         " so it needs a new version (one that extends itself cannot load)")
    cutoff = cutoff_date(args.cutoff)
    split = None if cutoff is None else cutoff_split(found.frozen_at, cutoff)
    fitted = fit_policy(old.policy, mine, found.milestones, args.strength, args.holdout, gains=args.gains,
                        gain_strength=args.gain_strength, calibration=args.calibration, split=split)
    fits = fitted.classes
    trained = sum(f.n for f in fits)
    if not trained:  # a policy fitted to nothing would be the old one under a new version
        return failed("policy-fit", [_nothing_to_fit(ctx, old.ref, len(mine), when)])
    doc = fitted_policy_document(old, args.version, fits, args.strength, str(ctx.ledger_path()), when,
                                 args.holdout, fitted)
    text = tomli_w.dumps(doc)
    if args.toml:
        target = Path(args.toml)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            problem = diag(E108_CANNOT_WRITE_THE, Span.file_only(args.toml), what="policy", reason=exc.strerror or exc)
            return failed("policy-fit", [problem])
    moved = [f for f in fits if f.n]
    payload: dict[str, Any] = {
        "policy": old.ref,
        "new_version": args.version,
        "strength": args.strength,
        "holdout": args.holdout,
        "forecasts": len(mine),
        "classes": [{"class": f.ref_class, "old_p": f.old_p, "new_p": f.new_p, "n": f.n, "k": f.k,
                     "pooled_p": f.pooled_p} for f in fits],
        "toml": None if args.toml else text,
    }
    if fitted.gains_new is not None:
        payload["gains"] = {
            "old": {"corroborate_gain": fitted.gains_old[0], "contradict_gain": fitted.gains_old[1]},
            "new": {"corroborate_gain": fitted.gains_new[0], "contradict_gain": fitted.gains_new[1]},
            "strength": fitted.gain_strength,
        }
    if args.calibration is not None:
        cal = fitted.calibration
        payload["calibration"] = None if cal is None else {
            "method": cal.method, "transitions": cal.n, "ece_before": cal.ece_before, "ece_after": cal.ece_after,
        }
    note = (
        f"fitted {len(moved)} of {plural(len(fits), 'reference class', 'reference classes')} of {old.ref} from "
        f"{plural(trained, 'resolved training transition')}"
        + (f"; wrote {args.toml}" if args.toml else "")
    )
    notes = [note]
    if args.toml:
        notes += _where_found(ctx, Path(args.toml), old.policy.id, args.version)
    if fitted.gains_new is not None:
        notes.append(f"gains: corroborate {fitted.gains_old[0]:g} -> {fitted.gains_new[0]:g}, "
                     f"contradict {fitted.gains_old[1]:g} -> {fitted.gains_new[1]:g}")
    if args.calibration is not None:
        cal = fitted.calibration
        notes.append("calibration: no resolved training transition, no map written" if cal is None else
                     f"calibration ({cal.method}): training ECE {cal.ece_before:.4f} -> {cal.ece_after:.4f}")
    return Outcome("policy-fit", payload, text=None if args.toml else text, notes=notes)


def _nothing_to_fit(ctx: Context, ref: str, forecasts: int, when: dt.date) -> Finding:
    at = Span.file_only(str(ctx.ledger_path()))
    if not forecasts:
        return diag(E746_NO_FORECAST, at, policy=ref)
    return diag(E746_NONE_RESOLVED, at, forecasts=forecasts, policy=ref, as_of=when.isoformat())


def _where_found(ctx: Context, written: Path, policy_id: str, version: str) -> list[str]:
    """A note when `pcsc policy compare` would not find the written policy by its
    reference: it must be `<root>/<id>/<version>.toml` under a policy root."""
    from pcsc.policy.load import PolicyStore

    ref = f"{policy_id}@{version}"
    root = written.parent.parent
    if written.name != f"{version}.toml" or written.parent.name != policy_id:
        return [f"note: `{ref}` is found by its reference only as <folder>/{policy_id}/{version}.toml; "
                f"give the file's path to `pcsc policy compare`"]
    store = PolicyStore(ctx.search_path("policy_path"))
    if store.find(policy_id, version) == written or any(r.resolve() == root.resolve() for r in store.roots()):
        return []
    return [f"note: commands find `{ref}` with --policy-path {root} (or policy_path in pcsc.toml)"]
