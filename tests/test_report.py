"""`pcsc report`: one self-contained HTML page, checked for structure with html.parser
and opened in headless Chromium (no console errors; a screenshot)."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import pcsc.cli
from tests.conftest import ROOT, SPEC_ROUTE

Run = Callable[..., tuple[int, str, str]]
SCREENSHOT = ROOT / "docs" / "report.png"
SVG_NS_URL = "http://www.w3.org/2000/svg"


# ---------------------------------------------------------------------- a small DOM
class Element:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Element | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Element] = []
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return " ".join("".join(self._texts()).split())

    def _texts(self) -> Iterator[str]:
        yield from self.parts
        for child in self.children:
            yield " "
            yield from child._texts()

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def iter(self) -> Iterator[Element]:
        for child in self.children:
            yield child
            yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Element]:
        return [e for e in self.iter() if (tag is None or e.tag == tag) and (cls is None or cls in e.classes)]

    def find(self, tag: str | None = None, cls: str | None = None) -> Element:
        found = self.find_all(tag, cls)
        assert found, f"no <{tag} class={cls}>"
        return found[0]


VOID = {"meta", "link", "br", "img", "input", "hr", "path", "rect", "line", "polygon"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.current = self.root
        self.attributes: list[tuple[str, str, str]] = []  # (tag, name, value) of every attribute

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.attributes += [(tag, k, v) for k, v in values.items()]
        element = Element(tag, values, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.attributes += [(tag, k, v) for k, v in values.items()]
        self.current.children.append(Element(tag, values, self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Element | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.parts.append(data)


def parse(page: str) -> _Parser:
    p = _Parser()
    p.feed(page)
    p.close()
    assert p.current is p.root, f"unclosed <{p.current.tag}>"
    return p


def sections(doc: Element) -> list[Element]:
    return doc.find_all("section", "route")


def headings(section: Element) -> list[str]:
    return [h.text for h in section.find_all("h3")]


# ---------------------------------------------------------------------- fixtures
@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """`pcsc …` in process, from the repository root."""
    monkeypatch.chdir(ROOT)

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


def report(run: Run, out: Path, *argv: str) -> str:
    code, _, err = run("report", *argv, "-o", str(out))
    assert code == 0, err
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out like the repository: the reference route, its splice at seam 1
    (`launch` now claims every change of `monetize`) and the shipped library, so every
    path in the page reads as it would in a checkout."""
    base = tmp_path_factory.mktemp("report")
    (base / "examples").mkdir()
    shutil.copy(SPEC_ROUTE, base / "examples" / SPEC_ROUTE.name)
    (base / "obligations").mkdir()
    shutil.copy(ROOT / "obligations" / "venture.obl", base / "obligations" / "venture.obl")
    code = pcsc.cli.main(["splice", str(SPEC_ROUTE), "--seam", "1", "-q", "-o", str(base / "spliced.route")])
    assert code == 0
    return base


def report_in(workdir: Path, out: Path, *files: str) -> str:
    """`pcsc report` run from ``workdir`` on ``files`` (the shipped library on --lib-path)."""
    here = os.getcwd()
    os.chdir(workdir)
    try:
        code = pcsc.cli.main(["report", "-q", "--lib-path", "obligations", *files, "-o", str(out)])
    finally:
        os.chdir(here)
    assert code == 0
    return out.read_text(encoding="utf-8")


