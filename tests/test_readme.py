"""What the README shows is what the program prints.

Every `$ pcsc …` command in the README's blocks runs, in order, in a fresh folder that
sees the checkout's `examples/` and `policies/` (links), and its shown output is
checked (rules: tests/docrun.py). The README shows excerpts, so the shown lines must be
one run of the printed ones; the shipped libraries' folder reads `obligations`, as it
does when PCSC runs from the checkout. A command shown without output is checked for
its exit code only. The files the README's commands read but does not show are written
by this test (`SETUP`), and the README's plain command lists (```` ```sh ```` blocks,
without `$`) are run where they can be (`LISTED`). The blocks `python -m pcsc.tools.docs`
writes (`<!-- pcsc:begin NAME -->`) are left to tests/test_docblocks.py, which checks
each one whole."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pcsc.tools import docblocks
from tests import docrun
from tests.conftest import ROOT

README = ROOT / "README.md"

#: Exit codes of the README's commands, where not 0.
EXIT = {
    "pcsc check bad.route": 1,
    "pcsc gate spliced.route": 3,
    "pcsc policy check broken.toml": 1,
}

#: Commands the README shows that this test cannot yet confirm, and why.
KNOWN_WRONG: dict[str, str] = {}

_BAD_ROUTE = """\
route bad "the README's `pcsc check` example, written by tests/test_readme.py" {
    as_of   2012-06-01
    policy  "venture@1.0.0"
    uses    venture
    state a { developers 0 }
    state b { developers 500 }
    vision b { tam 1M usd  capture 10%  defensibility 0.5 }
    transition launch: a -> b {
    class "devtools/first-user"
        threshold developers >= 500
    p 0.4
    }
}
"""


def _broken_policy() -> str:
    text = (ROOT / "policies" / "venture" / "1.0.0.toml").read_text(encoding="utf-8")
    text = text.replace('version = "1.0.0"', 'version = "broken"')
    assert "decay = 0.5\n" in text
    return text.replace("decay = 0.5\n", 'decay = "0.5"\n')


#: Files the README's commands read without showing them.
SETUP = {"bad.route": _BAD_ROUTE, "broken.toml": _broken_policy()}

#: Lines of the README's plain command lists (```sh blocks) that are not run, and why.
ILLUSTRATIVE = {
    "python3 -m pip install -c constraints.txt . && pcsc compile examples/":
        "installs PCSC; test_set_up_commands_come_first and tests/test_lock.py check it",
    "python3 -m pip install -q -c constraints.txt -e '.[test]' && python3 -m pytest -q":
        "the test suite itself; .ci/run runs it as written (tests/test_lock.py)",
    "pcsc resolve outcomes.toml": "needs outcomes recorded after the freeze; docs/tutorial.md runs resolve, checked",
    "pcsc evaluate": "needs resolved outcomes; docs/tutorial.md runs evaluate with its output checked",
    "pcsc policy fit --policy venture@1.1.0 --version 1.2.0 -o learned/venture/1.2.0.toml":
        "needs resolved forecasts frozen under venture@1.1.0: tests/test_doc_claims.py runs the pair",
    "pcsc policy compare venture@1.1.0 venture@1.2.0 --policy-path learned":
        "compares the policy `policy fit` wrote: tests/test_doc_claims.py runs the pair",
    "pcsc fmt --check routes/": "`routes/` stands for the reader's own folder of routes",
}


def _readme() -> str:
    return docblocks.without_blocks(README.read_text(encoding="utf-8"))


def _shown_commands() -> list[docrun.Command]:
    out: list[docrun.Command] = []
    for body in re.findall(r"```[a-z]*\n(.*?)\n```", _readme(), re.S):
        for c in docrun.commands_in(body, 0):
            line = c.line.split("  #")[0].strip()
            out.append(docrun.Command(line, c.shown, EXIT.get(line, 0)))
    return out


def _listed_commands() -> list[str]:
    lines = []
    for body in re.findall(r"```sh\n(.*?)\n```", _readme(), re.S):
        lines += [row.split("  #")[0].strip() for row in body.splitlines() if row.strip()]
    return lines


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("readme")
    for name in ("examples", "policies"):
        (where / name).symlink_to(ROOT / name, target_is_directory=True)
    for name, text in SETUP.items():
        (where / name).write_text(text, encoding="utf-8")
    return where


def test_the_readme_shows_commands() -> None:
    commands = [c.line for c in _shown_commands()]
    assert len(commands) >= 9, commands
    assert set(EXIT) <= set(commands) and set(KNOWN_WRONG) <= set(commands)


@pytest.mark.parametrize(
    "index", range(len(_shown_commands())), ids=[c.line for c in _shown_commands()]
)
def test_shown_command(index: int, folder: Path, request: pytest.FixtureRequest) -> None:
    commands = _shown_commands()
    command = commands[index]
    if command.line in KNOWN_WRONG:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_WRONG[command.line], strict=True))
    # a command may read what an earlier one wrote (`pcsc gate spliced.route`)
    for earlier in commands[:index]:
        if " -o " in earlier.line and not (folder / earlier.line.split(" -o ")[1].split()[0]).exists():
            docrun.run(earlier.line, folder)
    if command.shown:
        docrun.check_command(command, folder, shipped="obligations", excerpt=True)
    else:
        done = docrun.run(command.line, folder)
        assert done.returncode == command.exit_code, done.stdout + done.stderr


def test_listed_commands_run(folder: Path) -> None:
    """The README's plain command lists, in order; each exits 0."""
    ran = 0
    for line in _listed_commands():
        if line in ILLUSTRATIVE:
            continue
        done = docrun.run(line, folder)
        assert done.returncode == 0, f"`{line}` exited {done.returncode}:\n{done.stdout}{done.stderr}"
        ran += 1
    assert ran >= 8


