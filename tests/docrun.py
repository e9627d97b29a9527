"""Run the `$ pcsc …` commands a documentation page shows, and compare what they print.

Used by tests/test_tutorial.py and tests/test_readme.py. A page is read as a sequence
of steps, in order:

- a fenced block preceded by a line `<!-- file: PATH -->` writes its text to PATH
  (relative to the folder the commands run in);
- a ```` ```diff ```` block preceded by `<!-- edit: PATH -->` edits PATH: the text of its
  `-` lines, which must occur exactly once, becomes the text of its `+` lines;
- a ```` ```console ```` block holds commands (lines starting with `$ `), each followed by
  the output it shows. A line `<!-- exit: N -->` before the block says that its
  commands exit with N; otherwise they must exit with 0.

Output is compared after normalisation (`normalise`): standard output then standard
error; trailing white space and trailing blank lines dropped; every SHA-256 (64 hex
digits) reads `<sha256>` and every UTC time stamp `<time>`, since they change with the
moment of a freeze; the folder the shipped libraries are installed in reads `…`.
A shown line `...` (however indented) stands for any number of printed lines, none
included; a shown line ending in ` ...` stands for any printed line that starts with
what comes before it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pcsc.base.resources import data_dir
from tests.conftest import ROOT

ELLIPSIS = "..."
BLOCK = re.compile(r"(?:<!-- (file|edit|exit): ([^>]*?) -->\n)?```([a-z]*)\n(.*?)\n```", re.S)
_SHA = re.compile(r"\b[0-9a-f]{64}\b")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\b")


@dataclass(frozen=True)
class Command:
    line: str  # as shown, without the `$ `
    shown: tuple[str, ...]
    exit_code: int


@dataclass(frozen=True)
class Step:
    kind: str  # "file" | "edit" | "command"
    path: str = ""
    text: str = ""
    command: Command | None = None


def commands_in(block: str, exit_code: int) -> list[Command]:
    out: list[Command] = []
    line: str | None = None
    shown: list[str] = []
    for row in block.splitlines():
        if row.startswith("$ "):
            if line is not None:
                out.append(Command(line, tuple(shown), exit_code))
            line, shown = row[2:], []
        elif line is not None:
            shown.append(row)
    if line is not None:
        out.append(Command(line, tuple(shown), exit_code))
    return out


def steps(markdown: str) -> list[Step]:
    out: list[Step] = []
    for marker, arg, lang, body in BLOCK.findall(markdown):
        if marker == "file":
            out.append(Step("file", arg.strip(), body + "\n"))
        elif marker == "edit":
            assert lang == "diff", f"an edit of {arg} must be a diff block"
            out.append(Step("edit", arg.strip(), body))
        elif lang == "console":
            code = int(arg) if marker == "exit" else 0
            out += [Step("command", command=c) for c in commands_in(body, code)]
    return out


def apply_edit(folder: Path, path: str, diff: str) -> None:
    lines = diff.splitlines()
    old = "\n".join(x[1:] for x in lines if x.startswith("-")) + "\n"
    new = "\n".join(x[1:] for x in lines if x.startswith("+")) + "\n"
    target = folder / path
    text = target.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the edit's `-` lines must occur once in {path}:\n{old}"
    target.write_text(text.replace(old, new), encoding="utf-8")


def write_step(folder: Path, step: Step) -> None:
    """Carry out a file or edit step in ``folder``."""
    if step.kind == "file":
        target = folder / step.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step.text, encoding="utf-8")
    elif step.kind == "edit":
        apply_edit(folder, step.path, step.text)


def workspace(page: Path, folder: Path) -> list[Command]:
    """``folder`` as the page leaves it once every file and edit is written, and the
    page's commands in order (not run)."""
    commands: list[Command] = []
    for step in steps(page.read_text(encoding="utf-8")):
        write_step(folder, step)
        if step.command is not None:
            commands.append(step.command)
    return commands


def normalise(text: str, shipped: str = "…/obligations") -> list[str]:
    """The lines of `text` as they are compared; the shipped libraries' folder reads `shipped`."""
    text = text.replace(str(data_dir("obligations")), shipped)
    text = _TIME.sub("<time>", _SHA.sub("<sha256>", text))
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def matches(shown: Sequence[str], printed: Sequence[str]) -> bool:
    """Whether the printed lines are the shown ones, a shown `...` standing for any run."""
    if not shown:
        return not printed
    head, rest = shown[0], shown[1:]
    if head.strip() == ELLIPSIS:
        return any(matches(rest, printed[i:]) for i in range(len(printed) + 1))
    if not printed:
        return False
    if head.endswith(" " + ELLIPSIS):
        same = printed[0].startswith(head[: -len(ELLIPSIS)].rstrip())
    else:
        same = printed[0] == head
    return same and matches(rest, printed[1:])


def run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a shown `pcsc …` command line (no shell) with this checkout's pcsc."""
    argv = shlex.split(line, comments=True)
    assert argv and argv[0] == "pcsc", f"not a pcsc command: {line}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "pcsc", *argv[1:]], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def check_command(command: Command, cwd: Path, shipped: str = "…/obligations", excerpt: bool = False) -> None:
    """Run a command and compare its output with what is shown. With `excerpt`, the
    shown lines may be any run of the printed ones (as if `...` began and ended them)."""
    done = run(command.line, cwd)
    printed = normalise(done.stdout + done.stderr, shipped)
    shown = normalise("\n".join(command.shown), shipped)
    if excerpt:
        shown = [ELLIPSIS, *shown, ELLIPSIS]
    assert done.returncode == command.exit_code, (
        f"`{command.line}` exited {done.returncode}, the page says {command.exit_code}:\n{done.stdout}{done.stderr}"
    )
    assert matches(shown, printed), (
        f"`{command.line}` printed\n" + "\n".join(printed) + "\n\nbut the page shows\n" + "\n".join(shown)
    )