# ---------------------------------------------------------------------- the reference route
def test_reference_route_has_every_section(run: Run, tmp_path: Path) -> None:
    page = report(run, tmp_path / "r.html", "examples/devtools_api.route")
    doc = parse(page).root
    assert page.startswith("<!DOCTYPE html>\n")
    assert doc.find_all(cls="ranking") == [] and "Ranking" not in page  # one route: no ranking
    (route,) = sections(doc)
    assert route.find("h2").text == "devtools_api — Developer API for SMS"
    assert headings(route) == [
        "The route",
        "The staged fold",
        "Coverage: transition × field",
        "Undischarged obligations",
        "Seams: deleting an interior step",
    ]
    facts = {d.find("dt").text: d.find("dd").text for d in route.find("dl", "facts").children}
    assert facts["verdict"].startswith("released")
    assert facts["score (R₀)"] == "885,626.17 USD"
    assert facts["policy"].startswith("venture@1.0.0 7aed55f36c1b")
    # the route picture: pcsc.render.graph's SVG, inline
    picture = route.find("div", "picture")
    assert picture.find("svg").attrs["xmlns"] == SVG_NS_URL
    assert len(picture.find_all("g")) == 1 and picture.find("g").attrs["id"] == "route-r0"
    # the waterfall: a cost bar per stage, V, then the score
    waterfall = route.find("svg", "waterfall")
    bars = waterfall.find_all("g", "bar")
    assert [b.classes[1] for b in bars] == ["cost", "cost", "cost", "value", "total"]
    assert [b.find("text").text for b in bars] == ["launch", "monetize", "expand", "value V", "score R₀"]
    assert bars[0].find_all("text")[-1].text == "−99,000.00"
    assert bars[-1].find_all("text")[-1].text == "+885,626.17"
    stages = route.find("table", "stages").find("tbody").find_all("tr")
    assert [r.find("td").text for r in stages] == ["launch", "monetize", "expand"]
    assert stages[0].find_all("td")[-1].text == "885,626.17"  # R_0
    # the coverage matrix: one row per transition, one column per field
    matrix = route.find("table", "matrix")
    columns = [th.text for th in matrix.find("thead").find_all("th")]
    assert columns == ["transition", "developers", "paying_teams", "arr"]
    rows = matrix.find("tbody").find_all("tr")
    assert [r.find("td").text for r in rows] == ["launch", "monetize", "expand"]
    assert [c.classes[0] for c in rows[0].find_all("td")[1:]] == ["covered", "unchanged", "unchanged"]
    assert rows[1].find_all("td")[3].text == "covered by monetization 0 → 1.2M"
    assert route.find_all("ul", "obligations") == []
    assert "None: every material change is covered" in route.text
    # the seam table
    (seam,) = route.find("table", "seams").find("tbody").find_all("tr")
    cells = [td.text for td in seam.find_all("td")]
    assert cells[:3] == ["1", "monetize", "+3,625,129.92"]
    assert cells[6] == "rewarded" and cells[8] == "suspend-and-ask"


@pytest.mark.parametrize("name", [
    "domains/solid_electrolyte",  # a discount
    "domains/biochar_kilns",  # the option to stop: the planner does not start
    "domains/organoid_screens",  # the option to stop with a discount: the planner runs it all
    "graphs/lock_cert_pilot",  # a graph
    "domains/clinic_scheduler_roadmap",  # a graph with a discount
    "devtools_api",  # the paper's fold
])
def test_the_waterfall_adds_up_to_the_score_under_every_fold(name: str) -> None:
    from pcsc.compiler.session import Session
    from pcsc.policy.load import PolicyStore
    from pcsc.render.report import _route, _waterfall

    path = ROOT / "examples" / f"{name}.route"
    s = Session(lib_path=[], policies=PolicyStore([]))
    [c] = [c for c in (s.compile_route(r) for r in s.routes_from_text(path.read_text(), str(path), path.parent))
           if c is not None]
    n, wf = c.numbers, _waterfall(c)
    parts = [b for b in wf.bars if b.kind in ("cost", "value")]
    [total] = [b for b in wf.bars if b.kind == "total"]
    assert total.end == n.score
    assert sum(b.end - b.start for b in parts) == pytest.approx(n.score, rel=1e-9, abs=1e-6)
    value = parts[-1].end - parts[-1].start
    if c.route.shape is None and not (n.fold.abandonment and n.score == 0):
        # on a chain the planner walks: the vision counts Π p_i·d_i, by hand
        reach_V = 1.0
        for t in n.transitions:
            reach_V *= t.p * t.d
        assert value == pytest.approx(n.value * reach_V, rel=1e-9)
    if n.fold.abandonment and n.score == 0:
        assert value == 0 and all(b.end == b.start for b in parts)  # nothing is paid, nothing is kept
        binding = _route(c, s, 0, "r0").binding
        assert binding.endswith("every U·D is 0 (option to stop: the planner would not start, R_0 = 0): binding is "
                                "only the tie rule's pick, the earliest step; see learn first")  # compile's note
    else:
        assert "tie rule" not in _route(c, s, 0, "r0").binding
    if n.fold.discount > 0 and c.route.shape is None:
        assert wf.keep_rule == "keep p · d · R next" and "d" in wf.R_rule.split()
    if c.route.shape is not None:
        assert wf.R_rule == "R at the source state"


