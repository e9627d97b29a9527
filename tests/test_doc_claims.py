"""Claims the docs make about what a command prints, accepts or exits with, each checked
against the program (issue 17: the docs had drifted from what the program does)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import ROOT, SPEC_ROUTE, run_cli

DOCS = ROOT / "docs"


def paragraph(page: Path, needle: str) -> str:
    """The paragraph (or list item) of ``page`` that holds ``needle``, its lines joined."""
    text = page.read_text(encoding="utf-8")
    at = text.index(needle)
    start = max(text.rfind("\n\n", 0, at), text.rfind("\n- ", 0, at))
    end = text.find("\n\n", at)
    return " ".join(text[start: end if end >= 0 else None].split())


# ---------------------------------------------------------------------- a tier the policy does not list
TIER_CLAIMS = [
    ("language.md", "An item's effective weight"),
    ("formulas.md", "**Effective weight**"),
    ("policy-reference.md", "`evidence.tier_weight.<tier>`"),
]


@pytest.mark.parametrize(("page", "needle"), TIER_CLAIMS, ids=[p for p, _ in TIER_CLAIMS])
def test_the_docs_say_an_unlisted_tier_is_refused(page: str, needle: str) -> None:
    said = paragraph(DOCS / page, needle)
    assert "PCSC-E307" in said and "weighs 0" not in said, said


def test_an_unlisted_tier_is_refused_as_the_docs_say(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    route = tmp_path / "r.route"
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    route.write_text(text.replace("tier      2", "tier      4", 1), encoding="utf-8")
    for command in ("check", "compile"):
        code, out, err = run_cli(capsys, command, str(route), "--format", "json")
        assert code == 1, (command, out, err)
        found = [d for d in json.loads(out)["diagnostics"] if d["code"] == "PCSC-E307"]
        assert found and "gives no weight" in found[0]["message"], out


def test_the_checker_refuses_a_certificate_that_weighs_an_unlisted_tier_0() -> None:
    """The compiler never certifies such an item (it refuses it), so a certificate that
    cites a tier weight the policy lacks is forged, even at 0."""
    from pcsc.certify.check import Mismatch
    from pcsc.certify.check.recompute import RouteCheck

    check = RouteCheck({"route": "r", "steps": []}, {"evidence": {"tier_weight": {"2": 0.8}}})
    check.policy_value(["evidence", "tier_weight", "2"], Fraction(0.8), "w")
    with pytest.raises(Mismatch, match=r"evidence\.tier_weight\.4 is None"):
        check.policy_value(["evidence", "tier_weight", "4"], Fraction(0), "w")
    # an absent discount rate still reads as the paper's fold
    check.policy_value(["fold", "discount"], Fraction(0), "w")
    with pytest.raises(Mismatch):
        check.policy_value(["fold", "discount"], Fraction(1, 10), "w")


def test_no_page_says_an_unlisted_tier_weighs_0() -> None:
    pages = [*DOCS.glob("*.md"), ROOT / "README.md"]
    assert not [p.name for p in pages if re.search(r"tier[^.]*weighs 0", p.read_text(encoding="utf-8"))]


# ---------------------------------------------------------------------- graph.md: how the SVG is laid out
def _boxes(svg: str) -> list[tuple[str, float, float, float]]:
    """Each state box of an SVG picture, in order: (state, x, y, width)."""
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    out = []
    for group in ET.fromstring(svg).iter(f"{ns}g"):
        items = list(group)
        for i, el in enumerate(items):
            if el.tag == f"{ns}rect":
                name = items[i + 1].text or ""
                out.append((name, float(el.get("x", 0)), float(el.get("y", 0)), float(el.get("width", 0))))
    return out


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "graphs").glob("*.route")), ids=lambda p: p.stem)
def test_graph_routes_are_drawn_in_columns_and_lanes_as_graph_md_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, path: Path
) -> None:
    from pcsc.compiler.session import Session

    said = paragraph(DOCS / "graph.md", "is drawn in columns and lanes")
    assert "longest" in said and "topmost lane" in said and "same width" in said
    monkeypatch.chdir(ROOT)
    code, svg, err = run_cli(capsys, "graph", str(path.relative_to(ROOT)), "--format", "svg")
    assert code == 0, err
    (route,) = Session().routes_from_text(path.read_text(encoding="utf-8"), path.name, path.parent)
    states = [s.name for s in route.states]
    edges = [(t.source, t.target) for t in route.transitions]
    boxes = _boxes(svg)
    assert [b[0] for b in boxes] == states
    assert svg.count("<rect ") == 1 + len(states) and svg.count("<path ") == len(edges)
    assert len({b[3] for b in boxes}) == 1  # every box the same width
    xs = sorted({b[1] for b in boxes})
    ys = sorted({b[2] for b in boxes})
    assert len(ys) > 1  # lanes, not one row
    column = {n: xs.index(x) for n, x, _, _ in boxes}
    lane = {n: ys.index(y) for n, _, y, _ in boxes}

    def longest(state: str) -> int:
        into = [s for s, t in edges if t == state]
        return max((longest(s) + 1 for s in into), default=0)

    assert column == {n: longest(n) for n in states}
    for n in states[1:]:
        into = [s for s, t in edges if t == n]
        if len(into) > 1:  # a join: the topmost lane of its branches, unless taken
            assert lane[n] >= min(lane[s] for s in into)
        else:  # a branch: its fork's lane plus its place among the fork's transitions, or lower
            fork = into[0]
            place = [t for s, t in edges if s == fork].index(n)
            assert lane[n] >= lane[fork] + place
        taken = {lane[m] for m in states if m != n and column[m] == column[n]}
        assert lane[n] not in taken


def test_a_chain_is_one_row(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, svg, _ = run_cli(capsys, "graph", "examples/devtools_api.route", "--format", "svg")
    boxes = _boxes(svg)
    assert code == 0 and len({b[2] for b in boxes}) == 1
    assert [b[1] for b in boxes] == sorted(b[1] for b in boxes)
    assert svg.count("<path ") == len(boxes) - 1


# ---------------------------------------------------------------------- docs/cli.md: JSON documents, the IR cache
def _block_after(page: Path, marker: str) -> str:
    text = page.read_text(encoding="utf-8")
    at = text.index(marker)
    start = text.index("```", at)
    start = text.index("\n", start) + 1
    return text[start: text.index("\n```", start)]


def test_the_json_envelope_is_shown_as_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import docrun

    monkeypatch.chdir(ROOT)
    block = _block_after(DOCS / "cli.md", "prints the envelope alone:")
    (command,) = docrun.commands_in(block, 0)
    docrun.check_command(command, ROOT)
    said = paragraph(DOCS / "cli.md", "Every `--format json` document is canonical JSON")
    assert "starts with" not in said and "sorted" in said
    readme = paragraph(ROOT / "README.md", "every JSON document")
    assert "starts with" not in readme


def test_the_cache_info_example_has_the_programs_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "xdg"
    base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    monkeypatch.chdir(ROOT)
    assert run_cli(capsys, "check", "-q", "examples/cohort")[0] == 0
    printed = run_cli(capsys, "cache", "info")[1] + "$ pcsc cache clear\n" + run_cli(capsys, "cache", "clear")[1]
    block = _block_after(DOCS / "cli.md", "(documents `cache-info` and `cache-clear`")

    def shape(text: str, home: str) -> list[str]:
        text = re.sub(r"\d[\d,.]* (files?|bytes|KB|MB)", "N UNIT", text.replace(home, "HOME"))
        lines = [line for line in text.splitlines() if not line.startswith("$ pcsc cache info")]
        return [re.sub(r"\d[\d,.]*", "N", line) for line in lines]

    assert shape(block, "/home/me/.cache") == shape(printed, str(base))
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## The IR cache" in page and "`pcsc cache clear`" in readme
    assert "docs/cli.md" in paragraph(ROOT / "README.md", "`pcsc cache clear`")


# ---------------------------------------------------------------------- install paths, releases, the docs' address
def test_the_install_paths_shown_exist() -> None:
    """docs/pipelines.md installed `pcsc` from a package index and pinned `rev: v0.1.0`;
    neither exists."""
    from pcsc._version import __version__

    for page in (DOCS / "pipelines.md", DOCS / "examples" / "code-scanning.yml"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"pip install (-q )?['\"]?pcsc\b(?!\s*@)", text), page.name
        for rev in re.findall(r"(?:rev: |pcsc@)(v[\w.]+)", text):
            assert rev == "vX.Y.Z", (page.name, rev)  # a placeholder for a tag the release checklist makes
    releases = paragraph(DOCS / "pipelines.md", "A release is a version number")
    assert "CHANGELOG.md" in (DOCS / "pipelines.md").read_text(encoding="utf-8") and releases
    assert f"pcsc-{__version__}-py3-none-any.whl" in (DOCS / "pipelines.md").read_text(encoding="utf-8")


def test_the_changelog_names_the_version_the_sources_carry() -> None:
    from pcsc._version import __version__

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\S+)", text, re.M)
    assert headings and headings[0] == __version__


def test_the_config_example_is_what_pcsc_config_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "obligations").mkdir(parents=True)
    (project / "pcsc.toml").write_text('lib_path = ["obligations"]\ncoverage = "gate"\n', encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.delenv("PCSC_DOCS_URL", raising=False)
    code, out, _ = run_cli(capsys, "config")
    shown = _block_after(DOCS / "cli.md", "each came from:").removeprefix("$ pcsc config\n")
    assert code == 0 and out.rstrip("\n").replace(str(project), "/work/project") == shown


def test_the_config_files_example_is_a_configuration_with_every_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/cli.md's `pcsc.toml`, written as it is: accepted, and it sets every setting
    `pcsc config` lists, each from the file, with the documented value."""
    project = tmp_path / "project"
    for folder in ("obligations", "policies", "forecasts"):
        (project / folder).mkdir(parents=True)
    text = _block_after(DOCS / "cli.md", "Paths in it are relative to the file's own folder.")
    assert text.startswith("# pcsc.toml")
    (project / "pcsc.toml").write_text(text + "\n", encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.delenv("PCSC_DOCS_URL", raising=False)
    code, out, err = run_cli(capsys, "config")  # JSON: the example's `format`
    assert code == 0, err
    settings = {s["name"]: s for s in json.loads(out)["settings"]}
    written = re.findall(r"^(\w+)\s*=", text, re.M)
    assert sorted(written) == sorted(settings), "the example sets every setting, and only those"
    assert {s["from"] for s in settings.values()} == {str(project / "pcsc.toml")}
    assert settings["lib_path"]["value"] == [str(project / "obligations")]  # relative to the file's folder
    assert settings["ledger"]["value"] == str(project / "forecasts" / "ledger.sqlite")
    assert settings["docs_url"]["value"] == "https://docs.example/pcsc/"


# ---------------------------------------------------------------------- the README's learning loop
def _readme_line(start: str) -> str:
    (line,) = [raw.split("  #")[0].strip() for raw in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
               if raw.startswith(start)]
    return line


def _pilot(folder: Path, routes: int = 8) -> None:
    """Routes pinned to venture@1.1.0 frozen retrospectively (as_of 2012), then outcomes
    of 2012–2015 recorded after the freeze: resolved forecasts as of today."""
    import subprocess
    import sys

    text = SPEC_ROUTE.read_text(encoding="utf-8").replace('"venture@1.0.0"', '"venture@1.1.0"')
    blocks = []
    for i in range(routes):
        (folder / f"r{i}.route").write_text(text.replace("route devtools_api", f"route api_{i}"), encoding="utf-8")
        developers = 640 if i % 2 == 0 else 40
        blocks.append(f'[[observation]]\nroute = "api_{i}"\ndate = 2012-07-01\ndevelopers = {developers}\n')
        blocks.append(f'[[label]]\nroute = "api_{i}"\ndate = 2015-06-01\noutcome = "{"+-"[i % 3 == 0]}"\n')
    (folder / "outcomes.toml").write_text("\n".join(blocks), encoding="utf-8")
    for argv in (["freeze", "--retrospective", "-q", *(f"r{i}.route" for i in range(routes))],
                 ["resolve", "-q", "outcomes.toml"]):
        done = subprocess.run([sys.executable, "-m", "pcsc", *argv], capture_output=True, text=True, cwd=folder)
        assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pilot")
    _pilot(folder)
    return folder


def test_the_readme_learning_loop_runs_as_written(pilot: Path) -> None:
    """`policy fit … -o policies/venture/1.2.0.toml`, then `policy compare venture@1.1.0
    venture@1.2.0`, failed with E403: compare did not look where fit wrote."""
    from tests import docrun

    tmp_path = pilot
    fit, compare = _readme_line("pcsc policy fit "), _readme_line("pcsc policy compare ")
    done = docrun.run(fit, tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "resolved training transitions" in out and (tmp_path / "learned" / "venture" / "1.2.0.toml").is_file()
    assert "--policy-path learned" in out  # fit says how other commands find what it wrote
    done = docrun.run(compare, tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode in (0, 3), out  # 3: not promoted, which the README's comment allows
    assert "PCSC-E403" not in out and out.startswith("venture@1.1.0 vs venture@1.2.0 on ")
    # without the flag the README passes, compare does not find it, and says where it looked
    done = docrun.run(compare.replace(" --policy-path learned", ""), tmp_path)
    assert done.returncode == 1 and "PCSC-E403" in done.stderr


def test_fit_with_nothing_resolved_refuses_and_writes_nothing(
    pilot: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It wrote a policy fitted to 0 resolved transitions and exited 0."""
    monkeypatch.chdir(pilot)
    target = pilot / "refused" / "venture" / "1.2.0.toml"
    code, out, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.1.0",
                             "--version", "1.2.0", "-o", str(target),
                             "--as-of", "2012-06-02", "--format", "json")
    assert code == 1 and not target.exists(), err
    doc = json.loads(out)
    (d,) = doc["diagnostics"]
    assert d["code"] == "PCSC-E746" and d["file"].endswith("ledger.sqlite") and "no policy written" in d["message"]
    code, _, err = run_cli(capsys, "policy", "fit", "--policy", "venture@1.0.0", "--version", "1.2.0")
    assert code == 1 and "no forecast in the ledger was frozen under venture@1.0.0" in err


def test_no_page_installs_pcsc_from_a_package_index() -> None:
    """PCSC is on no package index: `pip install 'pcsc[lsp]'` would fetch whatever
    package of that name an index has, or nothing."""
    pages = [*DOCS.glob("*.md"), ROOT / "README.md", DOCS / "examples" / "code-scanning.yml"]
    found = [f"{p.name}: {m.group(0)}" for p in pages
             for m in re.finditer(r"pip install (-q )?(-U )?['\"]?pcsc(\[[\w,]+\])?(?!\S*\s*@)['\"]?", p.read_text())]
    assert found == []


# ---------------------------------------------------------------------- docs/policy-tests.md
def test_the_policy_tests_failure_is_what_pcsc_test_prints_after_the_edit(tmp_path: Path) -> None:
    """The page showed a failure no change could give (`expected binding launch`, a
    state's name, on a route without such a transition): now it shows the edit, and
    this runs it on copies of the shipped examples and policies."""
    import shutil

    from tests import docrun

    for name in ("examples", "policies"):
        shutil.copytree(ROOT / name, tmp_path / name)
    page = DOCS / "policy-tests.md"
    (command,) = docrun.workspace(page, tmp_path)  # the page's edit, applied to the copy
    assert command.line == "pcsc test policies/" and command.exit_code == 1
    docrun.check_command(command, tmp_path, shipped="obligations")
    said = paragraph(page, "After a change that moves a binding step")
    assert "0.7 × 11.9M" in said and "0.1 × 73.3M" in said
    out = docrun.run("pcsc compile examples/feature_flags.route --format json", tmp_path).stdout
    (self_serve,) = [r for r in json.loads(out)["routes"] if r["route"] == "self_serve"]
    moved = {t["name"]: t for t in self_serve["transitions"]}
    assert f"{round(moved['team_plan']['U'], 4):g} × {moved['team_plan']['D'] / 1e6:.1f}M" == "0.7 × 11.9M"
    assert f"{round(moved['platform_play']['U'], 4):g} × {moved['platform_play']['D'] / 1e6:.1f}M" == "0.1 × 73.3M"


def test_the_coverage_at_check_example_is_what_check_prints(tmp_path: Path) -> None:
    from tests import docrun

    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    block = _block_after(DOCS / "cli.md", "the `require` lines that failed, with file and line:")
    splice, check = docrun.commands_in(block, 0)
    assert docrun.run(splice.line, tmp_path).returncode == 0
    docrun.check_command(docrun.Command(check.line, check.shown, 1), tmp_path, shipped="obligations")


def test_policy_diff_of_the_shipped_versions_is_as_policy_md_says(
    capsys: pytest.CaptureFixture[str]
) -> None:
    said = paragraph(DOCS / "policy.md", "lists the reference classes")
    assert "nothing changed or removed" in said
    code, out, _ = run_cli(capsys, "policy", "diff", "venture@1.0.0", "venture@1.1.0", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["changed"] == doc["summary"]["removed"] == 0
    paths = [c["path"] for c in doc["changes"]]
    assert {c["kind"] for c in doc["changes"]} == {"added"}
    assert any(p.startswith("priors.") for p in paths) and any(p.startswith("floors.delta") for p in paths)
    assert "libraries.startup" in paths


def test_the_index_links_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert [p.name for p in sorted(DOCS.glob("*.md")) if p.name != "index.md" and f"]({p.name}" not in index] == []


# ---------------------------------------------------------------------- the papers' figures in prose
def test_the_experiments_pages_paper_figures_are_the_programs() -> None:
    """Each figure of the paper the page states in prose is `PAPER`'s (the table's
    paper column), with its unit and denominator."""
    from pcsc.analysis.seams.experiment import PAPER

    page = " ".join((DOCS / "experiments.md").read_text(encoding="utf-8").split())

    def fig(name: str) -> str:
        return f"{PAPER[name].k}/{PAPER[name].n}"

    routes = [fig(f"phase0_{m}") for m in ("relative_wins", "relative_wins_dock", "fundability_flips",
                                            "fundability_flips_dock")]
    splices = [fig(f"phase0_sign_flips_{m}") for m in ("zero_drift", "with_drift")]
    assert {PAPER[f"phase0_{m}"].unit for m in ("relative_wins", "fundability_flips_dock")} == {"routes"}
    assert (f"The paper's Phase 0 figures ({', '.join(routes[:3])} and {routes[3]} routes; {' and '.join(splices)} "
            "splices for the drift reconciliation)") in page
    seeded, edges = PAPER["ladder_seeded_seam_detections"], PAPER["ladder_honest_edge_flags"]
    assert f"The paper counts its ladder in {seeded.n} {seeded.unit} and {edges.n} {edges.unit}" in page
    assert seeded.k is edges.k is None and "Its detection and flag counts are not in the material" in page


def test_the_readmes_table_2_counts_are_the_tables() -> None:
    import csv

    with (ROOT / "examples" / "routecast_table_a1.csv").open(encoding="utf-8", newline="") as f:
        buckets = [row["outcome_bucket"] for row in csv.DictReader(f)]
    positive, negative = sum(b in ("S+", "+") for b in buckets), buckets.count("-")
    said = paragraph(ROOT / "README.md", "This is the grading of the RouteCast paper's Table 2")
    assert f"(its {positive + negative} cases: {positive} positive, {negative} negative)" in said
    assert "not in the material this project ships" in said
