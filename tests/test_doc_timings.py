"""Every run time README.md and docs/ quote says where it was measured: it is the
recorded one (`docs/artifacts/timings.json`, written by `benchmarks/bench_docs.py
--record`, which records the machine and the date with each time), rounded as the page
rounds it; or a recorded run of `benchmarks/README.md`; or a setting of the code (a
timeout), which must be the code's. A time quoted any other way fails
`test_every_time_a_page_quotes_is_accounted_for`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pcsc.tools import docblocks
from tests.conftest import ROOT

RECORDING = ROOT / "docs" / "artifacts" / "timings.json"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A quoted time: a number with a unit of time, or "about a minute" and the like.
_TIME = re.compile(r"\b\d[\d,.]*\s?(?:ms|s|seconds?|minutes?|hours?)\b"
                   r"|\b(?:more than|less than|under|about|in|within)\s+(?:a|half a|one)\s+(?:second|minute|hour)\b")


def recorded() -> dict[str, Any]:
    timings: dict[str, Any] = json.loads(RECORDING.read_text(encoding="utf-8"))["timings"]
    return timings


def about(seconds: float) -> str:
    """A time as the pages round it: two significant figures, in seconds."""
    return f"{float(f'{seconds:.2g}'):g} s"


def test_about_rounds_to_two_figures() -> None:
    assert [about(x) for x in (0.874, 2.19, 24.12, 61.4, 150.3)] == ["0.87 s", "2.2 s", "24 s", "61 s", "150 s"]


def _rendered(template: str) -> str:
    """`{NAME}` is the recorded CPU time of NAME, `{NAME:compiles}` its count of
    compiles, `{NAME:ms-per-compile}` its CPU time per compile."""
    timings = recorded()

    def one(m: re.Match[str]) -> str:
        name, _, what = m.group(1).partition(":")
        t = timings[name]
        if what == "compiles":
            return f"{t['compiles']:,}"
        if what == "ms-per-compile":
            per_compile = 1000 * t["cpu_s"] / t["compiles"]
            return f"{float(f'{per_compile:.2g}'):g} ms"
        assert not what, what
        return about(t["cpu_s"])

    return re.sub(r"\{([\w:-]+)\}", one, template)


#: The sentences that quote a recorded time, as templates (`_rendered`).
QUOTED: list[tuple[str, str]] = [
    ("README.md", "The search takes about {search} of CPU (measured: `docs/artifacts/timings.json`)"),
    ("README.md", "that search alone takes about {search} of CPU, measured: `docs/artifacts/timings.json`"),
    ("development.md", "that search alone takes about {search} of CPU, measured: `docs/artifacts/timings.json`"),
    ("experiments.md", "about {search} of CPU (measured: `docs/artifacts/timings.json`)"),
    ("experiments.md", "The search takes about {search} of CPU (measured: `docs/artifacts/timings.json`)"),
    ("cli.md", "the cohort of 30 takes about {sensitivity-rivals} of CPU (measured: `docs/artifacts/timings.json`)"),
    ("decisions.md", "about {sensitivity-rivals} of CPU for the 30 routes of the cohort (measured: "
                     "`docs/artifacts/timings.json`)"),
    ("decisions.md", "On the spec route the search takes {sensitivity-spec:compiles} recompiles, about "
                     "{sensitivity-spec} of CPU as a whole process (measured: `docs/artifacts/timings.json`)"),
    ("redteam.md", "the spec route about {redteam-spec}; the cohort about {redteam-cohort-reclass-all} with "
                   "`--reclass all` ({redteam-cohort-reclass-all:compiles} compiles, about "
                   "{redteam-cohort-reclass-all:ms-per-compile} each), about {redteam-cohort-reclass-category} with "
                   "`--reclass category`, about {redteam-cohort-reclass-none} with `--reclass none`. `--depth 2` on "
                   "the spec route: {redteam-spec-depth-2:compiles} edits in about {redteam-spec-depth-2}"),
]

#: Timeouts the pages quote: the phrase, and the code's value it must equal.
SETTINGS: list[tuple[str, str, str]] = [
    ("cli.md", "(within {} seconds)", "pcsc.compiler.parallel_dask:DaskExecutor.__init__.timeout"),
    ("forecast.md", "up to {} s (`busy_timeout`)", "pcsc.forecast.ledger:BUSY_TIMEOUT_S"),
    ("forecast.md", "at most {} s (`lock_timeout`)", "pcsc.forecast.ledger_pg:LOCK_TIMEOUT_S"),
]

#: Times quoted as the recorded runs of benchmarks/README.md, checked against them below.
BENCHMARKED: list[tuple[str, str]] = [
    ("README.md", "B = 10,000 on n = 2,000 in about {bootstrap} (the recorded run of `benchmarks/bench_bootstrap.py`"),
    ("forecast.md", "takes about {per-1000} per 1,000 forecasts ({verify-1000} for 1,000 and {verify-10000} for "
                    "10,000 in the recorded run of `benchmarks/README.md`"),
    ("forecast.md", "takes about {later-append}: the same run)"),
]

#: Phrases with a time that is no measurement, and why.
NOT_MEASURED: dict[tuple[str, str], str] = {
    ("cli.md", "Work that can take more than a second"): "which work shows a progress bar",
    ("forecast.md", "took a median 0.57 s of CPU, against 0.42 s before freezes verified"):
        "a comparison with code that no longer exists, dated and placed where it is quoted",
}


def _prose(page: Path) -> str:
    text = docblocks.without_blocks(page.read_text(encoding="utf-8"))
    return " ".join(text.split())


def _setting(path: str) -> float:
    import importlib
    import inspect

    module, _, name = path.partition(":")
    owner: Any = importlib.import_module(module)
    parts = name.split(".")
    if parts[-2:-1] == ["__init__"]:
        cls = getattr(owner, parts[0])
        return float(inspect.signature(cls.__init__).parameters[parts[-1]].default)
    return float(getattr(owner, name))


def _benchmarked() -> dict[str, str]:
    """The figures of benchmarks/README.md's recorded runs the pages quote."""
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    (bootstrap,) = re.findall(r"^2,000 +590 +([\d.]+) ms", text, re.M)
    ledger = text[text.index("## Checking the ledger"):]
    rows = re.findall(r"^ +([\d,]+) +([\d.]+) +(\d+) +[\d.]+ +([\d.]+)$", ledger.split("\n#", 1)[0], re.M)
    assert len(rows) == 2, rows
    verify = {size: seconds for size, seconds, _, _ in rows}
    per_1000 = {size: f"{float(f'{int(ms) / 1000:.1g}'):g} s" for size, _, ms, _ in rows}["10,000"]  # the larger
    later = sorted((later for *_, later in rows), key=float)
    return {"bootstrap": about(float(bootstrap) / 1000), "verify-1000": f"{verify['1,000']} s",
            "verify-10000": f"{verify['10,000']} s", "per-1000": per_1000,
            "later-append": f"{later[0]} to {later[-1]} ms"}