def test_spliced_route_lists_uncovered_fields_and_failing_requires(workdir: Path, tmp_path: Path) -> None:
    page = report_in(workdir, tmp_path / "r.html", "spliced.route")
    (route,) = sections(parse(page).root)
    assert route.find("span", "verdict").text == "suspend-and-ask"
    assert "withheld" in route.find("dl", "facts").text
    rows = route.find("table", "matrix").find("tbody").find_all("tr")
    assert [r.find("td").text for r in rows] == ["launch", "expand"]
    launch = rows[0].find_all("td")[1:]
    assert [c.classes[0] for c in launch] == ["uncovered", "uncovered", "uncovered"]
    assert [c.text for c in launch] == ["uncovered 0 → 5,000", "uncovered 0 → 200", "uncovered 0 → 1.2M"]
    items = route.find("ul", "obligations").children
    assert [i.children[0].text for i in items] == ["launch", "launch", "launch"]
    assert [i.find("code").text for i in items] == ["developers", "paying_teams", "arr"]
    failures = [(f.find("code", "where").text, f.find("code", "require").text) for f in route.find_all("li", "failure")]
    assert failures == [
        ("obligations/venture.obl:12", "require measured(delta)"),
        ("obligations/venture.obl:20", "require measured(delta)"),
        ("obligations/venture.obl:21", "require budget >= floor(delta)"),
        ("obligations/venture.obl:20", "require measured(delta)"),
        ("obligations/venture.obl:21", "require budget >= floor(delta)"),
    ]
    library = (ROOT / "obligations" / "venture.obl").read_text(encoding="utf-8").splitlines()
    for where, require in failures:
        line = int(where.rsplit(":", 1)[1])
        assert library[line - 1].split("#")[0].strip() == require
    assert "99,000 >= 613,333.33 is false" in route.text
    assert "no admissible deletion (n = 2; seams need n ≥ 3)" in route.text


def by_id(doc: Element, ident: str) -> Element:
    [found] = [e for e in doc.iter() if e.attrs.get("id") == ident]
    return found


def test_several_routes_summary_contents_and_ranking_first(workdir: Path, tmp_path: Path) -> None:
    page = report_in(workdir, tmp_path / "r.html", "examples/devtools_api.route", "spliced.route")
    doc = parse(page).root
    main = doc.find("main")
    assert [e.attrs.get("id") for e in main.children if "card" in e.classes][:3] == ["summary", "contents", "ranking"]
    rows = by_id(doc, "ranking").find("tbody").find_all("tr")
    cells = [[td.text for td in r.find_all("td")] for r in rows]
    assert [c[0] for c in cells] == ["1", "2"]
    assert [c[4] for c in cells] == ["released", "suspend-and-ask"]
    # one score column (the key): the refused route's is withheld, and T (63.75) ordered it
    assert [c[5] for c in cells] == ["885,626.17", "withheld"] and cells[1][6] == "63.75"
    assert [c[8] for c in cells] == ["—", "tier"]
    headers = [th.text for th in by_id(doc, "ranking").find("thead").find_all("th")]
    assert headers[5:7] == ["score (USD), the key", "T"] and not any(h.startswith("key") for h in headers)
    anchors = [r.find("a").attrs["href"] for r in rows]
    assert anchors == ["#" + s.attrs["id"] for s in sections(doc)]
    contents = [a.attrs["href"] for a in by_id(doc, "contents").find("ol").find_all("a")]
    assert contents == anchors
    verdicts = {r.find("td").text.split()[0]: int(r.find_all("td")[1].text)
                for r in doc.find("table", "verdicts").find("tbody").find_all("tr")}
    assert verdicts == {"released": 1, "refused": 1, "docked": 0}


def test_cohort_ranking_is_the_rank_order(run: Run, tmp_path: Path) -> None:
    import json

    page = report(run, tmp_path / "cohort.html", "examples/cohort/")
    doc = parse(page).root
    rows = doc.find("table", "ranking").find("tbody").find_all("tr")
    # the routes' sections follow the ranking, not the order of the files
    assert [r.find("a").attrs["href"] for r in rows] == ["#" + s.attrs["id"] for s in sections(doc)]
    code, out, _ = run("rank", "--format", "json", "examples/cohort/")
    assert code == 0
    expected = json.loads(out)["ranking"]
    assert len(rows) == len(expected) == 30
    for row, want in zip(rows, expected, strict=True):
        cells = [td.text for td in row.find_all("td")]
        assert cells[0] == str(want["rank"]) + ("=" if want["tied"] else "")
        assert cells[1].split()[0] == want["route"]
        assert cells[6] == f"{want['criteria_score']:.2f}" and cells[7] == want["bucket"]
        assert cells[5] == f"{want['score']:,.2f}"
        assert all(g["id"] in cells[3] for g in want["gates"])
    assert len(sections(doc)) == 30
    assert "The bucket is T's (the criteria score's), not the score's" in page
    assert [th.text for th in doc.find("table", "ranking").find_all("th")][7] == "bucket (of T)"