def test_every_listed_command_is_run_or_explained() -> None:
    listed = _listed_commands()
    assert set(ILLUSTRATIVE) <= set(listed), "ILLUSTRATIVE names a line the README no longer has"
    assert all(line.startswith("pcsc ") or line in ILLUSTRATIVE for line in listed)


def test_set_up_commands_come_first() -> None:
    text = _readme()
    blocks = re.findall(r"```sh\n(.*?)\n```", text, re.S)
    assert blocks[0] == "python3 -m pip install -c constraints.txt . && pcsc compile examples/"
    assert blocks[1] == "python3 -m pip install -q -c constraints.txt -e '.[test]' && python3 -m pytest -q"


def test_python_example_runs() -> None:
    (code,) = re.findall(r"```python\n(.*?)\n```", _readme(), re.S)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    ok, routes, score = out.split()
    blocks = sum(
        line.startswith("route ") for f in (ROOT / "examples").rglob("*.route")
        for line in f.read_text(encoding="utf-8").splitlines()
    )
    assert ok == "True" and int(routes) == blocks
    assert round(float(score), 4) == 885626.1726


# ---------------------------------------------------------------------- "Where things are"
def _where_things_are() -> list[tuple[list[str], str]]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Where things are"):text.index("\n## ", text.index("## Where things are") + 1)]
    rows = []
    for row in section.splitlines():
        if row.startswith("| `"):
            _, paths, what, _ = row.split("|")
            rows.append((re.findall(r"`([^`]+)`", paths), what))
    return rows


def test_where_things_are_names_only_files_that_exist() -> None:
    named = [p for paths, what in _where_things_are() for p in [*paths, *re.findall(r"`([\w./-]+/)`", what)]]
    assert len(named) > 20
    assert [p for p in named if not (ROOT / p).exists()] == []


def test_where_things_are_names_every_module_of_the_package() -> None:
    """Half the package's modules were missing from the table (the search, the
    configuration, canonical JSON, the schemas, …)."""
    named = {p.rstrip("/") for paths, what in _where_things_are() for p in [*paths, *re.findall(r"`([^`]+)`", what)]}
    modules = {f"pcsc/{p.name}" for p in (ROOT / "pcsc").iterdir()
               if p.name not in {"__init__.py", "__main__.py", "py.typed", "__pycache__"}}
    assert sorted(modules - named) == []


def test_every_benchmark_is_described() -> None:
    """The table sends the reader to benchmarks/README.md for what each script measures."""
    (row,) = [what for paths, what in _where_things_are() if paths == ["benchmarks/"]]
    assert "benchmarks/README.md" in row
    described = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in sorted((ROOT / "benchmarks").glob("bench_*.py")) if f"`{p.name}`" not in described] == []


def test_the_cohorts_routes_and_categories_are_counted() -> None:
    """"30 hand-written routes in 8 categories": one route per file, each route's
    reference classes all of one category (the prefix before `/`)."""
    from pcsc.compiler.session import Session

    session = Session()
    files = sorted((ROOT / "examples" / "cohort").glob("*.route"))
    categories = set()
    for path in files:
        (route,) = session.routes_from_text(path.read_text(encoding="utf-8"), path.name, path.parent)
        (category,) = {t.ref_class.split("/")[0] for t in route.transitions}
        categories.add(category)
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert f"`examples/cohort/`: {len(files)} hand-written routes in {len(categories)} categories" in readme
