"""The `pcsc` entry point: find the command, import only its module, parse its
arguments, run it in a ``Context`` and emit its ``Outcome``.

Exit codes: 0 success (score released), 1 errors in the input, 2 usage error,
3 score refused by GATE; 70 is a bug in pcsc, never caused by input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from pcsc._version import __version__
from pcsc.base.escape import escape_controls
from pcsc.cli.exits import UsageError
from pcsc.cli.registry import COMMANDS, GROUPS, Command, find
from pcsc.diagnostics.exits import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

EPILOG = (
    "exit codes: 0 success, 1 errors in the input, 2 usage error, 3 score refused by GATE, "
    "70 internal error (a bug in pcsc). Run `pcsc COMMAND --help` for a command's options; "
    "documentation: README.md and docs/."
)


class Parser(argparse.ArgumentParser):
    """Usage errors print this parser's usage (the subcommand's, not the top level's)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(escape_controls(f"{self.prog}: error: {message}") + "\n")
        raise SystemExit(EXIT_USAGE)


def top_parser() -> tuple[Parser, dict[str, Parser]]:
    """The `pcsc` parser (commands listed, none imported) and the group parsers."""
    parser = Parser(prog="pcsc", description="PCSC, the proof-carrying strategy compiler.", epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"pcsc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    groups: dict[str, Parser] = {}
    actions: dict[str, Any] = {}
    for command in COMMANDS:
        if len(command.words) == 1:
            sub.add_parser(command.words[0], help=command.help, add_help=False)
            continue
        group, action = command.words
        if group not in groups:
            groups[group] = sub.add_parser(group, help=GROUPS[group])
            actions[group] = groups[group].add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
        actions[group].add_parser(action, help=command.help, add_help=False)
    return parser, groups


def command_parser(command: Command) -> Parser:
    parser = Parser(prog=f"pcsc {command.name}", description=command.help, epilog=EPILOG)
    module = importlib.import_module(command.module)
    module.add_arguments(parser)
    from pcsc.cli.options import global_options

    global_options(parser)
    return parser


def split_command(argv: Sequence[str]) -> tuple[tuple[str, ...], list[str]]:
    """The command's words (one, or a group and an action) and the remaining arguments."""
    words: list[str] = []
    rest: list[str] = []
    for i, arg in enumerate(argv):
        if arg.startswith("-") and arg != "-":
            return tuple(words), [*rest, *argv[i:]]
        if not words or (len(words) == 1 and words[0] in GROUPS):
            words.append(arg)
            continue
        return tuple(words), [*rest, *argv[i:]]
    return tuple(words), rest


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except BrokenPipeError:  # `pcsc compile … | head`
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


def _main(argv: list[str]) -> int:
    words, rest = split_command(argv)
    command = find(words)
    if command is None:
        parser, groups = top_parser()
        if len(words) == 1 and words[0] in groups and not ({"-h", "--help"} & set(rest)):
            groups[words[0]].print_help(sys.stderr)
            return EXIT_USAGE
        parser.parse_args(argv)  # --version, --help, or an error naming the valid commands
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = command_parser(command).parse_args(rest)
    return run(command, args)


def run(command: Command, args: argparse.Namespace) -> int:
    """Run ``command`` with parsed ``args``; every failure becomes output and an exit code.
    With ``--watch``, again after each change of its inputs, until Ctrl-C."""
    if getattr(args, "watch", False):
        if "-" in (getattr(args, "files", None) or []):
            sys.stderr.write(f"pcsc {command.name}: error: --watch reads files, not standard input (`-`)\n")
            return EXIT_USAGE
        from pcsc.cli.watch import watch

        args.watch = False
        roots = [*input_paths(args), *(Path(p) for p in getattr(args, "lib_path", []) or [])]
        return watch(roots, lambda: run(command, args))
    from pcsc.base.config import ConfigError, configs_for_inputs, load_config
    from pcsc.cli.context import Context
    from pcsc.cli.outcome import Outcome, emit

    try:
        here = load_config()
        groups = configs_for_inputs(input_paths(args))
        for cfg in {c.path: c for c in (*(g for g, _ in groups), here)}.values():
            check_requirements(cfg)
            check_selections(cfg)
            if cfg.policy_path:  # imported only then: most runs configure no policy folder
                from pcsc.policy.load import check_configured_policies

                check_configured_policies(cfg)
    except ConfigError as exc:  # in the format asked for, like any other input error
        from pcsc.base.config import Config
        from pcsc.diagnostics import codes
        from pcsc.diagnostics.model import Finding, Span

        ctx = Context(args, Config())
        problem = Finding.of(codes.E407, exc.message, Span.file_only(str(exc.path)))
        failure = Outcome(command.name.replace(" ", "-"), {"ok": False, "error": problem.message},
                          diagnostics=[problem])
        return finish(ctx, emit(ctx, failure))
    if len(groups) > 1 and command.name not in GROUPED:
        from pcsc.base.resources import display_path

        each = "; ".join(f"{display_path(cfg.path) if cfg.path else 'none'} for {given[0]}" for cfg, given in groups)
        sys.stderr.write(escape_controls(
            f"pcsc {command.name}: error: the inputs fall under different configuration files ({each}): "
            f"run pcsc {command.name} once for each project") + "\n")
        return EXIT_USAGE
    ctx = Context(args, groups[0][0], run_config=here, groups=groups)
    module = importlib.import_module(command.module)
    try:
        ctx.docs_url  # noqa: B018 - a bad PCSC_DOCS_URL is a usage error before any work
        outcome: Outcome = module.run(ctx, args)
    except UsageError as exc:
        sys.stderr.write(escape_controls(f"pcsc {command.name}: error: {exc}") + "\n")
        return EXIT_USAGE
    except Exception as exc:
        failure = input_failure(exc, ctx, command)
        if failure is None:
            return internal_error(exc)
        outcome = failure
    try:
        code = emit(ctx, outcome)
    except Exception as exc:  # rendering is pcsc's own code: a failure here is a bug
        return internal_error(exc)
    return finish(ctx, code)


def check_requirements(config: Any) -> None:
    """Each `require_policy` entry of the configuration files is a policy id or
    `id@version`; raises ConfigError naming the file otherwise."""
    from pcsc.base.config import ConfigError
    from pcsc.lang.ir.names import split_requirement

    for path, allowed in config.policy_requirements():
        for entry in allowed:
            if split_requirement(entry) is None:
                raise ConfigError(path, f"`require_policy`: {entry!r} is not a policy id or id@version "
                                  "(lowercase letters, digits, `_` and `-`; e.g. venture@1.0.0)")


#: The commands that judge each group of inputs by its own configuration file in one run
#: (the others take the inputs of one project at a time).
GROUPED = ("check", "gate")
#: The arguments that name a command's inputs (files or folders): their configuration judges them.
INPUT_ARGUMENTS = ("files", "paths", "honest", "revised", "file")


def input_paths(args: argparse.Namespace) -> list[Path]:
    """The files and folders ``args`` names as inputs (standard input, `-`, aside)."""
    found: list[Path] = []
    for name in INPUT_ARGUMENTS:
        value = getattr(args, name, None)
        for item in [value] if isinstance(value, str) else value or []:
            if item != "-":
                found.append(Path(item))
    return found


def check_selections(config: Any) -> None:
    """`select` and `ignore` name warning codes (`W604`, `PCSC-W604`) or their prefixes
    (`W6`); an error's code is refused: an error decides a number or a verdict, and no
    setting hides it."""
    from pcsc.base.config import ConfigError
    from pcsc.diagnostics.suppress import bad_selection

    for key in ("select", "ignore"):
        for entry in getattr(config, key) or ():
            problem = bad_selection(entry)
            if problem is not None:
                raise ConfigError(config.path, f"`{key}`: {problem}")


def input_failure(exc: Exception, ctx: Any, command: Command) -> Any:
    """An exception that reports bad input (a policy, a ledger, …) as diagnostics; None
    for anything else, which is a bug."""
    from pcsc.base.extras import ExtraMissing
    from pcsc.cli.failures import policy_diagnostics
    from pcsc.cli.outcome import Outcome
    from pcsc.diagnostics import codes
    from pcsc.diagnostics.messages import E105_CANNOT_USE, E311_IN_EDIT, diag
    from pcsc.diagnostics.model import Finding, Span
    from pcsc.forecast.ledger import LedgerError
    from pcsc.policy.load import PolicyError
    from pcsc.score.finite import NotFinite

    kind = command.name.replace(" ", "-")
    if isinstance(exc, PolicyError):
        return Outcome(kind, {"ok": False}, diagnostics=[*ctx.diagnostics, *policy_diagnostics(exc)])
    if isinstance(exc, LedgerError):  # a ledger fault (a damaged page, a full disk) the command did not expect
        from pcsc.cli.forecasting import ledger_diagnostic

        problem = ledger_diagnostic(ctx.ledger_path(), str(exc))
        return Outcome(kind, {"ok": False, "error": problem.message}, diagnostics=[*ctx.diagnostics, problem])
    if isinstance(exc, ExtraMissing):  # the same code, exit and message for every extra
        missing = Finding.of(codes.E115, str(exc), Span.file_only(f"pcsc[{exc.extra}]"))
        return Outcome(kind, {"ok": False}, diagnostics=[*ctx.diagnostics, missing])
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        # the system refused a path the input names (a name too long, a folder not searchable)
        where = exc.filename if isinstance(exc.filename, str) else "pcsc"
        problem = diag(E105_CANNOT_USE, Span.file_only(where), path=where, reason=exc.strerror or exc)
        return Outcome(kind, {"ok": False, "error": problem.message}, diagnostics=[*ctx.diagnostics, problem])
    if isinstance(exc, NotFinite):  # an overflow in a derived computation (a splice, a red-team edit)
        span = exc.span or Span.file_only("pcsc")
        overflow = diag(E311_IN_EDIT, span, overflow=exc.message)
        return Outcome(kind, {"ok": False}, diagnostics=[*ctx.diagnostics, overflow])
    return None


def finish(ctx: Any, code: int) -> int:
    """Write the buffered output to standard output or ``-o`` (only when there is some)."""
    text: str = ctx.output()
    target = getattr(ctx.args, "output", None)
    if target and target != "-":
        if not text:  # nothing to write (input errors): the file is neither created nor emptied
            return code
        try:  # open, not pathlib: a path ending in `/` names a folder, never a file
            with open(target, "w", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            from pcsc.diagnostics.messages import E108_CANNOT_WRITE_THE, diag
            from pcsc.diagnostics.model import Span

            why = "-o takes a file, and this names a folder" if target.endswith("/") else exc.strerror or exc
            failed = diag(E108_CANNOT_WRITE_THE, Span.file_only(target), what="output", reason=why)
            # the diagnostics were printed already: this one line, as they print
            sys.stderr.write(escape_controls(f"{target}: error: {failed.message} [{failed.code}]") + "\n")
            return EXIT_INPUT
        return code
    if text:
        sys.stdout.write(fit_terminal(text, ctx.wide))
        sys.stdout.flush()
    return code


def fit_terminal(text: str, wide: bool) -> str:
    """Cut lines to the terminal's width when standard output is a terminal (``--wide``
    keeps them whole), and escape the control characters a file's content (a route, a
    picture) may still hold; pipes and files always get whole lines, as written."""
    if not sys.stdout.isatty():
        return text
    text = escape_controls(text)
    if wide:
        return text
    import shutil

    width = shutil.get_terminal_size((0, 0)).columns
    if width < 20:
        return text
    return "\n".join(line if len(line) <= width else line[: width - 1] + "…" for line in text.split("\n"))


def internal_error(exc: Exception) -> int:
    from pcsc.base.config import hide_credentials

    if os.environ.get("PCSC_DEBUG"):
        raise exc
    sys.stderr.write(
        escape_controls(f"pcsc: internal error: {type(exc).__name__}: {hide_credentials(str(exc))}") + "\n"
        "This is a bug in pcsc, not in your input. Please report it with the command and its inputs;\n"
        "set PCSC_DEBUG=1 to see the traceback.\n"
    )
    return EXIT_INTERNAL