# ---------------------------------------------------------------------- the cohort summary
def _amount(text: str) -> float:
    """A number as the page prints it (`-1,234.50`, `−1,234.50`)."""
    return float(text.replace(",", "").replace("−", "-"))


def cli_json(where: Path, *argv: str) -> dict[str, Any]:
    """`pcsc … --format json` run from ``where``, parsed (gate exits 3 on a refusal)."""
    here = os.getcwd()
    os.chdir(where)
    try:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = pcsc.cli.main([*argv, "--format", "json", "-q"])
    finally:
        os.chdir(here)
    assert code in (0, 3)
    parsed: dict[str, Any] = json.loads(out.getvalue())
    return parsed


def check_summary(page: str, ranking: list[dict[str, Any]], gated: list[dict[str, Any]]) -> None:
    """The page's summary against `pcsc rank` and `pcsc gate` JSON, counted here."""
    doc = parse(page).root
    summary = by_id(doc, "summary")

    def rows(cls: str) -> list[list[str]]:
        return [[td.text for td in r.find_all("td")] for r in summary.find("table", cls).find("tbody").find_all("tr")]

    verdicts = {r[0].split()[0]: int(r[1]) for r in rows("verdicts")}
    word = {"released": "released", "suspend-and-ask": "refused", "docked": "docked", "ungated": "ungated"}
    by_gate = {w: 0 for w in ("released", "refused", "docked")}
    for r in gated:
        by_gate[word[r["verdict"]]] = by_gate.get(word[r["verdict"]], 0) + 1
    assert verdicts == by_gate
    assert sum(verdicts.values()) == len(ranking) == len(gated)
    buckets = {r[0]: int(r[1]) for r in rows("buckets")}
    want_buckets = {"neg": 0, "mix": 0, "pos": 0}
    for r in ranking:
        key = r["bucket"] or "none"
        want_buckets[key] = want_buckets.get(key, 0) + 1
    assert buckets == want_buckets
    scores = sorted(r["score"] for r in ranking if r["score"] is not None)
    spread = {r[0]: _amount(r[1]) for r in rows("spread")}
    middle = len(scores) // 2
    median = scores[middle] if len(scores) % 2 else (scores[middle - 1] + scores[middle]) / 2
    assert spread == {"lowest": round(scores[0], 2), "median": round(median, 2), "highest": round(scores[-1], 2)}
    above = sum(1 for x in scores if x > 0)
    assert f"{len(scores)} with a released score, {above} of them above zero" in summary.text
    # the histogram's table: contiguous bins of one round width, counted from the JSON
    bins = [(_amount(lo), _amount(hi), int(n)) for lo, hi, n in rows("histogram")]
    width = bins[0][1] - bins[0][0]
    mantissa = width / 10 ** math.floor(math.log10(width))
    assert round(mantissa, 9) in (1, 2, 5)
    for (lo, hi, _), (nxt, _, _) in itertools.pairwise(bins):
        assert hi == nxt and hi - lo == pytest.approx(width)
    assert bins[0][0] <= scores[0] < bins[0][1] and bins[-1][0] <= scores[-1] < bins[-1][1]
    assert [n for _, _, n in bins] == [sum(1 for x in scores if lo <= x < hi) for lo, hi, _ in bins]
    assert any(lo == 0 for lo, _, _ in bins) or bins[0][0] >= 0 or bins[-1][1] <= 0  # 0 is an edge
    # the chart draws the same counts: one bar per bin, heights in proportion
    chart = summary.find("svg", "histogram")
    assert chart.attrs["role"] == "img" and chart.find("title").text and chart.find("desc").text
    bars = [g.find("rect") for g in chart.find_all("g", "bin")]
    assert len(bars) == len(bins)
    tallest = max(n for _, _, n in bins)
    full = max(float(b.attrs["height"]) for b in bars)
    for bar, (_, _, n) in zip(bars, bins, strict=True):
        assert float(bar.attrs["height"]) == pytest.approx(full * n / tallest, abs=0.1)
    assert all(f": {n}" in chart.find("desc").text for _, _, n in bins)
    # the table of contents: every route once, in rank order, linking to its section
    links = by_id(doc, "contents").find("ol").find_all("a")
    assert [a.text for a in links] == [r["route"] for r in ranking]
    assert [a.attrs["href"] for a in links] == ["#" + x.attrs["id"] for x in sections(doc)]


