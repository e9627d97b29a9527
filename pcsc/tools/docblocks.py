"""The marked blocks of README.md and docs/*.md, generated from the program's own output.

A page marks a block with two lines, ``<!-- pcsc:begin NAME -->`` and
``<!-- pcsc:end NAME -->``; everything between them is written by ``python -m pcsc.tools.docs``
(which runs this module) and checked by the test suite, never edited by hand. Each name
is one entry of ``BLOCKS``: the command whose output the block shows (the block names
it on its ``$`` line) and how the output is shown.

Most commands run afresh at every check. A command too long for that (the cohort
search, a few minutes of CPU) is *recorded*: ``docs/artifacts/<recording>.json`` keeps
the command, the SHA-256 of the JSON document it printed, the hashes of the files it
read, and the part of the document the pages show. The blocks are written from that
part; the default test run checks the recorded input hashes against the files and a
seeded slice of the run against the program, and the slow run (``pytest -m slow``)
runs the command again and checks that it prints the recorded bytes exactly.
``python -m pcsc.tools.docs --record`` runs the recorded commands again and rewrites the
recordings (a few minutes).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pcsc.analysis.redteam import KINDS, OUTCOMES
from pcsc.analysis.search import channels_table, tables_text
from pcsc.base import canonical
from pcsc.base.humanize import money

BEGIN = re.compile(r"^<!-- pcsc:begin (?P<name>[\w.-]+) -->\n", re.M)
END = "<!-- pcsc:end {name} -->"
#: Where recordings live, from the checkout's root.
ARTIFACTS = Path("docs") / "artifacts"
#: The checkout's root (the examples the blocks read).
ROOT = Path(__file__).resolve().parents[2]
#: The pages blocks may be on, from the checkout's root.
PAGES = ("README.md", "docs/*.md", "examples/research/README.md", "examples/oss/README.md")


@attrs.frozen
class Recording:
    """A long command, recorded: it prints one JSON document; ``keep`` is the part of it
    the pages are written from (and the seeded slice is checked against)."""

    name: str
    command: str
    keep: Callable[[Mapping[str, Any]], dict[str, Any]]

    @property
    def path(self) -> Path:
        return ARTIFACTS / f"{self.name}.json"


@attrs.frozen
class Printed:
    """What a command printed (a live block's source)."""

    stdout: str
    stderr: str


@attrs.frozen
class Block:
    """A marked block: ``command`` is what it shows; it runs live, or, with
    ``recording``, the block is written from that recording's kept part."""

    name: str
    command: str
    render: Callable[[Block, Any], str]
    recording: Recording | None = None


class BlockError(Exception):
    """A page whose markers are wrong, a command that failed: the message says where."""


# ---------------------------------------------------------------------- running commands
def run(command: str, root: Path) -> subprocess.CompletedProcess[str]:
    """A `pcsc …` command line, run as a user would in ``root``, by this very package."""
    argv = shlex.split(command)
    if not argv or argv[0] != "pcsc":
        raise BlockError(f"not a pcsc command: {command}")
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "pcsc", *argv[1:]], cwd=root, env=env, capture_output=True,
                          text=True, check=False)


