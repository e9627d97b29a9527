"""Which warnings a run does not report: `select`/`ignore` in the configuration, and a
`# pcsc: ignore[W604]` comment on the line a warning is about.

Only warnings can be suppressed. An error decides a number or a verdict (a score
withheld, a route refused, a file not read), so neither setting nor comment hides one:
the configuration refuses an error's code, and a comment that names one leaves the
error reported and adds PCSC-W609 saying why. Every suppressed warning is kept as a
`Suppressed` record, which the JSON and SARIF outputs carry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from pcsc.diagnostics.codes import CODES
from pcsc.diagnostics.messages import W609_CANNOT_APPLY, diag
from pcsc.diagnostics.model import Finding, Span

PREFIX = "PCSC-"
#: `# pcsc: ignore[W604]`, `# pcsc: ignore[W604, PCSC-W603]`
COMMENT = re.compile(r"#\s*pcsc:\s*ignore\[([^\]\n]*)\]")
_CODE = re.compile(r"(?:PCSC-)?[EW][0-9]{0,3}")


def full(entry: str) -> str:
    """`W604` as `PCSC-W604` (a prefix such as `W6` as `PCSC-W6`)."""
    entry = entry.strip()
    return entry if entry.startswith(PREFIX) else PREFIX + entry


def matches(entry: str, code: str) -> bool:
    """Whether the code or prefix ``entry`` names ``code``."""
    return code.startswith(full(entry))


def bad_selection(entry: str) -> str | None:
    """What is wrong with ``entry`` as a `select`/`ignore` item; None when it names warnings."""
    if not _CODE.fullmatch(entry.strip()):
        return f"{entry!r} is not a diagnostic code or prefix (such as W604 or W6)"
    named = [c for c in CODES if matches(entry, c)]
    if not named:
        return f"{entry!r} names no diagnostic code (`pcsc rule CODE` shows one; docs/diagnostics.md lists all)"
    errors = [c for c in named if CODES[c].severity == "error"]
    if errors:
        return (f"{entry!r} names {errors[0]}, an error: an error decides a number or a verdict and cannot be "
                "ignored; only warnings (W…) can")
    return None


@attrs.frozen
class Suppressed:
    """A warning not reported, and what suppressed it: a comment on its line, or the
    configuration file's `ignore` or `select`."""

    finding: Finding
    by: str  # "comment" | "ignore" | "select"
    config: str | None = None  # the configuration file, for `ignore` and `select`

    def as_json(self) -> dict[str, object]:
        s = self.finding.span
        return {"code": self.finding.code, "file": s.file, "line": s.line, "column": s.column,
                "message": self.finding.message, "by": self.by, "config": self.config}


@attrs.frozen
class Selection:
    """The configuration's `select` (None: every warning) and `ignore`, and its file."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    config: str | None = None


def comments(sources: Mapping[str, str]) -> dict[tuple[str, int], tuple[tuple[str, int], ...]]:
    """(file, line) -> the codes each `# pcsc: ignore[...]` comment names there, with
    the comment's column."""
    found: dict[tuple[str, int], tuple[tuple[str, int], ...]] = {}
    for file, text in sources.items():
        if "pcsc:" not in text:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            m = COMMENT.search(line)
            if m is not None:
                names = tuple((c.strip(), m.start() + 1) for c in m[1].split(",") if c.strip())
                found[(file, n)] = names
    return found


def apply(
    diagnostics: Sequence[Finding], sources: Mapping[str, str],
    selection: Callable[[str], Selection] = lambda _: Selection(),
) -> tuple[list[Finding], list[Suppressed]]:
    """The diagnostics to report (with a PCSC-W609 for each comment that cannot apply)
    and the warnings suppressed; ``selection`` gives the settings that judge a file."""
    inline = comments(sources)
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    used: set[tuple[str, int, str]] = set()
    chosen_for: dict[str, Selection] = {}
    for d in diagnostics:
        named = inline.get((d.span.file, d.span.line), ())
        hit = next((c for c, _ in named if matches(c, d.code)), None)
        if d.severity == "error":
            kept.append(d)
            if hit is not None:
                used.add((d.span.file, d.span.line, hit))
                kept.append(_cannot(d.span, hit, f"{d.code} is an error: an error decides a number or a verdict "
                                    "and no comment hides it"))
            continue
        chosen = chosen_for.get(d.span.file) or chosen_for.setdefault(d.span.file, selection(d.span.file))
        if hit is not None:
            used.add((d.span.file, d.span.line, hit))
            suppressed.append(Suppressed(d, "comment"))
        elif any(matches(e, d.code) for e in chosen.ignore):
            suppressed.append(Suppressed(d, "ignore", chosen.config))
        elif chosen.select is not None and not any(matches(e, d.code) for e in chosen.select):
            suppressed.append(Suppressed(d, "select", chosen.config))
        else:
            kept.append(d)
    for (file, line), named in sorted(inline.items()):
        for code, column in named:
            if (file, line, code) in used:
                continue
            problem = _unknown(code)
            if problem is not None:
                kept.append(_cannot(Span(file, line, column, line, column + 1), code, problem))
    return kept, suppressed


def _unknown(code: str) -> str | None:
    """Why a comment's ``code`` can never suppress anything; None when it names warnings."""
    if not _CODE.fullmatch(code):
        return f"`{code}` is not a diagnostic code"
    named = [c for c in CODES if matches(code, c)]
    if not named:
        return f"`{code}` names no diagnostic code"
    if all(CODES[c].severity == "error" for c in named):
        return f"`{code}` names errors only: an error decides a number or a verdict and no comment hides it"
    return None


def _cannot(span: Span, code: str, why: str) -> Finding:
    return diag(W609_CANNOT_APPLY, span, code=code, why=why)


def records(suppressed: Iterable[Suppressed]) -> list[dict[str, object]]:
    return [s.as_json() for s in suppressed]