def test_cohort_summary_counts_match_rank_and_gate(run: Run, tmp_path: Path) -> None:
    page = report(run, tmp_path / "cohort.html", "examples/cohort/")
    ranking = cli_json(ROOT, "rank", "examples/cohort/")["ranking"]
    gated = cli_json(ROOT, "gate", "examples/cohort/")["routes"]
    check_summary(page, ranking, gated)
    assert len(ranking) == 30


@pytest.mark.parametrize("coverage", ["gate", "dock"])
def test_mixed_summary_counts_match_rank_and_gate(workdir: Path, tmp_path: Path, coverage: str) -> None:
    """Released, refused (GATE) or docked (DOCK), and several buckets in one report."""
    files = ["examples/devtools_api.route", "spliced.route",
             *(str(ROOT / "examples" / "domains" / f"{n}.route") for n in ("biochar_kilns", "solid_electrolyte"))]
    options = ["--lib-path", "obligations", "--coverage", coverage]
    page = report_in(workdir, tmp_path / "r.html", *options, *files)
    ranking = cli_json(workdir, "rank", *options, *files)["ranking"]
    gated = cli_json(workdir, "gate", *options, *files)["routes"]
    assert {r["verdict"] for r in gated} == {"released", "suspend-and-ask" if coverage == "gate" else "docked"}
    check_summary(page, ranking, gated)


def test_a_tie_shows_in_the_ranking_and_the_contents(workdir: Path, tmp_path: Path) -> None:
    """Two copies of one route under different names tie on every number: both carry '='
    (`pcsc rank`'s 1= and 2=), and the second is decided by name."""
    twin = workdir / "twin.route"
    text = (workdir / "examples" / "devtools_api.route").read_text(encoding="utf-8")
    twin.write_text(text.replace("route devtools_api ", "route devtools_twin ", 1), encoding="utf-8")
    doc = parse(report_in(workdir, tmp_path / "r.html", "examples/devtools_api.route", "twin.route")).root
    cells = [[td.text for td in r.find_all("td")] for r in by_id(doc, "ranking").find("tbody").find_all("tr")]
    assert [(c[0], c[1].split()[0], c[5], c[8]) for c in cells] == [
        ("1=", "devtools_api", "885,626.17", "—"),
        ("2=", "devtools_twin", "885,626.17", "name (every earlier key tied)"),
    ]
    ranks = [li.find("span", "rank").text for li in by_id(doc, "contents").find("ol").children]
    assert ranks == ["1=", "2="]  # as `pcsc rank` numbers them: the place, '=' for the tie


def test_decided_by_a_tie_break_without_a_column_shows_both_values() -> None:
    """When a key the table has no column for (the value of learning the first test, the
    score without the option to stop) separates two routes, "decided by" gives both values."""
    import attrs

    from pcsc.analysis.rank import rank
    from pcsc.compiler.session import Session
    from pcsc.policy.load import PolicyStore
    from pcsc.render.report import _decided

    s = Session(lib_path=[], policies=PolicyStore([]))
    compiled = [c for n in ("devtools_api", "feature_flags") for r in
                s.routes_from_text((ROOT / "examples" / f"{n}.route").read_text(), n, ROOT / "examples")
                if (c := s.compile_route(r)) is not None]
    above, below = rank(compiled, "score")[:2]
    assert _decided(below, above) == "score"  # a column of its own: the name alone
    voi = attrs.evolve(below, decided_by="first_test_voi",
                       sequence=(*below.sequence[:3], ("first_test_voi", -2000.0)))
    above = attrs.evolve(above, sequence=(*above.sequence[:3], ("first_test_voi", -500.0)))
    assert _decided(voi, above) == "value of learning the first test: -2,000.00 (above: -500.00)"
    assert _decided(below, None) == "score"


