"""The options commands share, each defined once: every command that reads routes,
chooses a route, writes a report or opens the ledger spells the option the same way."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

from pcsc.base.modes import MODES

MAX_DIAGNOSTICS = 100  # diagnostics printed on standard error by default (docs/diagnostics.md)


def _count(zero: str) -> Callable[[str], int]:
    """An argparse type: a whole number, 0 (meaning ``zero``) or more."""

    def count(value: str) -> int:
        if not (value.isascii() and value.isdigit()) or len(value) > 19:
            raise argparse.ArgumentTypeError(
                f"expected a whole number in ASCII digits (0-9; 0 is {zero}), got {value!r}")
        return int(value)

    return count


def whole_number(value: str) -> int:
    """An argparse type: a whole number in ASCII digits, as written (`int` would also
    take `٤`, `+4`, `4_0` and surrounding spaces)."""
    if not (value.isascii() and value.isdigit()) or len(value) > 19:
        raise argparse.ArgumentTypeError(f"expected a whole number in ASCII digits (0-9), got {value!r}")
    return int(value)


_DECIMAL = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")


def decimal_number(value: str) -> float:
    """An argparse type: a finite decimal in ASCII digits, such as `0.3` or `20` (`float`
    would also take `١.٥`, `nan`, `inf`, `1_0` and surrounding spaces)."""
    if _DECIMAL.fullmatch(value) is None or len(value) > 40:
        raise argparse.ArgumentTypeError(f"expected a decimal number in ASCII digits (such as 0.25), got {value!r}")
    return float(value)


def files(p: argparse.ArgumentParser, *, stdin: bool = False, one: bool = False, libraries: bool = False) -> None:
    kinds = ".route and .obl files" if libraries else ".route files"
    what = ".route file" if one else f"{kinds} or folders of them"
    p.add_argument(
        "files",
        nargs=1 if one else "+",
        metavar="FILE",
        help=what + ("; `-` reads standard input" if stdin else ""),
    )


def formats(p: argparse.ArgumentParser, *choices: str, shown_default: str = "text") -> None:
    """``--format`` with ``choices``; the default comes from the configuration, else text
    (``shown_default``: what the command makes of text, when text is not one of ``choices``)."""
    p.add_argument("--format", choices=choices, default=None, help=f"output format (default: {shown_default})")
    p.set_defaults(_formats=choices)


def search_paths(p: argparse.ArgumentParser, *, libraries: bool = True) -> None:
    if libraries:
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


def coverage(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--coverage",
        choices=MODES,
        default=None,
        help="override the policy's coverage mode (recorded in the output)",
    )


def policy_requirement(value: str) -> str:
    """An argparse type: a policy id (any version) or `id@version`, as a route names it."""
    from pcsc.lang.ir.names import split_requirement

    if split_requirement(value) is None:
        raise argparse.ArgumentTypeError(
            f"expected a policy id or id@version (lowercase letters, digits, `_` and `-`; e.g. venture@1.0.0), "
            f"got {value!r}")
    return value


def require_policy(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--require-policy",
        action="append",
        type=policy_requirement,
        default=None,
        metavar="ID[@VERSION]",
        help="refuse (PCSC-E414, exit 3) a route whose policy is not one of these (repeatable; adds to "
        "`require_policy` of the configuration files, which it cannot loosen)",
    )


def route(p: argparse.ArgumentParser, what: str = "the route", *, default: str | None = None) -> None:
    """``--route``; without ``default`` it is required when the file holds several routes."""
    tail = f"default: {default}" if default else "required when the file holds several"
    p.add_argument("--route", help=f"{what} ({tail})")


def output(p: argparse.ArgumentParser, what: str = "the report") -> None:
    p.add_argument("-o", "--output", metavar="PATH", help=f"write {what} here instead of to standard output")


def ledger(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ledger",
        metavar="PATH",
        help="the ledger (default: configured, else .pcsc/ledger.sqlite); "
        "postgresql://… for a PostgreSQL ledger (needs pcsc[postgres])",
    )


def as_of(p: argparse.ArgumentParser) -> None:
    p.add_argument("--as-of", metavar="DATE", help="the resolution date (YYYY-MM-DD; default: today in UTC)")


def jobs(p: argparse.ArgumentParser) -> None:
    """``--jobs N``: load (and where a command can, analyse) the inputs in N worker
    processes; the output is the same as with one. ``--scheduler ADDRESS`` sends that
    work to a Dask cluster instead."""

    p.add_argument(
        "-j",
        "--jobs",
        type=whole_number,
        default=1,
        metavar="N",
        help="worker processes (default 1; 0: one per CPU); the output does not depend on it",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="run the workers on the Dask cluster at ADDRESS (tcp://HOST:PORT; needs pcsc[dask]) "
        "instead of local processes; not with --jobs",
    )


def global_options(p: argparse.ArgumentParser) -> None:
    """Options every command takes."""
    p.add_argument("-q", "--quiet", action="store_true", help="print no progress and no `ok:` notes")
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour on standard error (auto: a terminal, unless NO_COLOR is set; FORCE_COLOR forces it)",
    )
    p.add_argument("--wide", action="store_true", help="do not cut text tables to the terminal's width")
    p.add_argument(
        "--max-diagnostics",
        type=_count("all"),
        default=MAX_DIAGNOSTICS,
        metavar="N",
        help=f"print at most N diagnostics on standard error, then say how many more there are (default "
        f"{MAX_DIAGNOSTICS}; 0 prints all; JSON and SARIF always carry every one)",
    )
