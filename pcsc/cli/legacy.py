"""The commands not yet moved into ``pcsc.cli.commands``, with the helpers they import.
Transitional: this module goes when the last of them moves."""

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

    def coverage_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--coverage", choices=("gate", "dock", "off"), default=None,
                       help="override the policy's coverage mode (recorded in the output)")

    pol = sub.add_parser("policy", help="diff policies")
    psub = pol.add_subparsers(dest="policy_command", metavar="ACTION", parser_class=_Parser)
    pol.set_defaults(func=lambda a: _missing(pol))

    from pcsc.graph import register as register_graph
    from pcsc.policy.diff import register as register_policy_diff

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