def test_a_cohort_without_a_released_score_draws_no_histogram(workdir: Path, tmp_path: Path) -> None:
    twin = workdir / "spliced_twin.route"
    twin.write_text((workdir / "spliced.route").read_text(encoding="utf-8").replace(
        "route devtools_api ", "route spliced_twin ", 1), encoding="utf-8")
    doc = parse(report_in(workdir, tmp_path / "r.html", "spliced.route", "spliced_twin.route")).root
    summary = by_id(doc, "summary")
    assert summary.find_all("svg") == [] and summary.find_all("table", "histogram") == []
    assert "2 routes; 0 with a released score, 0 of them above zero" in summary.text
    body = summary.find("table", "spread").find("tbody")
    spread = [[td.text for td in r.find_all("td")] for r in body.find_all("tr")]
    assert spread == [["lowest", "—"], ["median", "—"], ["highest", "—"]]


def test_histogram_bins_by_hand() -> None:
    from pcsc.render.summary import bin_width, histogram

    # range 1,250 over 8 bins is 156.25 a bin: the round width above it is 200
    assert bin_width([-250.0, 0.0, 999.0, 1000.0]) == 200
    assert histogram([-250.0, 0.0, 999.0, 1000.0]) == [
        (-400, -200, 1), (-200, 0, 0), (0, 200, 1), (200, 400, 0), (400, 600, 0), (600, 800, 0),
        (800, 1000, 1), (1000, 1200, 1),
    ]
    assert histogram([5.0]) == [(5, 10, 1)]  # one score: a bin of its own size
    assert histogram([]) == []


def test_a_single_route_has_no_summary(run: Run, tmp_path: Path) -> None:
    doc = parse(report(run, tmp_path / "r.html", "examples/devtools_api.route")).root
    assert not [e for e in doc.iter() if e.attrs.get("id") in ("summary", "contents", "ranking")]


# ---------------------------------------------------------------------- safety and determinism
def test_titles_are_escaped(run: Run, tmp_path: Path) -> None:
    hostile = tmp_path / "hostile.route"
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    hostile.write_text(text.replace('"Developer API for SMS"', '"<script>alert(1)</script> & co"'), encoding="utf-8")
    page = report(run, tmp_path / "r.html", str(hostile), "--lib-path", "obligations")
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in page
    assert parse(page).root.find("h2").text == "devtools_api — <script>alert(1)</script> & co"


def test_no_external_urls_and_no_script(workdir: Path, tmp_path: Path) -> None:
    page = report_in(workdir, tmp_path / "r.html", "examples/devtools_api.route", "spliced.route")
    parser = parse(page)
    for tag, name, value in parser.attributes:
        if name in ("src", "href", "xlink:href", "action", "srcset", "poster"):
            assert value.startswith(("#", "data:")), f"<{tag} {name}={value!r}> is not self-contained"
        if name == "xmlns":
            assert tag == "svg" and value == SVG_NS_URL
    assert page.replace(f'xmlns="{SVG_NS_URL}"', "").count("http") == 0
    assert "url(" not in page and "@import" not in page
    assert parser.root.find_all("script") == [] and parser.root.find_all("img") == []


def test_same_input_same_bytes_on_stdout_and_in_a_file(run: Run, tmp_path: Path) -> None:
    first = report(run, tmp_path / "a.html", "examples/devtools_api.route", "examples/feature_flags.route")
    second = report(run, tmp_path / "b.html", "examples/devtools_api.route", "examples/feature_flags.route")
    assert first == second
    code, out, _ = run("report", "examples/devtools_api.route", "examples/feature_flags.route")
    assert code == 0 and out == first


def test_route_option_and_usage_errors(run: Run, tmp_path: Path) -> None:
    page = report(run, tmp_path / "r.html", "examples/", "--route", "devtools_api")
    assert len(sections(parse(page).root)) == 1
    code, _, err = run("report", "examples/devtools_api.route", "--route", "devtools_ap")
    assert code == 2 and "devtools_api" in err


def test_without_jinja2_the_command_says_what_to_install(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jinja2", None)  # `import jinja2` now raises ImportError
    code, out, err = run("report", "examples/devtools_api.route")
    assert code == 1 and out == ""
    assert "pip install 'jinja2>=3.1' (the extra pcsc[report])" in err and "PCSC-E115" in err


def test_template_ships_inside_the_package() -> None:
    from pcsc.render.report import TEMPLATE, TEMPLATES

    assert Path(pcsc.__file__).resolve().parent in TEMPLATES.parents
    assert (TEMPLATES / TEMPLATE).is_file()


# ---------------------------------------------------------------------- Chromium
CHROMIUM = shutil.which("chromium")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
)