def _phrases(page: Path) -> list[str]:
    out = [_rendered(t) for p, t in QUOTED if p == page.name]
    out += [t.format(f"{_setting(path):g}") for p, t, path in SETTINGS if p == page.name]
    figures = _benchmarked()
    out += [re.sub(r"\{([\w-]+)\}", lambda m: figures[m.group(1)], t) for p, t in BENCHMARKED if p == page.name]
    return out + [phrase for p, phrase in NOT_MEASURED if p == page.name]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_time_a_page_quotes_is_accounted_for(page: Path) -> None:
    text = _prose(page)
    spans = []
    for phrase in _phrases(page):
        at = text.find(phrase)
        assert at >= 0, f"{page.name} does not say: {phrase}"
        spans.append((at, at + len(phrase)))
    loose = [m.group(0) for m in _TIME.finditer(text) if not any(a <= m.start() and m.end() <= b for a, b in spans)]
    assert loose == [], f"{page.name}: say where each was measured (tests/test_doc_timings.py)"


def test_the_recording_says_where_and_when() -> None:
    from benchmarks.bench_docs import TIMINGS, shown

    timings = recorded()
    assert set(timings) == set(TIMINGS)
    for name, t in timings.items():
        assert t["command"] == shown(TIMINGS[name])
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", t["recorded"]) and t["cpu_s"] > 0 and t["runs"] >= 1
        assert {"cores", "processor", "python", "platform", "load_average"} <= set(t["machine"])


def test_the_recorded_counts_are_the_programs(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A count quoted beside a time is the program's today (the spec route's: run again;
    the cohort's: the recorded red-team run of docs/redteam.md)."""
    from pcsc.cli import main

    monkeypatch.chdir(ROOT)
    timings = recorded()
    for name, argv in (("sensitivity-spec", ["sensitivity", "examples/devtools_api.route"]),
                       ("redteam-spec", ["redteam", "examples/devtools_api.route"]),
                       ("redteam-spec-depth-2", ["redteam", "examples/devtools_api.route", "--depth", "2"])):
        main([*argv, "--format", "json"])
        doc = json.loads(capsys.readouterr().out)
        count = doc["sensitivity"]["compiles"] if "sensitivity" in doc else doc["summary"]["tried"]
        assert timings[name]["compiles"] == count, name
    for name, recording in (("redteam-cohort-reclass-all", docblocks.COHORT_REDTEAM),
                            ("redteam-cohort-reclass-category", docblocks.COHORT_REDTEAM_CATEGORY)):
        assert timings[name]["compiles"] == docblocks.load_recording(recording, ROOT)["kept"]["summary"]["tried"]


def test_a_quoted_time_is_found_and_an_ordinal_is_not() -> None:
    text = "it takes about a minute, 0.4 s or 10 seconds (within a second); a second edit, to the second"
    assert [m.group(0) for m in _TIME.finditer(text)] == ["about a minute", "0.4 s", "10 seconds", "within a second"]
