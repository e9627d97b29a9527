"""docs/tutorial.md runs as written: every file it writes, every edit and every command,
in order, in a fresh folder; each command's output is what the page shows (the rules:
tests/docrun.py)."""

from __future__ import annotations

from pathlib import Path

from tests import docrun
from tests.conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    steps = docrun.steps(TUTORIAL.read_text(encoding="utf-8"))
    for step in steps:
        docrun.write_step(tmp_path, step)
        if step.command is not None:
            docrun.check_command(step.command, tmp_path)


def test_the_tutorial_covers_the_whole_loop() -> None:
    steps = docrun.steps(TUTORIAL.read_text(encoding="utf-8"))
    commands = [s.command.line.split()[1] for s in steps if s.command is not None]
    for needed in ("check", "compile", "seams", "freeze", "resolve", "evaluate"):
        assert needed in commands, f"the tutorial no longer runs `pcsc {needed}`"
    assert [s.command.exit_code for s in steps if s.command is not None].count(3) >= 1, "it meets a GATE refusal"
    assert sum(s.kind == "edit" for s in steps) >= 2, "it fixes a mistake and repairs a refusal"
    assert all(s.command.shown for s in steps if s.command is not None), "every command shows its output"


def test_matching_rules() -> None:
    assert docrun.matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert docrun.matches(["a", "...", "b"], ["a", "b"])
    assert not docrun.matches(["a", "d"], ["a", "b", "d"])
    assert not docrun.matches(["a"], ["a", "b"])
    assert docrun.normalise("at 2026-11-30T21:36:43Z " + "ab" * 32 + "  \n\n") == ["at <time> <sha256>"]