def open_in_chromium(page: Path, screenshot: Path, size: str = "1280,3500") -> list[str]:
    """Load ``page`` in headless Chromium, save a screenshot, and return the console
    messages the page produced (every `console.*` call and every uncaught exception is
    logged on standard error as an `INFO:CONSOLE` line)."""
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={screenshot}",
             f"--window-size={size}", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    assert screenshot.is_file(), f"no screenshot written\n{proc.stderr}"
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


def png_size_and_colours(path: Path) -> tuple[int, int, int]:
    """Width, height and the number of distinct pixel values of an 8-bit RGB(A) PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"unexpected PNG format: depth {depth}, colour type {colour}"
    raw = zlib.decompress(b"".join(chunks))
    step = 1 + width * (3 if colour == 2 else 4)
    # the filter bytes make exact decoding unnecessary: distinct scanline contents
    # are enough to tell a drawn page from a blank one
    lines = {raw[i * step + 1 : (i + 1) * step] for i in range(height)}
    return width, height, len(lines)


@pytest.mark.skipif(CHROMIUM is None, reason="`chromium` is not on PATH (.ci/run installs Debian's chromium)")
def test_report_renders_in_chromium_without_console_errors(workdir: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    report_in(workdir, page, "examples/devtools_api.route", "spliced.route")
    shot = tmp_path / "report.png"
    messages = open_in_chromium(page, shot)
    assert messages == [], "console messages:\n" + "\n".join(messages)
    width, height, distinct = png_size_and_colours(shot)
    assert (width, height) == (1280, 3500)
    assert distinct > 100, "the screenshot looks blank"
    # the check can fail: the same page with a console.error in it is caught
    bad = tmp_path / "bad.html"
    bad.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", '<script>console.error("injected failure")</script></body>'), encoding="utf-8")
    caught = open_in_chromium(bad, tmp_path / "bad.png", "800,600")
    assert len(caught) == 1 and "injected failure" in caught[0]
    if os.environ.get("PCSC_UPDATE_SCREENSHOT") == "1":
        shutil.copy(shot, SCREENSHOT)


A11Y = ROOT / "tests" / "a11y"  # axe-core and playwright-core, pinned by its package-lock.json
AXE_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")  # tests/a11y/axe.js runs these


def _browser_tools() -> None:
    """Skip (fail under CI, where .ci/run installs them) without Chromium, node or npm;
    install the pinned npm packages when they are missing."""
    missing = [tool for tool in ("chromium", "node", "npm") if shutil.which(tool) is None]
    if missing:
        reason = f"{', '.join(missing)} not on PATH: the axe-core run needs Chromium, node and npm"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " (.ci/run installs them)")
        pytest.skip(reason)
    if not all((A11Y / "node_modules" / p / "package.json").is_file() for p in ("axe-core", "playwright-core")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=A11Y, check=True,
                       capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


def run_axe(*pages: Path) -> dict[str, Any]:
    """axe-core's result per page (`tests/a11y/axe.js`), in one headless Chromium."""
    proc = subprocess.run(["node", "axe.js", *(str(p) for p in pages)], cwd=A11Y, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PCSC_CHROMIUM": str(CHROMIUM)}, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    results: dict[str, Any] = json.loads(proc.stdout)
    assert sorted(results) == sorted(str(p) for p in pages)
    return results


def violations(result: dict[str, Any]) -> list[str]:
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
            for v in result["violations"]]


def assert_no_violation(result: dict[str, Any], name: str) -> None:
    assert {"color-contrast", "svg-img-alt", "html-has-lang", "link-in-text-block"} <= set(result["rules"])
    assert violations(result) == [], f"{name}:\n" + "\n".join(violations(result))


