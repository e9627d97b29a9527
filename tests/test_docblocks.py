"""The generated blocks of README.md and docs/ (`pcsc/tools/docblocks.py`, written by
`python -m pcsc.tools.docs`) are what the program prints today, and the recordings they are
written from are the program's: their inputs are the files, their tables recount from
their own records, a seeded slice of the run gives the recorded results again (default
run), and the whole run prints the recorded bytes (`pytest -m slow`)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pcsc.analysis.seams.experiment import fundability_flip
from pcsc.analysis.search import channel_counts, lower_median
from pcsc.base.stats import rate
from pcsc.cli import main
from pcsc.tools import docblocks
from tests.conftest import ROOT

#: The cohort routes the default run searches again (the first two, by name).
SLICE = ("adaptive_sat_prep", "adherence_texts")


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return docblocks.load_recording(docblocks.COHORT_SEARCH, ROOT)


@pytest.fixture(scope="module")
def renderer() -> docblocks.Renderer:
    """One renderer for the module: each block's command runs once."""
    return docblocks.Renderer(ROOT)


def _printed_json(renderer: docblocks.Renderer, name: str) -> Any:
    block = next(b for b in docblocks.BLOCKS if b.name == name)
    return json.loads(renderer.source(block).stdout)


def test_every_block_is_current(renderer: docblocks.Renderer) -> None:
    stale = docblocks.regenerate(ROOT, write=False, renderer=renderer)
    assert not stale, "run `python -m pcsc.tools.docs`: stale blocks " + ", ".join(
        f"{s.page.relative_to(ROOT)}:{s.name}" for s in stale)


def test_every_block_is_on_a_page_and_names_its_command() -> None:
    shown: dict[str, list[str]] = {}
    for page in docblocks.pages(ROOT):
        text = page.read_text(encoding="utf-8")
        for m in docblocks.marked(page, text):
            shown.setdefault(m.name, []).append(page.name)
            body = text[m.start:m.end]
            block = next(b for b in docblocks.BLOCKS if b.name == m.name)
            named = f"$ {block.command}\n" in body or f"`{block.command}`" in body
            assert named, f"{page.name}:{m.name} does not name its command"
            if block.recording is not None:
                assert f"`{block.recording.path.as_posix()}`" in body, f"{page.name}:{m.name} hides its recording"
    assert set(shown) == {b.name for b in docblocks.BLOCKS}, "a block no page shows"
    assert shown["search-tables"] == ["README.md", "experiments.md"]


def test_markers_that_do_not_close_or_name_no_block_are_errors() -> None:
    page = Path("page.md")
    with pytest.raises(docblocks.BlockError, match="no block is named `nope`"):
        docblocks.marked(page, "<!-- pcsc:begin nope -->\n<!-- pcsc:end nope -->\n")
    with pytest.raises(docblocks.BlockError, match="has no `<!-- pcsc:end experiment -->`"):
        docblocks.marked(page, "<!-- pcsc:begin experiment -->\ntext\n")
    with pytest.raises(docblocks.BlockError, match="before the next block"):
        docblocks.marked(page, "<!-- pcsc:begin experiment -->\n<!-- pcsc:begin search-tables -->\n"
                               "<!-- pcsc:end search-tables -->\n<!-- pcsc:end experiment -->\n")
    text = "a\n<!-- pcsc:begin experiment -->\nmade\n<!-- pcsc:end experiment -->\nb\n"
    assert docblocks.without_blocks(text) == "a\n<!-- pcsc:begin experiment -->\n<!-- pcsc:end experiment -->\nb\n"


def test_a_stale_block_is_rewritten_and_the_rest_kept(tmp_path: Path) -> None:
    (tmp_path / "docs" / "artifacts").mkdir(parents=True)
    recording = ROOT / docblocks.COHORT_SEARCH.path
    (tmp_path / docblocks.COHORT_SEARCH.path).write_bytes(recording.read_bytes())
    page = tmp_path / "docs" / "page.md"
    page.write_text("before\n<!-- pcsc:begin search-tables -->\nold\n<!-- pcsc:end search-tables -->\nafter\n",
                    encoding="utf-8")
    stale = docblocks.regenerate(tmp_path)
    assert [(s.name, s.shown) for s in stale] == [("search-tables", "old\n")]
    text = page.read_text(encoding="utf-8")
    assert text.startswith("before\n<!-- pcsc:begin search-tables -->\n```\n$ pcsc redteam --search --conditions")
    assert text.endswith("<!-- pcsc:end search-tables -->\nafter\n")
    assert docblocks.regenerate(tmp_path) == [], "regenerating twice changes nothing"


