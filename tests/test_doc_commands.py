"""What the pages under docs/ show a `$ pcsc …` command print is what it prints.

Every `$ pcsc …` line of a page's blocks runs, page by page and in order, in a fresh
folder that sees the checkout's `examples/` and `policies/` (rules: tests/docrun.py; the
pages show excerpts, so the shown lines must be one run of the printed ones). The
tutorial runs as a whole in tests/test_tutorial.py, and the blocks `python -m pcsc.tools.docs`
writes are checked whole in tests/test_docblocks.py; both are left out here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pcsc.tools import docblocks
from tests import docrun
from tests.conftest import ROOT

#: Pages whose commands another test runs as written (files the page writes first).
SKIP_PAGES = {"tutorial.md", "output.md"}  # tests/test_tutorial.py, tests/test_floods.py

#: Exit codes of the pages' commands, where not 0 and not said on the page (`<!-- exit: N -->`).
EXIT = {("cli.md", "pcsc check spliced.route"): 1}

#: Commands a page shows that this test does not run, and why.
NOT_RUN = {
    ("cli.md", "pcsc config"): "shows the settings of a reader's own project (/work/project/pcsc.toml): "
                               "tests/test_doc_claims.py makes that project and compares what it prints",
    ("cli.md", "pcsc cache info"): "shows a reader's own cache (folder and counts); its lines' shape is checked "
                                   "against the program in tests/test_ircache_bound.py",
    ("cli.md", "pcsc cache clear"): "likewise (tests/test_ircache_bound.py)",
    ("policy-tests.md", "pcsc test policies/"): "runs after the page's edit of a shipped example: "
                                                "tests/test_doc_claims.py makes the edit in a copy and runs it",
}


def _commands() -> list[tuple[str, docrun.Command]]:
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name in SKIP_PAGES:
            continue
        text = docblocks.without_blocks(page.read_text(encoding="utf-8"))
        for marker, arg, _, body in docrun.BLOCK.findall(text):
            exit_code = int(arg) if marker == "exit" else 0  # a `<!-- exit: N -->` line before the block
            out += [(page.name, docrun.Command(c.line, c.shown, EXIT.get((page.name, c.line), exit_code)))
                    for c in docrun.commands_in(body, 0)]
    return out


COMMANDS = _commands()
RUN = [(page, c) for page, c in COMMANDS if (page, c.line) not in NOT_RUN]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("docs")
    for name in ("examples", "policies"):
        (where / name).symlink_to(ROOT / name, target_is_directory=True)
    return where


def test_the_pages_show_commands() -> None:
    assert len(COMMANDS) >= 4
    shown = {(page, c.line) for page, c in COMMANDS}
    assert set(NOT_RUN) | set(EXIT) <= shown, "NOT_RUN or EXIT names a command no page shows"


@pytest.mark.parametrize(("page", "command"), RUN, ids=[f"{p}: {c.line}" for p, c in RUN])
def test_a_pages_command_prints_what_it_shows(page: str, command: docrun.Command, folder: Path) -> None:
    if command.shown:
        docrun.check_command(command, folder, shipped="obligations", excerpt=True)
    else:
        done = docrun.run(command.line, folder)
        assert done.returncode == command.exit_code, done.stdout + done.stderr
