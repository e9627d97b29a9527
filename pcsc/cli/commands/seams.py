"""`pcsc seams FILE…`: the deletion identity per seam, verified symbolically; over
several routes, the cohort summary; `--experiment`, the paper's experiment A."""

from __future__ import annotations

import argparse
import hashlib
from fractions import Fraction
from pathlib import Path
from typing import Any

from pcsc.cli import options, whatif
from pcsc.cli.commands.redteam import (
    FEEDBACK,
    cannot_write,
    output_folder,
    run_search,
    search_arguments,
    search_settings,
)
from pcsc.cli.context import Context
from pcsc.cli.exits import UsageError
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.exits import EXIT_INPUT


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    p.add_argument(
        "--symbolic",
        action="store_true",
        help="print, per shape, the symbolic difference of the folds next to the paper's formula",
    )
    p.add_argument(
        "--experiment",
        action="store_true",
        help="the paper's experiment A and the GATE/DOCK results over the given routes",
    )
    p.add_argument(
        "--seed",
        type=options.whole_number,
        default=None,
        help="with --experiment, the seed of the Phase 0 random arm (default: fixed; same seed, same bytes)",
    )
    p.add_argument(
        "--value-sweep",
        default=None,
        metavar="M,M,…",
        help="with --experiment, the terminal-value multipliers of the value sweep (default: 1,1.5,2,3)",
    )
    p.add_argument(
        "--artifacts",
        default=None,
        metavar="DIR",
        help="with --experiment, also write DIR/experiment.json (the JSON document, input hashes included) "
        "and DIR/experiment.json.sha256 (sha256sum -c checks it)",
    )
    p.add_argument(
        "--search",
        action="store_true",
        help="with --experiment, also run the seeded search (EXP B, both feedback arms unless --feedback says) "
        "and the co-author conditions (EXP C) and print their tables",
    )
    search_arguments(p, with_flag=False)
    p.add_argument("--verbose", action="store_true", help="with --experiment, print the per-route tables too")
    options.formats(p, "text", "json")
    options.search_paths(p)
    options.jobs(p)
    options.coverage(p)
    options.output(p)
    whatif.add_set_option(p, "(repeatable; with --experiment too)")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis.seams.symbolic import remember_proofs
    from pcsc.compiler.cohort import map_routes

    remember_proofs()  # a shape proved by an earlier run is not proved again (see pcsc.analysis.seams.symbolic)
    from pcsc.analysis.seams.analysis import seams_of
    from pcsc.analysis.seams.experiment import DEFAULT_SEED, DEFAULT_SWEEP, experiment, summarise
    from pcsc.render.packet import seams_packet
    from pcsc.render.text import experiment_text, seams_text, summary_text

    for flag, given in (("--search", args.search), ("--artifacts", args.artifacts is not None)):
        if given and not args.experiment:
            raise UsageError(f"{flag} needs --experiment")
    seed = DEFAULT_SEED if args.seed is None else args.seed
    sweep = DEFAULT_SWEEP if args.value_sweep is None else _multipliers(args.value_sweep)
    if args.features_policy is not None and not args.search:
        raise UsageError("--features-policy needs --search")
    if args.search:
        search_settings(args)  # its usage errors before any work
    if args.artifacts is not None:
        problem = output_folder(Path(args.artifacts), "--artifacts")
        if problem is not None:
            return Outcome("seams", {"ok": False}, diagnostics=[problem])
    overrides, problems = whatif.parse(args)
    if problems:
        return Outcome("seams", {"ok": False}, diagnostics=problems, exit_code=EXIT_INPUT)
    session, routes = whatif.load(ctx, args.files, overrides)
    compiled = session.compile_routes(routes)
    if not compiled and session.diags.has_errors:
        return Outcome("seams", {"ok": False}, diagnostics=session.diags.sorted())  # no route: no table of 0/0 rates
    if ctx.jobs == 1:
        analysed = [seams_of(c, session) for c in ctx.progress(compiled, len(compiled), "seams")]
    else:
        analysed = map_routes(session, ctx.settings(session), _analyse, compiled, ctx.executor())
    results = [r for r in analysed if r is not None]  # the others overflowed (PCSC-E311)
    summary = summarise(results)
    exp = experiment(results, session, seed, sweep) if args.experiment else None
    payload = seams_packet(results, summary, exp)
    search_text = None
    if args.search and exp is not None:
        from pcsc.analysis.search import search_json, tables_text

        found = run_search(ctx, session, compiled, args, conditions=True)
        arms = FEEDBACK[args.feedback]
        payload["experiment"]["search"] = search_json(found, arms, search_settings(args))
        search_text = tables_text(payload["experiment"]["search"])
    whatif.record(payload, None, overrides)
    derivations = _derivations(results) if args.symbolic else None
    if derivations is not None:
        payload["symbolic"] = derivations
    parts: list[str] = []
    if not args.experiment or args.verbose:
        parts.append(seams_text(results))
    parts += ["\n" + _derivation_text(d) for d in derivations or ()]
    if len(results) > 1 or args.experiment:
        parts.append(("\n" if parts else "") + summary_text(summary))  # no blank line first
    if exp is not None:
        parts.append("\n" + experiment_text(exp))
    if search_text is not None:
        parts.append("\n" + search_text)
    diagnostics = session.diags.sorted()
    if args.artifacts is not None:
        try:
            _write_artifacts(ctx, Path(args.artifacts), payload, diagnostics)
        except OSError as exc:
            where = Path(exc.filename) if isinstance(exc.filename, str) else Path(args.artifacts)
            diagnostics = [*diagnostics, cannot_write(where, exc)]
    text = whatif.record(None, "\n".join(parts), overrides)
    return Outcome("seams", payload, text=text, diagnostics=diagnostics)