def printed(command: str, root: Path) -> Printed:
    done = run(command, root)
    if done.returncode != 0:
        raise BlockError(f"`{command}` exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return Printed(done.stdout, done.stderr)


def load_recording(recording: Recording, root: Path) -> dict[str, Any]:
    path = root / recording.path
    again = "run `python -m pcsc.tools.docs --record`"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BlockError(f"{recording.path}: cannot read the recording ({exc}); {again}") from exc
    if data.get("command") != recording.command:
        raise BlockError(f"{recording.path} records `{data.get('command')}`, not `{recording.command}`: {again}")
    return data


def record(recording: Recording, root: Path) -> dict[str, Any]:
    """Run a recorded command and make its recording (not written)."""
    out = printed(recording.command, root).stdout
    document = json.loads(out)
    return {
        "command": recording.command,
        "sha256": canonical.sha256_hex(out),
        "pcsc": document["pcsc"],
        "inputs": document["inputs"],
        "kept": recording.keep(document),
    }


def write_recording(recording: Recording, root: Path) -> None:
    data = record(recording, root)
    path = root / recording.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(canonical.dumps(data, pretty=True) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------- views
def _fence(lines: Sequence[str]) -> str:
    return "```\n" + "\n".join(line.rstrip() for line in lines) + "\n```\n"


def _output_lines(text: str) -> list[str]:
    rows = [row.rstrip() for row in text.splitlines()]
    while rows and not rows[-1]:
        rows.pop()
    return rows


def console(block: Block, out: Printed) -> str:
    """The command and everything it printed: standard output, then standard error."""
    return _fence([f"$ {block.command}", *_output_lines(out.stdout), *_output_lines(out.stderr)])


def rank_keys(block: Block, out: Printed) -> str:
    """`pcsc rank --format json` as a table of the keys each route was ordered by."""
    names = {"score": "score", "score_without_stop": "without the option to stop", "criteria": "T",
             "first_test_voi": "value of learning the first test"}
    ranking = json.loads(out.stdout)["ranking"]
    keys = [k["key"] for k in ranking[0]["sequence"]] if ranking else []
    rows = [f"| rank | route | {' | '.join(names[k] for k in keys)} | decided by |",
            "|" + "---|" * (len(keys) + 3)]
    for r in ranking:
        values = []
        for k in r["sequence"]:
            v = k["value"]
            values.append("—" if v is None else money(v) if k["key"] != "criteria" else f"{v:.2f}")
        rows.append(f"| {r['rank']} | `{r['route']}` | {' | '.join(values)} | {r['decided_by'] or '—'} |")
    return f"From `{block.command}`:\n\n" + "\n".join(rows) + "\n"


def search_tables(block: Block, kept: Mapping[str, Any]) -> str:
    """The search and co-author tables, the end of what the command prints (and of what
    `pcsc seams --experiment --search` prints), as the program writes them from the
    recorded document."""
    assert block.recording is not None
    lines = [f"$ {block.command}", "...", *tables_text(kept["search"]).splitlines()]
    return _fence(lines) + (f"\nRecorded in `{block.recording.path.as_posix()}` (`{block.recording.command}`); "
                            "`python -m pcsc.tools.docs --record` runs it again.\n")


def coauthor_channels(block: Block, kept: Mapping[str, Any]) -> str:
    """What each co-author condition closes and leaves open, from the recorded search."""
    assert block.recording is not None
    return channels_table(kept["search"]) + (f"\n\nCounted from `{block.recording.path.as_posix()}` "
                                              f"(`{block.recording.command}`).\n")


def _keep_search(document: Mapping[str, Any]) -> dict[str, Any]:
    """The search as `pcsc seams --experiment --search` nests it: the same keys."""
    return {"search": {k: document[k] for k in ("settings", "routes", "arms", "arms_gold", "conditions")
                       if k in document}}


def _count(edits: Sequence[Mapping[str, Any]], test: Callable[[Mapping[str, Any]], bool]) -> int:
    return sum(1 for e in edits if test(e))


def redteam_route(route: Mapping[str, Any]) -> dict[str, Any]:
    """One route of a `pcsc redteam --format json` document, reduced to what the pages
    count: its edits by kind and class, and the tallies docs/redteam.md quotes."""
    edits = route["edits"]
    by_kind: dict[str, dict[str, int]] = {}
    for e in edits:
        row = by_kind.setdefault(e["kind"], {})
        row[e["class"]] = row.get(e["class"], 0) + 1

    def of(kind: str, cls: str) -> list[Mapping[str, Any]]:
        return [e for e in edits if e["kind"] == kind and e["class"] == cls]

    raising_refused = [e for e in edits if e["class"] == "refused" and (e["gain"] or 0) > 0]
    return {
        "route": route["route"],
        "tried": route["tried"],
        "raising": route["raising"],
        "by_class": route["by_class"],
        "by_kind": by_kind,
        # a floor sets the new c (`floors_bound`), and which floor
        "reclass_no_gain_floored": _count(of("re-class", "no-gain"), lambda e: e["floors_bound"]),
        "reclass_no_gain_class_floor": _count(of("re-class", "no-gain"),
                                              lambda e: any(c["bound_by"] == "floor_class" for c in e["costs"])),
        "drop_cost_no_gain_floored": _count(of("drop-cost", "no-gain"), lambda e: e["floors_bound"]),
        "drop_cost_covered_floored": _count(of("drop-cost", "covered-gain"), lambda e: e["floors_bound"]),
        # transitions whose kill or threshold can go, released, for no gain
        "released_no_gain_drops": sorted({e["steps"][0]["subject"] for kind in ("drop-kill", "drop-threshold")
                                          for e in of(kind, "no-gain")}),
        "refused_raising": len(raising_refused),
        "dock_keeps_gain": [{"edit": e["edit"], "description": e["description"], "dock_gain": e["dock_gain"],
                             "costs": e["costs"]} for e in raising_refused if (e["dock_gain"] or 0) > 0],
    }


def _keep_redteam(document: Mapping[str, Any]) -> dict[str, Any]:
    summary = {k: v for k, v in document["summary"].items() if k != "covered_gains"}
    return {"settings": document["settings"], "summary": summary,
            "routes": [redteam_route(r) for r in document["routes"]]}


def _from(block: Block) -> str:
    recorded = "" if block.recording is None else f", recorded in `{block.recording.path.as_posix()}`"
    return f"(`{block.command}`{recorded})"


def redteam_kinds(block: Block, kept: Mapping[str, Any]) -> str:
    """The edits of a cohort by kind and class, and the summary's counts."""
    summary = kept["summary"]
    shown = [c for c in OUTCOMES if summary["by_class"].get(c, 0)]
    absent = [c for c in OUTCOMES if c not in shown]
    kinds = [k for k in KINDS if k in summary["by_kind"]]
    lines = ["| kind | " + " | ".join(shown) + " |", "|---|" + "---:|" * len(shown)]
    lines += [f"| {k} | " + " | ".join(f"{summary['by_kind'][k].get(c, 0):,}" for c in shown) + " |" for k in kinds]
    lines.append("| **all** | " + " | ".join(f"**{summary['by_class'][c]:,}**" for c in shown) + " |")
    kept_gain = all(r["by_class"].get("covered-gain", 0) for r in kept["routes"])
    lines += ["", f"{summary['tried']:,} edits" + (f" (no {', no '.join(f'`{c}`' for c in absent)})" if absent else "")
              + f", {summary['raising']:,} raise the score, GATE refuses {summary['refused_raising']:,} of those"
              + ("; every route keeps at least one covered gain" if kept_gain else "") + f" {_from(block)}."]
    return "\n".join(lines) + "\n"


def redteam_totals(block: Block, kept: Mapping[str, Any]) -> str:
    """One sentence: the edits and the covered gains of a run, re-classes apart."""
    summary = kept["summary"]
    covered = summary["by_class"].get("covered-gain", 0)
    reclass = summary["by_kind"].get("re-class", {}).get("covered-gain", 0)
    return (f"{summary['tried']:,} edits, {covered:,} covered gains ({reclass:,} of them re-classes) "
            f"{_from(block)}.\n")


def redteam_edits(block: Block, out: Printed) -> str:
    """Every edit of one route: its gain, its class, and why (the failed `require` lines
    of a refused edit, and what sets each c it moved)."""
    (route,) = json.loads(out.stdout)["routes"]
    by_class = route["by_class"]
    refused_raising = sum(e["class"] == "refused" and (e["gain"] or 0) > 0 for e in route["edits"])
    lines = [f"{route['tried']} edits, {route['duplicates']} duplicates skipped; {route['raising']} raise the score; "
             f"GATE refuses {by_class['refused']} ({refused_raising} of the raising ones), "
             f"{by_class['covered-gain']} covered gains remain {_from(block)}.", "",
             "| edit | gain | class | why |", "|---|---:|---|---|"]
    for e in route["edits"]:
        moved = [f"{c['transition']}.c {money(c['c_from'])} → {money(c['c_to'])} ({c['bound_by']})"
                 for c in e["costs"] if c["c_from"] != c["c_to"]]
        why = "; ".join([*(e["failed_requires"] if e["class"] == "refused" else ()), *moved]) or "—"
        cls = f"**{e['class']}**" if e["class"] == "covered-gain" else e["class"]
        edit = e["description"].replace("|", "\\|")
        lines.append(f"| {edit} | {money(e['gain'] or 0.0)} | {cls} | {why} |")
    return "\n".join(lines) + "\n"


def redteam_structure(block: Block, out: Printed) -> str:
    """Per route, its merges and retargets by class."""
    doc = json.loads(out.stdout)
    classes = ("refused", "covered-gain", "no-gain")
    lines = ["| route | merge: " + " / ".join(classes) + " | retarget: " + " / ".join(classes) + " |",
             "|---|---:|---:|"]
    for r in doc["routes"]:
        cells = []
        for kind in ("merge", "retarget"):
            mine = [e for e in r["edits"] if e["kind"] == kind]
            cells.append(" / ".join(str(sum(e["class"] == c for e in mine)) for c in classes))
        lines.append(f"| `{r['route']}` | {cells[0]} | {cells[1]} |")
    others = {e["class"] for r in doc["routes"] for e in r["edits"] if e["kind"] in ("merge", "retarget")} - set(
        classes)
    return "\n".join(lines) + "\n\n" + ("None is " + " or ".join(f"`{c}`" for c in others) if others else
                                        "None is `invalid` or `ineligible`") + f" {_from(block)}.\n"


@attrs.frozen
class PaperNumber:
    """A number stated about Table A1 (by the RouteCast paper, or by issue 22 from the
    table), as it is printed there, and how to read the same number from `pcsc evaluate
    --scores … --covariate … --format json`."""

    what: str
    source: str
    stated: str
    unit: str
    denominator: str
    ours: Callable[[Mapping[str, Any]], str]


def _scorer(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next(s for s in doc["scorers"] if s["name"] == name)


def _term(doc: Mapping[str, Any], scorer: str, term: str) -> Mapping[str, Any]:
    model = next(a for a in doc["adjusted"] if a["scorer"] == scorer)
    return next(t for t in model["terms"] if t["name"] == term)


def _interval(ci: Sequence[float | None], sign: str = "") -> str:
    low, high = ("−∞" if ci[0] is None else f"{ci[0]:{sign}.3f}"), ("+∞" if ci[1] is None else f"{ci[1]:{sign}.3f}")
    return f"[{low}, {high}]"


RECOGNITION = "recognition_risk"
PAIRS = "positive-negative pairs, 6 × 15 = 90"
PAPER, ISSUE = "paper", "issue 22"
PAPER_NUMBERS = (
    PaperNumber("cases graded (positive / negative)", PAPER, "21 (6 / 15)", "cases",
                "the 26 rows less the 5 mixed (`~`)",
                lambda d: f"{d['cases']['n']} ({d['cases']['positives']} / {d['cases']['negatives']})"),
    PaperNumber("AUC of the RouteCast score", ISSUE, "0.756", "AUC", PAIRS,
                lambda d: f"{_scorer(d, 'routecast_score')['auc']:.3f}"),
    PaperNumber("AUC of the recognition flag alone", ISSUE, "0.767 [0.533, 0.971]", "AUC, 95% percentile CI", PAIRS,
                lambda d: f"{d['covariates'][0]['auc']:.3f} {_interval(d['covariates'][0]['ci'])}"),
    PaperNumber("top-quartile lift of the flag", ISSUE, "2.80", "share of positives in the top ⌊21/4⌋ = 5 over 6/21",
                "the 21 cases, ties in row order",
                lambda d: f"{d['covariates'][0]['lift_top_quartile']:.2f}"),
    PaperNumber("ΔAUC RouteCast − flag", ISSUE, "−0.011 [−0.368, +0.287]", "AUC difference, paired 95% CI", PAIRS,
                lambda d: (lambda p: f"{p['delta_auc']:+.3f} {_interval(p['ci'], '+')}".replace("-", "−"))(
                    next(p for p in d["covariates"][0]["paired"] if p["a"] == "routecast_score"))),
    PaperNumber("logit coefficient of the score (Wald p)", ISSUE, "0.31 (p = 0.65)",
                "log odds per SD of the score (SD over the 21 cases)", "21 cases, 3 coefficients",
                lambda d: (lambda t: f"{t['estimate']:.2f} (p = {t['p']:.2f})")(
                    _term(d, "routecast_score", "routecast_score"))),
    PaperNumber("logit coefficient of the flag (Wald p)", ISSUE, "2.23 (p = 0.10)", "log odds ratio, flagged vs not",
                "21 cases, 3 coefficients",
                lambda d: (lambda t: f"{t['estimate']:.2f} (p = {t['p']:.2f})")(
                    _term(d, "routecast_score", RECOGNITION))),
    PaperNumber("bootstrap", PAPER, "B = 10,000, seed 20260710", "resamples of the cases", "—",
                lambda d: f"B = {d['bootstrap']['B']:,}, seed {d['bootstrap']['seed']}"),
)


def _reading(doc: Mapping[str, Any]) -> list[str]:
    """What the stated numbers rest on: the standardisation, the tie order of the lift,
    the separated resamples; computed from the table and the document."""
    with (ROOT / "examples" / "routecast_table_a1.csv").open(newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["outcome_bucket"] in ("S+", "+", "-")]
    n = len(rows)
    scores = [float(r["routecast_score"]) for r in rows]
    mean = sum(scores) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in scores) / n)
    flagged = [r["outcome_bucket"] != "-" for r in rows if r[RECOGNITION] == "yes"]
    top, positives = n // 4, sum(r["outcome_bucket"] != "-" for r in rows)
    first = [r["blind_id"] for r in rows if r[RECOGNITION] == "yes"][:top]
    expected = top * sum(flagged) / len(flagged) / top / (positives / n)
    t_score, t_flag = (_term(doc, "routecast_score", name) for name in ("routecast_score", RECOGNITION))
    model = next(a for a in doc["adjusted"] if a["scorer"] == "routecast_score")
    boot = model["bootstrap"]
    b = t_score["estimate"]
    return [
        f"- The AUCs' intervals are the table's own bootstrap: B = {boot['B']:,}, seed {boot['seed']}, resamples of "
        f"the {n} cases, percentile intervals, {doc['bootstrap']['skipped']} resamples without both classes "
        "skipped. The same seed with another resampling scheme gives other bounds.",
        f"- The score's coefficient is per standard deviation of `routecast_score` over the {n} graded cases "
        f"(population SD, {sd:.1f} points): per raw point it is {b / sd:.3f}, per sample SD (n − 1) "
        f"{b * math.sqrt(n / (n - 1)):.2f}. The flag's {t_flag['estimate']:.2f} is a log odds ratio "
        f"(×{math.exp(t_flag['estimate']):.1f} in odds). The p-values are Wald tests from the maximum-likelihood "
        "fit; a likelihood-ratio test gives others.",
        f"- The lift counts the first {top} of the {len(flagged)} flagged cases in row order ({', '.join(first)}); "
        f"ordered at random among the flagged, the expected lift is {expected:.2f}.",
        f"- The coefficients' intervals (not stated elsewhere): score {_interval(t_score['ci'], '+')}, flag "
        f"{_interval(t_flag['ci'], '+')}. {boot['separated']:,} of the {boot['used']:,} resamples refitted "
        f"({boot['separated'] / boot['used']:.0%}) are separated by the flag and the score, so no finite "
        "coefficient exists there. With this few positives the bootstrap leaves both intervals open: the point "
        "estimates and their Wald p-values are all the table supports.",
    ]


def paper_numbers(block: Block, out: Printed) -> str:
    """The paper's numbers about Table A1 beside the program's, and whether they agree as printed."""
    doc = json.loads(out.stdout)
    lines = [f"From `{block.command}`:", "",
             "| number | stated by | stated | PCSC | unit | denominator | |", "|---|---|---|---|---|---|---|"]
    for n in PAPER_NUMBERS:
        ours = n.ours(doc)
        lines.append(f"| {n.what} | {n.source} | {n.stated} | {ours} | {n.unit} | {n.denominator} | "
                     f"{'same' if ours == n.stated else '**differs**'} |")
    lines += ["", "How the stated numbers are reached, and what to read into them:", "", *_reading(doc)]
    return "\n".join(lines) + "\n"


#: The search alone (what `pcsc seams --experiment --search` runs after experiment A), so
#: that a change of experiment A's output leaves the recording as it is.
COHORT_SEARCH = Recording("cohort-search", "pcsc redteam --search --conditions --features-policy cohort@1.0.0 "
                          "examples/cohort/ --format json", _keep_search)
COHORT_REDTEAM = Recording("cohort-redteam", "pcsc redteam examples/cohort/ --format json", _keep_redteam)
COHORT_REDTEAM_CATEGORY = Recording("cohort-redteam-category",
                                    "pcsc redteam examples/cohort/ --reclass category --format json", _keep_redteam)
RECORDINGS = (COHORT_SEARCH, COHORT_REDTEAM, COHORT_REDTEAM_CATEGORY)

BLOCKS = (
    Block("experiment", "pcsc seams --experiment examples/cohort/", console),
    Block("search-tables", "pcsc redteam --search --conditions --features-policy cohort@1.0.0 examples/cohort/",
          search_tables, COHORT_SEARCH),
    Block("coauthor-channels", COHORT_SEARCH.command, coauthor_channels, COHORT_SEARCH),
    Block("redteam-spec", "pcsc redteam examples/devtools_api.route --format json", redteam_edits),
    Block("redteam-cohort", COHORT_REDTEAM.command, redteam_kinds, COHORT_REDTEAM),
    Block("redteam-cohort-category", COHORT_REDTEAM_CATEGORY.command, redteam_totals, COHORT_REDTEAM_CATEGORY),
    Block("redteam-graphs", "pcsc redteam examples/graphs/ --format json", redteam_structure),
    Block("routecast-paper", "pcsc evaluate --scores examples/routecast_table_a1.csv --id blind_id --outcome "
          "outcome_bucket --positive S+,+ --negative - --covariate recognition_risk --format json", paper_numbers),
    Block("research-rank", "pcsc rank examples/research", console),
    Block("research-keys", "pcsc rank examples/research --format json", rank_keys),
    Block("oss-rank", "pcsc rank examples/oss", console),
)


# ---------------------------------------------------------------------- pages
@attrs.frozen
class Marked:
    page: Path
    name: str
    start: int  # offset of the first character after the begin marker's line
    end: int  # offset of the end marker


def pages(root: Path) -> list[Path]:
    found: list[Path] = []
    for pattern in PAGES:
        found += sorted(root.glob(pattern))
    return found


def marked(page: Path, text: str) -> list[Marked]:
    """The marked blocks of a page, in order; a marker that is unknown, unclosed or
    closed by another name is an error."""
    known = {b.name for b in BLOCKS}
    out = []
    for m in BEGIN.finditer(text):
        name = m.group("name")
        if name not in known:
            raise BlockError(f"{page}: no block is named `{name}` (pcsc/tools/docblocks.py BLOCKS)")
        end = text.find(END.format(name=name), m.end())
        following = BEGIN.search(text, m.end())
        if end < 0 or (following is not None and following.start() < end):
            raise BlockError(f"{page}: block `{name}` has no `{END.format(name=name)}` before the next block")
        out.append(Marked(page, name, m.end(), end))
    return out


def without_blocks(text: str) -> str:
    """The page with its generated blocks left out (what other checks read)."""
    parts, at = [], 0
    for m in marked(Path("page"), text):
        parts.append(text[at:m.start])
        at = m.end
    return "".join(parts) + text[at:]


class Renderer:
    """Renders blocks, running each command (or reading each recording) once."""

    def __init__(self, root: Path):
        self.root = root
        self._sources: dict[str, Any] = {}

    def source(self, block: Block) -> Any:
        key = block.recording.name if block.recording is not None else block.command
        if key not in self._sources:
            if block.recording is not None:
                self._sources[key] = load_recording(block.recording, self.root)["kept"]
            else:
                self._sources[key] = printed(block.command, self.root)
        return self._sources[key]

    def render(self, name: str) -> str:
        block = next(b for b in BLOCKS if b.name == name)
        return block.render(block, self.source(block))


@attrs.frozen
class Stale:
    page: Path
    name: str
    shown: str
    generated: str


def regenerate(root: Path, write: bool = True, renderer: Renderer | None = None) -> list[Stale]:
    """Every marked block of every page, generated; the stale ones, rewritten when ``write``."""
    renderer = renderer or Renderer(root)
    stale = []
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        blocks = marked(page, text)
        if not blocks:
            continue
        parts, at = [], 0
        for m in blocks:
            generated = renderer.render(m.name)
            if text[m.start:m.end] != generated:
                stale.append(Stale(page, m.name, text[m.start:m.end], generated))
            parts += [text[at:m.start], generated]
            at = m.end
        new = "".join(parts) + text[at:]
        if write and new != text:
            page.write_text(new, encoding="utf-8")
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pcsc.tools.docblocks [--record] [--check] [ROOT]``: write every marked block
    (with ``--record``, first run the recorded commands again); ``--check`` writes
    nothing and exits 1 when a block is stale."""
    args = list(sys.argv[1:] if argv is None else argv)
    flags = {a for a in args if a.startswith("--")}
    unknown = flags - {"--record", "--check"}
    rest = [a for a in args if not a.startswith("--")]
    if unknown or len(rest) > 1:
        print("usage: python -m pcsc.tools.docblocks [--record] [--check] [ROOT]", file=sys.stderr)
        return 2
    root = Path(rest[0]) if rest else Path.cwd()
    try:
        if "--record" in flags:
            for recording in RECORDINGS:
                write_recording(recording, root)
        stale = regenerate(root, write="--check" not in flags)
    except BlockError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for s in stale:
        print(f"{s.page.relative_to(root)}: block `{s.name}` {'is stale' if '--check' in flags else 'rewritten'}")
    return 1 if stale and "--check" in flags else 0


if __name__ == "__main__":
    raise SystemExit(main())