def test_axe_finds_no_wcag_aa_violation(run: Run, workdir: Path, tmp_path: Path) -> None:
    """axe-core (WCAG 2.0 and 2.1, levels A and AA) over a report of several routes (the
    summary, the contents, a refusal and its failing requires) and a graph route's."""
    _browser_tools()
    mixed, single = tmp_path / "mixed.html", tmp_path / "single.html"
    report_in(workdir, mixed, "examples/devtools_api.route", "spliced.route")
    report(run, single, "examples/graphs/lock_cert_pilot.route")
    # the check can fail: a muted grey too light for its text, and a chart without a name
    page = mixed.read_text(encoding="utf-8")
    low, nameless = tmp_path / "low-contrast.html", tmp_path / "nameless.html"
    assert "--muted: #4a5568" in page
    low.write_text(page.replace("--muted: #4a5568", "--muted: #a0aec0"), encoding="utf-8")
    chart = re.search(r'<title id="histogram-title">.*?</desc>', page, flags=re.S)
    assert chart is not None
    unnamed = page.replace(chart.group(0), "").replace(' aria-labelledby="histogram-title histogram-desc"', "")
    nameless.write_text(unnamed, encoding="utf-8")
    results = run_axe(mixed, single, low, nameless)
    for good in (mixed, single):
        assert_no_violation(results[str(good)], good.name)
    assert {v["id"] for v in results[str(low)]["violations"]} == {"color-contrast"}
    assert {v["id"] for v in results[str(nameless)]["violations"]} == {"svg-img-alt"}
    [v] = results[str(nameless)]["violations"]
    assert len(v["nodes"]) == 1  # the histogram: every other picture keeps its name


@pytest.mark.slow  # 30 routes' sections: axe's contrast check visits some 2,000 nodes
def test_axe_finds_no_wcag_aa_violation_in_the_cohort_report(run: Run, tmp_path: Path) -> None:
    _browser_tools()
    cohort = tmp_path / "cohort.html"
    report(run, cohort, "examples/cohort/")
    assert_no_violation(run_axe(cohort)[str(cohort)], cohort.name)


def test_docs_keep_a_screenshot() -> None:
    width, _, distinct = png_size_and_colours(SCREENSHOT)
    assert width == 1280 and distinct > 100
    assert "report.png" in (ROOT / "docs" / "report.md").read_text(encoding="utf-8")


def test_a_tie_pick_is_not_drawn_as_the_binding_edge(run: Run, tmp_path: Path) -> None:
    """Every U·D is 0 on biochar_kilns (the planner would not start): the page's binding
    line carries compile's tie note, and its picture has no bold orange edge."""
    route = "examples/domains/biochar_kilns.route"
    _, text, _ = run("compile", route)
    [note] = [x.strip() for x in text.splitlines() if "tie rule" in x]
    page = report(run, tmp_path / "r.html", route)
    (section,) = sections(parse(page).root)
    facts = {d.find("dt").text: d.find("dd").text for d in section.find("dl", "facts").children}
    assert facts["binding transition"].endswith(note)
    svg = page.split('<div class="picture">', 1)[1].split("</svg>", 1)[0]
    assert 'stroke-width="3"' not in svg and 'stroke="#c05621"' not in svg
    assert 'stroke="#6b46c1" stroke-width="2" stroke-dasharray="2 3"' in svg


def _luminance(colour: str) -> float:
    """WCAG 2.1's relative luminance of `#rrggbb`."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_every_coloured_text_meets_wcag_aa_contrast() -> None:
    """Each rule that sets a text colour on a background of the template's palette, and
    the muted and body text on the page's grounds, reach 4.5:1 (WCAG 2.1 AA, normal text)."""
    import re

    css = (ROOT / "pcsc" / "render" / "templates" / "report.html.j2").read_text(encoding="utf-8")
    palette = dict(re.findall(r"--([\w-]+):\s*(#[0-9a-f]{6})", css))
    pairs = re.findall(r"background:\s*var\(--([\w-]+)\);\s*color:\s*var\(--([\w-]+)\)", css)
    assert len(pairs) >= 3, pairs  # the good, bad and warning badges and verdicts
    checked = [(palette[fg], palette[bg]) for bg, fg in pairs]
    checked += [(palette["muted"], "#ffffff"), (palette["muted"], palette["soft"]), (palette["ink"], "#eef1f5")]
    low = [(fg, bg, round(_contrast(fg, bg), 2)) for fg, bg in checked if _contrast(fg, bg) < 4.5]
    assert low == []
    assert _contrast("#2f855a", "#e6f4ea") < 4.5  # the green this replaced (4.00:1): the check can fail


def test_every_table_has_a_caption_and_column_headers(run: Run, tmp_path: Path) -> None:
    page = report(run, tmp_path / "r.html", "examples/devtools_api.route", "examples/cohort/api_monitoring.route")
    doc = parse(page).root
    tables = doc.find_all("table")
    assert len(tables) >= 5
    for table in tables:
        assert table.children and table.children[0].tag == "caption" and table.children[0].text, table.classes
        assert all(th.attrs.get("scope") == "col" for th in table.find_all("th")), table.classes
