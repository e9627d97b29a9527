"""The `pcsc` command line. Exit codes: 0 success, 1 errors in the input, 2 usage
error, 3 score refused by GATE (DESIGN §9). Never a traceback for bad input."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from pcsc import __version__, canonical
from pcsc.diagnostics.model import Diagnostic
from pcsc.render.diagnostics import to_json as diagnostic_json
from pcsc.render.diagnostics import to_text
from pcsc.render.sarif import to_sarif

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_REFUSED = 0, 1, 2, 3
EXIT_INTERNAL = 70  # a bug in pcsc (EX_SOFTWARE); never caused by input


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"pcsc: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


# ---------------------------------------------------------------------- output helpers
def _colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def emit_diagnostics(diagnostics: Sequence[Diagnostic], sources: dict[str, str], stream: TextIO) -> None:
    if not diagnostics:
        return
    text = to_text(diagnostics, sources)
    if _colour(stream):
        from rich.console import Console
        from rich.text import Text

        console = Console(file=stream, highlight=False)
        for line in text.splitlines():
            styled = Text(line)
            styled.highlight_words([": error:"], "bold red")
            styled.highlight_words([": warning:"], "bold yellow")
            styled.highlight_regex(r"^\s+help:.*", "cyan")
            console.print(styled, soft_wrap=True)  # never wrap: editors parse these lines
    else:
        stream.write(text + "\n")


def print_json(obj: Any) -> None:
    sys.stdout.write(canonical.dumps(obj, pretty=True) + "\n")


def _session(args: argparse.Namespace) -> Any:
    from pcsc.pipeline import Session
    from pcsc.policy.load import PolicyStore

    return Session(
        lib_path=[Path(p) for p in args.lib_path],
        policies=PolicyStore([Path(p) for p in args.policy_path]),
        coverage_mode=getattr(args, "coverage", None),
    )


def _load(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    from pcsc.diagnostics.model import Span
    from pcsc.pipeline import expand_inputs

    session = _session(args)
    routes = []
    for arg in args.files:
        if Path(arg).is_dir() and not expand_inputs([arg]):
            session.diags.add("PCSC-E106", f"no .route files in the folder {arg}", Span.whole_file(arg),
                              "route files end in .route; folders are searched recursively")
    for path, shown in expand_inputs(args.files):
        routes.extend(session.load_routes(path, shown))
    return session, routes


def _exit_code(session: Any, compiled: Sequence[Any] = ()) -> int:
    """1 for input errors; else 3 when GATE refused any score; else 0."""
    if session.diags.has_errors:
        return EXIT_INPUT
    if any(c.decision.verdict == "suspend-and-ask" for c in compiled):
        return EXIT_REFUSED
    return EXIT_OK


def _report(session: Any, args: argparse.Namespace, json_body: dict[str, Any] | None = None) -> None:
    diags = session.diags.sorted()
    if args.format == "sarif":
        print_json(to_sarif(diags))
    elif args.format == "json":
        body = {
            "pcsc": __version__,
            "inputs": [{"path": p, "sha256": h} for p, h in session.inputs],
            "diagnostics": [diagnostic_json(d) for d in diags],
        }
        print_json({**body, **(json_body or {})})
    else:
        emit_diagnostics(diags, session.sources, sys.stderr)


# ---------------------------------------------------------------------- commands
def cmd_check(args: argparse.Namespace) -> int:
    session, routes = _load(args)
    for route in routes:
        session.bind(route)
    _report(session, args)
    if args.format == "text" and not session.diags.has_errors:
        n = len(routes)
        sys.stderr.write(f"ok: {n} route{'s' if n != 1 else ''} checked\n")
    return _exit_code(session)


def cmd_compile(args: argparse.Namespace) -> int:
    from pcsc.packet import compile_packet
    from pcsc.textout import compile_summary, compile_text

    session, routes = _load(args)
    compiled = session.compile_routes(routes)
    if args.emit == "ir":
        from pcsc.serialize import ir_json

        if args.format == "text":
            emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        print_json(
            {
                "pcsc": __version__,
                "routes": [ir_json(r) for r in routes],
                "diagnostics": [diagnostic_json(d) for d in session.diags.sorted()],
            }
        )
        return _exit_code(session)
    if args.format == "json":
        print_json(compile_packet(compiled, session.diags.sorted(), session.inputs))
    elif args.format == "sarif":
        print_json(to_sarif(session.diags.sorted()))
    else:
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        if compiled:
            sys.stdout.write(compile_text(compiled) + "\n")
        if len(compiled) > 1:
            sys.stdout.write("\n" + compile_summary(compiled, len(session.inputs)) + "\n")
    return _exit_code(session, compiled)


def _compile_all(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    session, routes = _load(args)
    return session, session.compile_routes(routes)


def cmd_gate(args: argparse.Namespace) -> int:
    from pcsc.packet import gate_packet
    from pcsc.textout import gate_text

    session, compiled = _compile_all(args)
    if args.format == "json":
        print_json({**gate_packet(compiled), "diagnostics": [diagnostic_json(d) for d in session.diags.sorted()]})
    elif args.format == "sarif":
        print_json(to_sarif(session.diags.sorted(), refusals=compiled))
    else:
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        if compiled:
            sys.stdout.write(gate_text(compiled) + "\n")
    return _exit_code(session, compiled)


def _choose_route(args: argparse.Namespace, session: Any, routes: list[Any]) -> Any:
    names = [r.name for r in routes]
    if not routes:
        return None
    if args.route is None:
        if len(routes) > 1:
            raise UsageError("the file holds several routes; choose one with --route: " + ", ".join(names))
        return routes[0]
    for r in routes:
        if r.name == args.route:
            return r
    from pcsc.lower.common import suggest

    hint = suggest(args.route, names)
    raise UsageError(f"no route `{args.route}` in {', '.join(args.files)}" + (f"; {hint}" if hint else ""))


def cmd_splice(args: argparse.Namespace) -> int:
    from pcsc.seams.splice import SpliceError, splice_text

    session, routes = _load(args)
    if session.diags.has_errors:
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        return EXIT_INPUT
    route = _choose_route(args, session, routes)
    try:
        text = splice_text(route, args.seam)
    except SpliceError as exc:
        raise UsageError(str(exc)) from None
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_seams(args: argparse.Namespace) -> int:
    from pcsc.packet import seams_packet
    from pcsc.seams.analysis import analyse
    from pcsc.seams.experiment import experiment, summarise
    from pcsc.textout import experiment_text, seams_text, summary_text

    session, compiled = _compile_all(args)
    results = [analyse(c, session) for c in compiled]
    summary = summarise(results)
    exp = experiment(results, session) if args.experiment else None
    if args.format == "json":
        body = seams_packet(results, summary, exp)
        if args.symbolic:
            body["symbolic"] = _derivations(results)
        body["diagnostics"] = [diagnostic_json(d) for d in session.diags.sorted()]
        print_json(body)
    else:
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        if not args.experiment or args.verbose:
            sys.stdout.write(seams_text(results) + "\n")
        if args.symbolic:
            for d in _derivations(results):
                sys.stdout.write(
                    f"\nshape {d['shape']}: spliced fold − original fold, R_k+1 kept as a symbol, factored:\n"
                    f"  derived: {d['difference']}\n  paper:   {d['paper']}\n"
                    f"  derived − paper expands to {d['residual']}; full-chain identity verified: {d['verified']}\n"
                )
        if len(results) > 1 or args.experiment:
            sys.stdout.write("\n" + summary_text(summary) + "\n")
        if exp is not None:
            sys.stdout.write("\n" + experiment_text(exp) + "\n")
    return EXIT_INPUT if session.diags.has_errors else EXIT_OK


def _derivations(results: list[Any]) -> list[dict[str, str]]:
    from pcsc.seams.symbolic import derivation

    shapes = sorted({(len(r.compiled.route.transitions), s.k) for r in results for s in r.seams})
    return [derivation(n, k) for n, k in shapes]


def cmd_explain(args: argparse.Namespace) -> int:
    from pcsc import explain

    session, routes = _load(args)
    try:
        chosen = _choose_route(args, session, routes)
    except UsageError:
        if args.route is None or not session.diags.has_errors:
            raise
        chosen = None  # the named route may be the one that failed to lower: report its errors
    if chosen is None:
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        return EXIT_INPUT
    compiled = session.compile_route(chosen)
    if args.format == "json":
        _report(session, args, {"explain": explain.to_json(compiled) if compiled else None})
    else:
        emit_diagnostics(session.diags.sorted(), session.sources, sys.stderr)
        if compiled:
            sys.stdout.write(explain.to_text(compiled) + "\n")
    return _exit_code(session)


def _policy_arg(args: argparse.Namespace, target: str) -> Any:
    from pcsc.policy.load import PolicyStore

    roots = [Path(p) for p in args.policy_path]
    path = Path(target)
    if target.endswith(".toml") or path.is_file():
        # policies/<id>/<version>.toml: its siblings resolve `extends`
        store = PolicyStore([path.parent.parent, *roots])
        return store.load_path(path)
    return PolicyStore(roots).load_ref(target)


def _policy_errors(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def wrapped(args: argparse.Namespace) -> int:
        from pcsc.policy.load import PolicyError

        try:
            return fn(args)
        except PolicyError as exc:
            if getattr(args, "format", "text") == "json":
                print_json({"pcsc": __version__, "ok": False, "errors": [f"{exc.path}: {m}" for m in exc.messages]})
            for m in exc.messages:
                sys.stderr.write(f"{exc.path}: error: {m} [PCSC-E403]\n")
            return EXIT_INPUT

    return wrapped


@_policy_errors
def cmd_policy_show(args: argparse.Namespace) -> int:
    import tomli_w

    loaded = _policy_arg(args, args.policy)
    if args.format == "json":
        print_json(
            {
                "id": loaded.policy.id,
                "version": loaded.policy.version,
                "sha256": loaded.sha256,
                "path": loaded.path,
                "policy": canonical_policy(loaded.resolved),
            }
        )
    else:
        sys.stdout.write(
            f"# {loaded.ref}  sha256 {loaded.sha256}\n# from {loaded.path}"
            + (" (with what it extends, merged)\n" if loaded.policy.policy.extends else "\n")
        )
        sys.stdout.write(tomli_w.dumps(loaded.resolved))
    return EXIT_OK


@_policy_errors
def cmd_policy_hash(args: argparse.Namespace) -> int:
    loaded = _policy_arg(args, args.policy)
    if args.format == "json":
        print_json({"id": loaded.policy.id, "version": loaded.policy.version, "sha256": loaded.sha256})
    else:
        sys.stdout.write(f"{loaded.sha256}  {loaded.ref}\n")
    return EXIT_OK


def cmd_policy_check(args: argparse.Namespace) -> int:
    from pcsc.policy.load import PolicyError

    failures: list[str] = []
    ok: list[dict[str, str]] = []
    for target in args.policies:
        try:
            loaded = _policy_arg(args, target)
        except PolicyError as exc:
            failures.extend(f"{exc.path}: {m}" for m in exc.messages)
        else:
            ok.append({"policy": loaded.ref, "path": loaded.path, "sha256": loaded.sha256})
    if args.format == "json":
        print_json({"pcsc": __version__, "ok": not failures, "checked": ok, "errors": failures})
    else:
        for f in failures:
            path, _, message = f.partition(": ")
            sys.stderr.write(f"{path}: error: {message} [PCSC-E403]\n")
        for entry in ok:
            sys.stdout.write(f"ok: {entry['policy']} ({entry['path']}) sha256 {entry['sha256']}\n")
    return EXIT_INPUT if failures else EXIT_OK


def canonical_policy(doc: dict[str, Any]) -> dict[str, Any]:
    from pcsc.policy.load import _jsonable

    result: dict[str, Any] = _jsonable(doc)
    return result


# ---------------------------------------------------------------------- the parser
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="pcsc",
        description="PCSC, the proof-carrying strategy compiler.",
        epilog="exit codes: 0 success, 1 errors in the input, 2 usage error, 3 score refused by GATE, "
        "70 internal error (a bug in pcsc). Documentation: README.md and docs/.",
    )
    parser.add_argument("--version", action="version", version=f"pcsc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def common(p: argparse.ArgumentParser, formats: tuple[str, ...] = ("text", "json", "sarif")) -> None:
        p.add_argument("--format", choices=formats, default="text", help="output format (default: text)")
        p.add_argument(
            "--lib-path",
            action="append",
            default=[],
            metavar="DIR",
            help="another folder of .obl libraries (searched after the route's own folder)",
        )
        p.add_argument(
            "--policy-path",
            action="append",
            default=[],
            metavar="DIR",
            help="another folder of policies/<id>/<version>.toml (searched before the shipped ones)",
        )

    p = sub.add_parser("check", help="parse, lower and check; diagnostics only")
    p.add_argument("files", nargs="+", metavar="FILE", help=".route files or folders of them")
    common(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("compile", help="the ranking packet of every route")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--emit",
        choices=("packet", "ir"),
        default="packet",
        help="`ir` prints the lowered IR as JSON instead of the packet",
    )
    common(p)
    p.set_defaults(func=cmd_compile)

    def coverage_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--coverage", choices=("gate", "dock", "off"), default=None,
                       help="override the policy's coverage mode (recorded in the output)")

    coverage_option(sub.choices["compile"])

    p = sub.add_parser("gate", help="the coverage verdict and the undischarged obligations; exit 3 on refusal")
    p.add_argument("files", nargs="+", metavar="FILE")
    common(p)
    coverage_option(p)
    p.set_defaults(func=cmd_gate)

    p = sub.add_parser("seams", help="the deletion identity per seam, symbolically verified; cohort summary")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--symbolic", action="store_true",
                   help="print, per shape, the symbolic difference of the folds next to the paper's formula")
    p.add_argument("--experiment", action="store_true",
                   help="the paper's experiment A and the GATE/DOCK results over the given routes")
    p.add_argument("--verbose", action="store_true", help="with --experiment, print the per-route tables too")
    common(p, ("text", "json"))
    coverage_option(p)
    p.set_defaults(func=cmd_seams)

    p = sub.add_parser("splice", help="the route with seam K deleted, as .route text that compiles")
    p.add_argument("files", nargs=1, metavar="FILE")
    p.add_argument("--route", help="the route (required when the file has several)")
    p.add_argument("--seam", type=int, required=True, metavar="K", help="the interior transition to delete (1..n-2)")
    p.add_argument("-o", "--output", metavar="PATH", help="write the splice here instead of to standard output")
    common(p, ("text",))
    p.set_defaults(func=cmd_splice)

    p = sub.add_parser("explain", help="every number of a route, rule by rule")
    p.add_argument("files", nargs=1, metavar="FILE")
    p.add_argument("--route", help="the route to explain (required when the file has several)")
    common(p, ("text", "json"))
    p.set_defaults(func=cmd_explain)

    pol = sub.add_parser("policy", help="show, hash, check, diff, fit or compare policies")
    psub = pol.add_subparsers(dest="policy_command", metavar="ACTION", parser_class=_Parser)
    for name, func, helptext in (
        ("show", cmd_policy_show, "the policy, merged with what it extends"),
        ("hash", cmd_policy_hash, "the canonical SHA-256 used to pin it"),
    ):
        q = psub.add_parser(name, help=helptext)
        q.add_argument("policy", metavar="POLICY", help="id@version, or a path to a .toml file")
        q.add_argument("--format", choices=("text", "json"), default="text")
        q.add_argument("--policy-path", action="append", default=[], metavar="DIR")
        q.set_defaults(func=func)
    q = psub.add_parser("check", help="validate policies; path-addressed errors")
    q.add_argument("policies", nargs="+", metavar="POLICY")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.add_argument("--policy-path", action="append", default=[], metavar="DIR")
    q.set_defaults(func=cmd_policy_check)
    pol.set_defaults(func=lambda a: _missing(pol))

    from pcsc.forecast.cmd_forecast import register
    from pcsc.graph import register as register_graph
    from pcsc.policy.diff import register as register_policy_diff

    register(sub, psub, common, coverage_option)
    register_graph(sub)
    register_policy_diff(psub, common)
    from pcsc.redteam import register as register_redteam

    register_redteam(sub, common, coverage_option)
    from pcsc.fmt_cmd import register as register_fmt

    register_fmt(sub, common)
    return parser


def _missing(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        result: int = args.func(args)
        return result
    except UsageError as exc:
        sys.stderr.write(f"pcsc: error: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # `pcsc compile … | head`
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug in pcsc, never the user's input: say so plainly
        if os.environ.get("PCSC_DEBUG"):
            raise
        sys.stderr.write(
            f"pcsc: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in pcsc, not in your input. Please report it with the command and its inputs;\n"
            "set PCSC_DEBUG=1 to see the traceback.\n"
        )
        return EXIT_INTERNAL