def _multipliers(text: str) -> tuple[str, ...]:
    out = tuple(m.strip() for m in text.split(",") if m.strip())
    for m in out:
        try:
            ok = Fraction(m) > 0
        except (ValueError, ZeroDivisionError):
            ok = False
        if not ok:
            raise UsageError(f"--value-sweep: `{m}` is not a positive number")
    if not out:
        raise UsageError("--value-sweep needs at least one multiplier")
    return out


def _write_artifacts(ctx: Context, folder: Path, payload: dict[str, Any], diagnostics: list[Any]) -> None:
    """experiment.json: the document `--format json` prints (envelope, input hashes);
    experiment.json.sha256: its digest in sha256sum's format."""
    from pcsc.base import canonical
    from pcsc.diagnostics.model import condense
    from pcsc.render.diagnostics import to_json
    from pcsc.render.envelope import envelope

    document = dict(payload)
    # as `emit` orders and condenses them
    shown = condense(sorted(diagnostics, key=lambda d: (d.span.file, d.span.line, d.span.column)))
    document.setdefault("diagnostics", [to_json(d) for d in shown])
    data = (canonical.dumps(envelope("seams", document, ctx.inputs), pretty=True) + "\n").encode("utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "experiment.json").write_bytes(data)
    (folder / "experiment.json.sha256").write_bytes(f"{hashlib.sha256(data).hexdigest()}  experiment.json\n".encode())


def _analyse(session: Any, compiled: Any) -> Any:
    from pcsc.analysis.seams.analysis import seams_of

    return seams_of(compiled, session)


def _derivations(results: list[Any]) -> list[dict[str, Any]]:
    """One derivation per fold and shape the seams of ``results`` use: the identity of
    the fold each route's policy uses (pcsc.analysis.seams.symbolic, .folds, .graphs)."""
    from pcsc.analysis.seams.folds import fold_derivation
    from pcsc.analysis.seams.graphs import graph_derivation, proof_picks, shape_key
    from pcsc.analysis.seams.payoffs import payoff_derivation
    from pcsc.analysis.seams.symbolic import derivation

    order = {"default": 0, "discounted": 1, "abandonment": 2}
    paid: set[tuple[bool, int, int]] = set()  # chains with payoffs (pcsc.analysis.seams.payoffs)
    chains: set[tuple[int, int, int]] = set()
    graphs: dict[tuple[int, str], dict[str, Any]] = {}
    for r in results:
        route, numbers = r.compiled.route, r.compiled.numbers
        spec = numbers.fold
        fold = "default" if spec.is_default else "abandonment" if spec.abandonment else "discounted"
        names, ds = [t.name for t in numbers.transitions], [t.d for t in numbers.transitions]
        for s in r.seams:
            if numbers.payoffs is not None and route.shape is None:
                paid.add((spec.abandonment, len(names), s.k))
                continue
            if route.shape is None:
                chains.add((order[fold], len(names), s.k))
                continue
            picks, case = proof_picks(route.shape, names, ds, s.k)
            d = graph_derivation(route.shape, s.transition, fold, picks, case, paid=numbers.payoffs is not None)
            graphs.setdefault((order[fold], shape_key(route.shape, s.transition) + repr(sorted(d.items()))), d)
    out = [derivation(n, k) if f == 0 else fold_derivation(n, k, f == 2) for f, n, k in sorted(chains)]
    out += [payoff_derivation(n, k, stop) for stop, n, k in sorted(paid)]
    return out + [d for _, d in sorted(graphs.items(), key=lambda kv: kv[0])]


def _derivation_text(d: dict[str, Any]) -> str:
    """A derivation as `pcsc seams --symbolic` prints it."""
    from pcsc.analysis.seams.folds import CASE_TEXT

    kept = "V" if d["fold"].startswith("graph") else "R_k+1"
    fold = {
        "discounted": ", discounted (d_i kept as symbols)",
        "graph-discounted": ", discounted (d_i kept as symbols)",
        "abandonment": ", the option to stop (premises c_i ≥ 0, 0 ≤ p_i·d_i ≤ 1; d_i kept as symbols)",
        "graph-abandonment": ", the option to stop (premises c_i ≥ 0, 0 ≤ p_i·d_i ≤ 1)",
        "graph-payoffs": ", payoffs along the way (w_i kept as symbols)",
        "graph-discounted-payoffs": ", discounted, payoffs along the way (d_i and w_i kept as symbols)",
        "graph-abandonment-payoffs": ", payoffs and the option to stop (w_i kept as symbols; the prefix resolved "
                                     "at every first stop)",
        "payoffs": ", payoffs along the way (q_i = p_i·d_i and each payoff w_i = v_{i+1} kept as symbols)",
        "payoffs-abandonment": ", payoffs and the option to stop (q_i, c_i, w_i = v_{i+1} kept as symbols; the proof "
                               "also resolves every first stop in the prefix)",
    }.get(d["fold"], "")
    if "cases" not in d:
        name = "paper" if "paper" in d else "formula"
        what = "full-chain identity" if "paper" in d else "identity"
        return (
            f"shape {d['shape']}{fold}: spliced fold − original fold, {kept} kept as a symbol, factored:\n"
            f"  derived: {d['difference']}\n  {name + ':':<8} {d['formula']}\n"
            f"  derived − {name} expands to {d['residual']}; {what} verified: {d['verified']}"
        )
    lines = [f"shape {d['shape']}{fold}: in each case, the max resolved as it says, {kept} kept as a symbol:"]
    for row in d["cases"]:
        lines += [
            f"  {row['case']}" + (f" ({CASE_TEXT[row['case']]})" if row["case"] in CASE_TEXT else "") + ":",
            f"    derived: {row['difference']}",
            f"    formula: {row['formula']}",
            f"    derived − formula expands to {row['residual']}",
        ]
    lines.append(f"  identity verified in every case: {d['verified']}")
    return "\n".join(lines)