@pytest.mark.parametrize("recording", docblocks.RECORDINGS, ids=lambda r: r.name)
def test_the_recording_reads_todays_files(recording: docblocks.Recording) -> None:
    """A changed cohort route makes a recording stale: record it again."""
    inputs = docblocks.load_recording(recording, ROOT)["inputs"]
    assert len(inputs) == len(list((ROOT / "examples" / "cohort").glob("*.route")))
    for entry in inputs:
        data = (ROOT / entry["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"], (
            f"{entry['path']} changed since the recording: run `python -m pcsc.tools.docs --record`")


# ---------------------------------------------------------------------- the recorded tables, recounted
def _revisions(search: dict[str, Any], group: str, name: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    return [(r[group][name]["honest"], r[group][name]["revision"]) for r in search["routes"]]


def test_the_recorded_search_rates_recount_from_its_revisions(recorded: dict[str, Any]) -> None:
    """Each rate of the search table, counted again by its definition (docs/redteam.md)
    from the recorded revision of every route."""
    search = recorded["kept"]["search"]
    n = len(search["routes"])
    for group, arm in [(g, a) for g in ("arms", "arms_gold") for a in search["settings"]["feedback"]]:
        rates = search[group][arm]["rates"]
        pairs = _revisions(search, group, arm)
        beating = [rev for honest, rev in pairs if rev is not None and rev["ungated_score"] > honest["ungated_score"]]
        assert rates["uncovered_baseline_beating"] == rate(sum(bool(rev["uncovered"]) for rev in beating), n)
        structural = sum(bool({"delete", "merge", "retarget"} & set(rev["kinds"])) for rev in beating)
        assert rates["delete_or_merge"] == rate(structural, len(beating))
        released = [(h, rev) for h, rev in pairs if rev is not None and rev["released_score"] is not None
                    and h["released_score"] is not None]
        assert rates["covered_improvement_strict"] == rate(
            sum(rev["released_score"] > h["released_score"] for h, rev in released), n)
        assert rates["route_arounds"] == rate(sum(bool(rev["seam_skips"]) for _, rev in released), n)
        assert rates["gold_route_arounds"] == rate(sum(bool(rev["gold_skips"]) for _, rev in released), n)
        records = [r[group][arm] for r in search["routes"]]
        assert rates["repair_rate"] == rate(sum(x["repaired"] for x in records), sum(x["refusals"] for x in records))


def test_the_recorded_coauthor_rows_recount_from_their_revisions(recorded: dict[str, Any]) -> None:
    """Ours and the paper's definitions, per condition, from the recorded revisions."""
    search = recorded["kept"]["search"]
    n = len(search["routes"])
    for row in search["conditions"]:
        pairs = _revisions(search, "conditions", row["condition"])
        gain = [rev["released_score"] - h["released_score"]
                if rev is not None and rev["released_score"] is not None and h["released_score"] is not None else 0.0
                for h, rev in pairs]
        released = [(h, rev, g) for (h, rev), g in zip(pairs, gain, strict=True)
                    if rev is not None and rev["released_score"] is not None]
        applied = [(h, rev, g) for h, rev, g in released if g > 0]
        surviving = [(h, rev, g) for h, rev, g in released if rev["seam_skips"]]
        rates = row["rates"]
        assert rates["beat_honest"] == rate(len(applied), n)
        assert rates["evasion"] == rate(sum(bool(rev["seam_skips"]) for _, rev, _ in applied), n)
        assert rates["fundability_by_silence"] == rate(sum(
            fundability_flip(h["released_score"], rev["released_score"]) for h, rev, _ in surviving), n)
        assert rates["surviving_evasions"] == rate(len(surviving), n)
        assert rates["evasions_beating_honest"] == rate(sum(g > 0 for _, _, g in surviving), n)
        assert rates["honest_false_suspensions"] == rate(sum(h["released_score"] is None for h, _ in pairs), n)
        assert rates["gold_route_arounds"] == rate(sum(bool(rev["gold_skips"]) for _, rev, _ in released), n)
        assert row["median_gain"] == lower_median(gain)
        assert row["median_gain_surviving_evasions"] == lower_median([g for _, _, g in surviving])
        uplift = lower_median([rev["floor_uplift"] for _, rev, _ in applied])
        assert row["median_floor_uplift"] == uplift
        assert row["median_floor_uplift_b"] == (uplift if row["delta_floors"] else None)


def test_the_recorded_channels_recount_and_keep_the_papers_direction(recorded: dict[str, Any]) -> None:
    """The channels table's counts, recounted from the recorded revisions' edit kinds;
    under each grounding condition without the gold registry the deletion channel stays
    open, and some evasion got past grounding by a reused packet quotation (the
    paper's direction); under the registry it is closed; no condition refuses an
    honest route."""
    search = recorded["kept"]["search"]
    n = len(search["routes"])
    for row in search["conditions"]:
        name = row["condition"]
        applied = [rev for h, rev in _revisions(search, "conditions", name) if rev is not None
                   and rev["released_score"] is not None and rev["released_score"] > h["released_score"]]
        evasions = [rev for rev in applied if rev["seam_skips"]]

        def using(kind: str, revisions: list[dict[str, Any]]) -> int:
            return sum(any(kind in k.split("+") for k in rev["kinds"]) for rev in revisions)

        released = [rev for _, rev in _revisions(search, "conditions", name) if rev is not None
                    and rev["released_score"] is not None]
        counts = channel_counts(search, name)
        assert counts == {"evasion": (len(evasions), n),
                          "reused_quotation": (using("reuse-excerpt", evasions), len(evasions)),
                          "written_excerpt": (using("write-excerpt", evasions), len(evasions)),
                          "reclass": (using("re-class", applied), len(applied)),
                          "restate": (using("restate", applied), len(applied)),
                          "cost_cut": (sum(using("drop-cost", [r]) or using("shrink-cost", [r]) for r in applied),
                                       len(applied)),
                          "gold_route_arounds": (sum(bool(r["gold_skips"]) for r in released), n)}, name
        assert counts["evasion"][0] == row["rates"]["evasion"]["k"]
        assert counts["gold_route_arounds"][0] == row["rates"]["gold_route_arounds"]["k"]
        assert row["rates"]["honest_false_suspensions"]["k"] == 0, name
        if row["registry"]:
            assert counts["evasion"][0] == 0 and counts["gold_route_arounds"][0] == 0, name
        elif row["grounding"]:
            assert counts["evasion"][0] > 0 and counts["reused_quotation"][0] > 0, name


def test_the_recorded_search_keeps_the_done_when(recorded: dict[str, Any]) -> None:
    """Under `gate` no released revision has an uncovered change; under `none` most routes
    have an uncovered revision that beats the honest score, and GATE refuses each one."""
    search = recorded["kept"]["search"]
    routes = search["routes"]
    found = 0
    for r in routes:
        gate, none = r["arms"]["gate"]["revision"], r["arms"]["none"]["revision"]
        assert gate["uncovered"] == [] and gate["diff"]["newly_uncovered"] == []
        if none["gain"] > 0 and none["uncovered"]:
            found += 1
            assert none["gate"] == "suspend-and-ask" and none["released_score"] is None
    assert found > len(routes) / 2


@pytest.mark.parametrize("recording", [docblocks.COHORT_REDTEAM, docblocks.COHORT_REDTEAM_CATEGORY],
                         ids=lambda r: r.name)
def test_the_recorded_redteam_totals_are_its_routes(recording: docblocks.Recording) -> None:
    kept = docblocks.load_recording(recording, ROOT)["kept"]
    summary, routes = kept["summary"], kept["routes"]
    assert summary["routes"] == len(routes)
    for key in ("tried", "raising", "refused_raising"):
        assert summary[key] == sum(r[key] for r in routes), key
    for kind, row in summary["by_kind"].items():
        for cls, k in row.items():
            assert k == sum(r["by_kind"].get(kind, {}).get(cls, 0) for r in routes), (kind, cls)
    for cls, k in summary["by_class"].items():
        assert k == sum(r["by_class"].get(cls, 0) for r in routes) == sum(
            row.get(cls, 0) for row in summary["by_kind"].values()), cls


# ---------------------------------------------------------------------- the program, again
def _slice_argv(recording: docblocks.Recording, kept: dict[str, Any], out: Path) -> list[str]:
    files = [f"examples/cohort/{name}.route" for name in SLICE]
    if recording is docblocks.COHORT_SEARCH:
        settings = kept["search"]["settings"]
        bounds = [x for key in ("seed", "budget", "beam", "steps", "branch") for x in (f"--{key}", str(settings[key]))]
        features = ["--features-policy", settings["features"]] if settings.get("features") else []
        return ["redteam", "--search", "--conditions", *features, *files, *bounds, "--format", "json", "-o", str(out)]
    settings = kept["settings"]
    return ["redteam", *files, "--reclass", settings["reclass"], "--max-edits", str(settings["max_edits"]),
            "--depth", str(settings["depth"]), "--format", "json", "-o", str(out)]


@pytest.mark.parametrize("recording", docblocks.RECORDINGS, ids=lambda r: r.name)
def test_a_seeded_slice_gives_the_recorded_results(
        recording: docblocks.Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A route's search (and its red-team edits) depends on that route, the policy, the
    libraries, the seed and the bounds only: two routes run again give their recorded
    entries exactly, so a change of the code that moves them fails here, in the default run."""
    kept = docblocks.load_recording(recording, ROOT)["kept"]
    monkeypatch.chdir(ROOT)
    report = tmp_path / "slice.json"
    assert main(_slice_argv(recording, kept, report)) == 0
    again = json.loads(report.read_text(encoding="utf-8"))["routes"]
    if recording is docblocks.COHORT_SEARCH:
        now = {r["route"]: r for r in again}
        was = {r["route"]: r for r in kept["search"]["routes"] if r["route"] in SLICE}
    else:
        now = {r["route"]: docblocks.redteam_route(r) for r in again}
        was = {r["route"]: r for r in kept["routes"] if r["route"] in SLICE}
    assert set(now) == set(was) == set(SLICE)
    for name in SLICE:
        assert now[name] == was[name], f"{name}: the run moved; run `python -m pcsc.tools.docs --record`"


@pytest.mark.slow
@pytest.mark.parametrize("recording", docblocks.RECORDINGS, ids=lambda r: r.name)
def test_the_recorded_command_prints_the_recorded_bytes(recording: docblocks.Recording) -> None:
    """The recorded command, run again: the same JSON bytes (their SHA-256), the same kept
    part. (Its text view of those tables is `tables_text` of the same document: the
    default run renders the blocks through it.)"""
    was = docblocks.load_recording(recording, ROOT)
    again = docblocks.record(recording, ROOT)
    assert again["sha256"] == was["sha256"], f"`{recording.command}` no longer prints the recorded bytes"
    assert again == was


def test_the_experiment_runs_the_recorded_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pcsc seams --experiment --search` nests the very search `pcsc redteam --search
    --conditions` prints (one route, a small budget: the same document either way)."""
    monkeypatch.chdir(ROOT)
    route, budget = f"examples/cohort/{SLICE[0]}.route", "6"
    features = ("--features-policy", "cohort@1.0.0")
    assert main(["seams", "--experiment", route, "--search", *features, "--budget", budget, "--format", "json",
                 "-o", str(tmp_path / "seams.json")]) == 0
    assert main(["redteam", "--search", "--conditions", *features, route, "--budget", budget, "--format", "json",
                 "-o", str(tmp_path / "redteam.json")]) == 0
    seams = json.loads((tmp_path / "seams.json").read_text(encoding="utf-8"))
    redteam = json.loads((tmp_path / "redteam.json").read_text(encoding="utf-8"))
    assert docblocks.COHORT_SEARCH.keep(redteam) == {"search": seams["experiment"]["search"]}


# ---------------------------------------------------------------------- the pages' sentences
def _money_m(x: float) -> str:
    return f"{x / 1e6:.1f}M"


def test_the_pages_sentences_on_the_search_are_the_recordings(recorded: dict[str, Any]) -> None:
    """The counts README.md and docs/experiments.md state in prose beside the search's
    tables, formatted from the recording."""
    from pcsc.analysis.search import PAPER_CONDITIONS

    readme, experiments = (" ".join((ROOT / page).read_text(encoding="utf-8").split())
                           for page in ("README.md", "docs/experiments.md"))
    search = recorded["kept"]["search"]
    n = len(search["routes"])
    compiled = sum(x["evaluations"] for r in search["routes"] for group in ("arms", "arms_gold", "conditions")
                   for x in r[group].values())
    arms, conditions = len(search["settings"]["feedback"]), len(search["conditions"])
    assert all(set(r["arms_gold"]) == set(r["arms"]) for r in search["routes"])
    assert (f"compiles about {round(compiled, -3):,} revisions on the shipped cohort ({n} routes, {arms} arms twice "
            f"and {conditions} conditions, at most {search['settings']['budget']} each)") in experiments
    none, gate = search["arms"]["none"]["rates"], search["arms"]["gate"]["rates"]
    k = none["uncovered_baseline_beating"]["k"]
    assert f"on {k} of the {n} routes, a revision that beats the honest score with an uncovered" in experiments
    released = [r["arms"]["none"]["revision"] for r in search["routes"]
                if r["arms"]["none"]["revision"]["released_score"] is not None]
    assert len(released) == 1 and "merge" in released[0]["kinds"]
    assert "the one released revision of the `none` arm is a released merge" in experiments
    around = gate["route_arounds"]
    assert f"{around['k']} of its {around['n']} revisions skip a state of the honest chain" in experiments
    assert f"so {around['k']} of {around['n']} `gate` revisions skip a state" in readme
    # the paper's four conditions (test_the_pages_sentences_on_the_v2_conditions_are_the_recordings: the others)
    rows = {row["condition"]: row for row in search["conditions"] if row["condition"] in PAPER_CONDITIONS}

    def count(condition: str, measure: str) -> int:
        return int(rows[condition]["rates"][measure]["k"])

    evasion = {c: count(c, "evasion") for c in rows}
    reused = {c: channel_counts(search, c)["reused_quotation"] for c in rows}
    assert (f"under `v1.5a` and `v1.5a+b` {evasion['v1.5a']} and {evasion['v1.5a+b']} of {n} applied revisions skip "
            f"a state, against {evasion['v1']} (`v1`) and {evasion['v1.5b']} (`v1.5b`) without it, and "
            f"{reused['v1.5a'][0]} of the {reused['v1.5a'][1]} evasions under `v1.5a` and {reused['v1.5a+b'][0]} of "
            f"the {reused['v1.5a+b'][1]} under `v1.5a+b` met `grounded(asset)` by a reused packet quotation"
            ) in experiments
    quoted = reused["v1.5a"][0] + channel_counts(search, "v1.5a")["written_excerpt"][0]
    assert f"(the other {reused['v1.5a'][1] - quoted} under `v1.5a` need none" in experiments
    assert (f"Ours evades on {', '.join(str(evasion[c]) for c in ('v1', 'v1.5a', 'v1.5b'))} and "
            f"{evasion['v1.5a+b']} of {n} routes (`v1`, `v1.5a`, `v1.5b`, `v1.5a+b`), {reused['v1.5a'][0]} of its "
            f"{reused['v1.5a'][1]} evasions under `v1.5a` by a reused packet quotation") in readme
    assert (f"lower the count ({evasion['v1.5b']} and {evasion['v1.5a+b']} against {evasion['v1']} and "
            f"{evasion['v1.5a']})") in readme
    assert min(evasion["v1.5a"], evasion["v1.5a+b"]) > 0, "the paper's direction: grounding leaves evasions"
    (paper,) = {f for c in PAPER_CONDITIONS.values() for f in c.values()}
    assert set(PAPER_CONDITIONS) <= set(rows), "the paper's four conditions are among ours"
    for page in (readme, experiments):
        assert f"evaded in {paper.k} of its {paper.n} {paper.unit}" in page
    assert f"not a packet a model revised), the denominator ({n} routes, not {paper.n} {paper.unit})" in readme
    redteam = " ".join((ROOT / "docs" / "redteam.md").read_text(encoding="utf-8").split())
    assert f"evasion in {paper.k} of its {paper.n} {paper.unit}, under each of its four conditions" in redteam
    gain = {c: _money_m(row["median_gain"]) for c, row in rows.items()}
    binds = rows["v1.5b"]["rates"]["floor_delta_binds"]
    assert (f"lower our median gain from {gain['v1']} (`v1`) to {gain['v1.5b']} (`v1.5b`) and set some cost in "
            f"{binds['k']} of the {binds['n']} applied revisions") in experiments
    assert rows["v1.5a"]["median_gain"] >= rows["v1"]["median_gain"]
    assert rows["v1.5a+b"]["median_gain"] >= rows["v1.5b"]["median_gain"]
    assert (f"Grounding lowers no gain: the median gain is {gain['v1.5a']} under `v1.5a` and {gain['v1.5a+b']} "
            "under `v1.5a+b`") in experiments
    evasions = {c: _money_m(row["median_gain_surviving_evasions"]) for c, row in rows.items()}
    assert f"{evasions['v1.5b']} under `v1.5b` against {evasions['v1']} under `v1`" in experiments
    beating = ", ".join(str(count(c, "evasions_beating_honest")) for c in rows)
    assert f"the conditions count {' and '.join(beating.rsplit(', ', 1))} of {n}" in experiments
    every = search["conditions"]
    assert {row["rates"]["beat_honest"]["k"] for row in every} == {n}
    assert f"which counts re-class gains too, {n} of {n} in every condition" in experiments
    assert {row["rates"]["honest_false_suspensions"]["k"] for row in every} == {0}
    assert "No condition suspends an honest route" in experiments
    fund = {c: count(c, "fundability_by_silence") for c in rows}
    assert fund["v1.5b"] < fund["v1"] and fund["v1.5a"] >= fund["v1"]
    assert (f"is {fund['v1']}/{n} (`v1`), {fund['v1.5a']}/{n} (`v1.5a`), {fund['v1.5b']}/{n} (`v1.5b`) and "
            f"{fund['v1.5a+b']}/{n} (`v1.5a+b`): the floors lower it, grounding does not") in experiments
    assert all(count(c, "evasion") and channel_counts(search, c)["reclass"][0] for c in rows)
    assert "None of the paper's four conditions closes the deletion channel or the re-class channel" in experiments


def _redteam_page() -> str:
    return " ".join((ROOT / "docs" / "redteam.md").read_text(encoding="utf-8").split())


def test_the_redteam_pages_sentences_on_the_cohort_are_the_recordings() -> None:
    page = _redteam_page()
    kept = docblocks.load_recording(docblocks.COHORT_REDTEAM, ROOT)["kept"]
    routes, by_kind = kept["routes"], kept["summary"]["by_kind"]

    def total(key: str) -> int:
        return sum(int(r[key]) for r in routes)

    assert {c for kind in ("delete", "retarget") for c, k in by_kind[kind].items() if k} == {"refused"}
    assert "Every deletion and every retarget is refused" in page
    reclass = by_kind["re-class"]
    assert reclass.get("refused", 0) == 0 and "Every re-class is released" in page
    assert (f"{reclass['no-gain']:,} are no gain: in {total('reclass_no_gain_floored')} of them a floor sets the new "
            f"c (the new class's `floor_usd` in {total('reclass_no_gain_class_floor')})") in page
    drops = by_kind["drop-cost"]
    assert total("drop_cost_no_gain_floored") == drops["no-gain"]
    assert (f"The {drops['no-gain']} cost drops with no gain are all caught by a floor; "
            f"{total('drop_cost_covered_floored')} of the {drops['covered-gain']} covered gains are partly caught"
            ) in page
    released = sum(by_kind[k].get("no-gain", 0) for k in ("drop-kill", "drop-threshold"))
    transitions = sum(len(r["released_no_gain_drops"]) for r in routes)
    words = {10: "ten"}
    assert f"{released} kill or threshold drops are no-gain and released: the {words[transitions]} transitions" in page
    dock = [(r["route"], e) for r in routes for e in r["dock_keeps_gain"]]
    assert len(dock) == 1 and kept["summary"]["refused_raising"] == total("refused_raising")
    route, edit = dock[0]
    assert edit["edit"] == "drop-cost:scale:company" and "60_000_000" in edit["description"]
    assert (f"of the {kept['summary']['refused_raising']} raising edits GATE refuses, DOCK removes the gain of all but "
            f"one: on `{route}`, whose honest score is negative, dropping the 60M `company` cost of `scale` still "
            f"raises the docked score (the floor keeps {edit['costs'][0]['c_to'] / 1e6:.0f}M;") in page
    assert f"({kept['summary']['tried']:,} compiles, about" in page


def test_the_redteam_pages_sentences_on_the_spec_route_and_the_graphs_are_the_programs(
        renderer: docblocks.Renderer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    page = _redteam_page()
    monkeypatch.chdir(ROOT)
    spec = _printed_json(renderer, "redteam-spec")["routes"][0]
    edits = {e["edit"]: e for e in spec["edits"]}
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"On the reference route GATE refuses {spec['by_class']['refused']} of {spec['tried']} edits" in readme
    merged = edits["merge:launch:monetize"]
    assert merged["class"] == "covered-gain"
    (p_moved,) = [d for d in merged["drift"] if d.startswith("launch.p: ")]
    (launch_c,) = [c for c in merged["costs"] if c["transition"] == "launch"]
    floor = next(c for c in edits["delete:monetize"]["costs"] if c["transition"] == "launch")
    assert floor["bound_by"] == "floor_delta"  # the same claim, garage -> bridge, as the deleted route's
    assert (f"W now counting the evidence of both: {float(p_moved.split(' -> ')[1]):.4f}), takes monetize's threshold"
            in page)
    asks = f"pays both budgets ({launch_c['c_to']:,.0f} ≥ the {floor['c_to']:,.2f} its delta-indexed floor asks)"
    assert asks in page
    assert main(["redteam", "examples/devtools_api.route", "--depth", "2", "--format", "json"]) == 0
    assert f"`--depth 2` on the spec route: {json.loads(capsys.readouterr().out)['summary']['tried']} edits" in page
    graphs = {r["route"]: r["edits"] for r in _printed_json(renderer, "redteam-graphs")["routes"]}
    structural = [e for edits_ in graphs.values() for e in edits_ if e["kind"] in ("merge", "retarget")]
    assert all(e["class"] == "refused" for e in structural if e["kind"] == "retarget" and (e["gain"] or 0) > 0)
    covered = sorted((e for e in structural if e["class"] == "covered-gain"), key=lambda e: e["gain"])
    assert [e["kind"] for e in covered] == ["merge", "merge"]
    gains = [f"+{e['gain']:,.2f}" for e in covered]
    assert f"(`retail` + `national`, {gains[0]}; `hosted` + `grow`, {gains[1]})" in page
    around = [e for e in graphs["lock_cert_pilot"] if e["edit"].startswith("retarget:beta_batch:")]
    assert around and all(e["class"] == "refused" for e in around)


def test_the_pages_sentences_on_the_v2_conditions_are_the_recordings(recorded: dict[str, Any]) -> None:
    """What README.md and docs/experiments.md say of v2a, v2b and v2a+b, counted from the
    recording: which channel each closes and which stays open."""
    readme, experiments = (" ".join((ROOT / page).read_text(encoding="utf-8").split())
                           for page in ("README.md", "docs/experiments.md"))
    search = recorded["kept"]["search"]
    assert search["settings"]["features"] == "cohort@1.0.0"
    n = len(search["routes"])
    rows = {row["condition"]: row for row in search["conditions"]}
    assert list(rows) == ["v1", "v1.5a", "v1.5b", "v1.5a+b", "v2a", "v2b", "v2a+b"]
    ch = {c: channel_counts(search, c) for c in rows}
    ev = {c: ch[c]["evasion"][0] for c in rows}
    rc = {c: ch[c]["reclass"][0] for c in rows}
    gain = {c: _money_m(row["median_gain"]) for c, row in rows.items()}
    for c in ("v2a", "v2b", "v2a+b"):
        assert rows[c]["rates"]["honest_false_suspensions"]["k"] == 0, c
    # the channels each closes, as the pages say
    assert ev["v2b"] == ev["v2a+b"] == 0 and ch["v2b"]["gold_route_arounds"][0] == 0
    assert ch["v2b"]["restate"][0] == ch["v2a+b"]["restate"][0] == 0
    assert min(ch[c]["cost_cut"][0] for c in ("v2a", "v2b", "v2a+b")) > 0, "the cost channel stays open"
    evasions_v2a = ch["v2a"]["evasion"][0]
    assert ch["v2a"]["reused_quotation"] == (evasions_v2a, evasions_v2a), "each v2a evasion quotes the packet"
    assert (f"lowers evasion from {ev['v1.5a+b']} (`v1.5a+b`) to {ev['v2a']} of {n} and the applied revisions with "
            f"a re-class from {rc['v1.5a+b']} to {rc['v2a']} of {n}") in experiments
    assert f"The {ev['v2a']} evasions left are merges" in experiments
    left = [r["conditions"]["v2a"]["revision"] for r in search["routes"]]
    left = [rev for rev, r in zip(left, search["routes"], strict=True) if rev is not None and rev["seam_skips"]
            and rev["released_score"] is not None
            and rev["released_score"] > r["conditions"]["v2a"]["honest"]["released_score"]]
    assert len(left) == ev["v2a"] and all(any("merge" in k.split("+") for k in rev["kinds"]) for rev in left)
    assert f"the {rc['v2a']} re-classes left are re-classes into a class that admits the claim" in experiments
    assert (f"closes the deletion channel ({ev['v2b']} of {n} evasions, {ch['v2b']['gold_route_arounds'][0]} of {n} "
            f"route-arounds of the gold chain) and the restatement channel ({ch['v2b']['restate'][0]} of {n})"
            ) in experiments
    assert f"re-class channel wide open ({rc['v2b']} of {n} applied revisions re-class)" in experiments
    assert (f"{rc['v2a+b']} of {n} admitted re-classes, and a cost channel no condition closes: "
            f"{ch['v2a+b']['cost_cut'][0]} of {ch['v2a+b']['cost_cut'][1]} applied revisions drop or shrink a cost"
            ) in experiments
    assert (f"(beat-honest {rows['v2a+b']['rates']['beat_honest']['k']} of {n}, ours), but the median gain falls "
            f"from {gain['v1.5a+b']} (`v1.5a+b`) to {gain['v2a+b']} (`v2a+b`)") in experiments
    gold = search["arms_gold"]
    assert all(gold[a]["rates"]["route_arounds"]["k"] == gold[a]["rates"]["gold_route_arounds"]["k"] == 0
               for a in gold), "both arms under v2a+b release no route-around"
    assert "both arms, run again under `v2a+b`'s policy, release no route-around" in experiments
    assert (f"Evasion: {ev['v2a']}, {ev['v2b']} and {ev['v2a+b']} of {n} routes (against {ev['v1.5a+b']} under "
            f"`v1.5a+b`); applied revisions with a re-class: {rc['v2a']}, {rc['v2b']} and {rc['v2a+b']} of {n}; "
            f"median gain {gain['v2a']}, {gain['v2b']} and {gain['v2a+b']} ({gain['v1.5a+b']} under `v1.5a+b`); "
            f"honest false suspensions 0 of {n} in each") in readme
    assert (f"under `v2a` {ch['v2a']['reused_quotation'][0]} of its {evasions_v2a} evasions met `grounded(asset)` by "
            "a reused packet quotation") in readme
