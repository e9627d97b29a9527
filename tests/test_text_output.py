"""Every command's text output over the shipped examples reads as written for people:
no binary-float noise (`613333.3333333333`, `0.29759615384615384`, `99000.0`) and no
`1 <plural>` (`1 rows`, `1 prospective forecasts`). Numbers go through `pcsc.base.humanize`;
JSON keeps exact values and is not looked at here.

The commands run in process over `examples/` (every route of every file where a command
takes one route), with a one-route ledger beside the cohort's so that counts of one are
printed too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcsc.cli import main
from pcsc.compiler.session import Session
from tests.conftest import EXAMPLES, ROOT

# a fraction with 8 or more significant digits (leading zeros aside): 613333.3333333333
NOISE = re.compile(r"\d\.0*+[1-9]\d{7,}")
# an integral float's repr, `.0` and no separators: 99000.0
RAW_WHOLE = re.compile(r"(?<![\w.,])\d{4,}\.0(?!\d)")
# an amount of 1e15 or more written out, digit by digit: -16,458,173,770,323,802.00 (humanize writes -1.64582e+16)
WRITTEN_OUT = re.compile(r"\d{1,3}(?:,\d{3}){5,}")
# a value quoted as `field = value` without its thousands grouped, beside grouped ones: developers = 4800
UNGROUPED = re.compile(r"(?<![\w.])= -?\d{4,}(?![\d_])")
NOUNS = ("routes|files|rows|forecasts|outcomes|milestones|cases|transitions|entries|errors|edits|revisions|seams|"
         "deletions|splices|warnings|changes|draws|classes|parameters|margins|tests|suggestions|obligations|"
         "libraries|cues|resamples|policies|steps|breakpoints|verdicts|duplicates|recompiles|labels|observations")
# one, then up to two words, then a plural noun: `1 rows`, `1 prospective forecasts`, `1 resolved training transitions`
ONE_PLURAL = re.compile(rf"(?<![\d.,/\[])\b1 (?:(?!of\b)[a-z-]+ ){{0,2}}(?:{NOUNS})\b")

PILOT = EXAMPLES / "cohort" / "outcomes_pilot.toml"
ONE_OUTCOMES = """
[[observation]]
route = "devtools_api"
date = 2012-09-01
developers = 640

[[label]]
route = "devtools_api"
date = 2016-01-01
outcome = "+"
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(list(argv))
    out, err = capsys.readouterr()
    return out + err


def problems(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if NOISE.search(line) or RAW_WHOLE.search(line) or UNGROUPED.search(line) or ONE_PLURAL.search(line)
            or WRITTEN_OUT.search(line)]


def routes_of_examples() -> Iterator[tuple[str, str]]:
    session = Session()
    for route in session.load_paths([str(EXAMPLES)]):
        yield str(Path(route.file).relative_to(ROOT)), route.name


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("text")
    (tmp / "one.toml").write_text(ONE_OUTCOMES, encoding="utf-8")
    (tmp / "plan.toml").write_text('[plan]\nname = "pilot"\n\n[analysis]\nas_of = 2019-01-01\n\n[[prediction]]\n'
                                   'id = "P1"\nclaim = "auc(score) >= 0.6"\n', encoding="utf-8")
    return {"tmp": tmp, "cohort": tmp / "cohort.sqlite", "one": tmp / "one.sqlite"}


def commands(w: dict[str, Path]) -> list[list[str]]:
    """Every command, over the examples, in an order that builds what later ones read."""
    tmp, cohort, one = w["tmp"], str(w["cohort"]), str(w["one"])
    spliced = str(tmp / "spliced.route")
    scores = ["--scores", "examples/routecast_table_a1.csv", "--id", "blind_id", "--outcome", "outcome_bucket",
              "--positive", "S+,+", "--negative", "-"]
    return [
        ["check", "examples/"], ["compile", "examples/"], ["compile", "examples/devtools_api.route"],
        ["compile", "examples/devtools_api.route", "--cert", str(tmp / "cert.json")],
        ["cache", "info"], ["cache", "clear"],
        ["verify-cert", str(tmp / "cert.json")],
        ["gate", "examples/"], ["gate", "examples/devtools_api.route", "--suggest",
                                "--set", "floors.delta.arr.points=[[1, 1e9]]"],
        ["seams", "examples/"], ["seams", "examples/devtools_api.route", "--symbolic"],
        ["seams", "--experiment", "examples/cohort/"],
        ["splice", "examples/devtools_api.route", "--seam", "1", "-o", spliced],
        ["diff", "examples/devtools_api.route", spliced], ["gate", spliced],
        ["sensitivity", "examples/devtools_api.route"],
        ["blind", "examples/cohort/", "-o", str(tmp / "blind"), "--map", str(tmp / "map.json")],
        ["rank", "examples/"], ["stability", "examples/feature_flags.route"],
        ["redteam", "examples/devtools_api.route"], ["redteam", "examples/feature_flags.route"],
        ["report", "examples/devtools_api.route", "-o", str(tmp / "r.html")],
        ["fmt", "--check", "examples/", "obligations/"], ["fmt", "--check", "examples/devtools_api.route"],
        ["init", str(tmp / "project")], ["test", "policies/"],
        ["policy", "hash", "venture@1.0.0"],
        ["policy", "check", "policies/venture/1.1.0.toml"],
        ["policy", "diff", "venture@1.0.0", "venture@1.1.0", "examples/"], ["config"], ["rule", "W604"],
        # the cohort's retrospective pilot, and a ledger of one forecast and one outcome
        ["freeze", "--retrospective", "examples/cohort/", "--ledger", cohort],
        ["prereg", str(tmp / "plan.toml"), "--ledger", cohort],
        ["resolve", str(PILOT), "--ledger", cohort, "--as-of", "2019-01-01"],
        ["evaluate", "--ledger", cohort, "--as-of", "2019-01-01"],
        ["evaluate", "--ledger", cohort, "--prereg", "pilot"],
        ["freeze", "--retrospective", "examples/devtools_api.route", "--ledger", one],
        ["resolve", str(tmp / "one.toml"), "--ledger", one, "--as-of", "2016-06-01"],
        ["evaluate", "--ledger", one, "--as-of", "2016-06-01"],
        ["evaluate", *scores, "--strata", "recognition_risk"],
        ["ledger", "verify", "--ledger", one], ["ledger", "show", "--ledger", cohort],
        ["ledger", "show", "--ledger", one], ["ledger", "head", "--ledger", one],
        ["ledger", "export", "--ledger", one, "--as-of", "2016-06-01", "-o", str(tmp / "one.csv")],
        ["ledger", "keygen", "-o", str(tmp / "key")],
        ["ledger", "checkpoint", "--ledger", one, "--key", str(tmp / "key.pem"), "-o", str(tmp / "c.json")],
        ["policy", "fit", "--policy", "venture@1.1.0", "--version", "9.9.9", "--ledger", cohort,
         "--as-of", "2019-01-01", "-o", str(tmp / "fit.toml")],
        ["policy", "compare", "venture@1.0.0", "venture@1.1.0", "--ledger", cohort, "--as-of", "2019-01-01"],
    ]


def test_every_command_prints_numbers_and_counts_for_people(work: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    cache = work["tmp"] / "xdg"
    cache.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))  # `cache clear` clears this run's cache only
    monkeypatch.delenv("PCSC_NO_CACHE", raising=False)
    found: dict[str, list[str]] = {}
    ran = set()
    for argv in commands(work):
        text = run(capsys, *argv)
        if argv[0] == "report":
            text = (work["tmp"] / "r.html").read_text(encoding="utf-8")
        ran.add(argv[0] if argv[0] not in ("policy", "ledger", "cache") else " ".join(argv[:2]))
        bad = problems(text)
        if bad:
            found[" ".join(argv)] = bad[:5]
    for file, name in routes_of_examples():  # the commands that take one route
        for argv in (["explain", file, "--route", name], ["graph", file, "--route", name]):
            bad = problems(run(capsys, *argv))
            if bad:
                found[" ".join(argv)] = bad[:5]
    # lsp prints nothing: it talks LSP over stdio; policy show prints a TOML document (a
    # policy, exact as JSON is: `100000.0` is a TOML float), not text for reading
    ran |= {"explain", "graph", "lsp", "policy show"}
    from pcsc.cli.registry import COMMANDS

    assert {c.name for c in COMMANDS} - ran == set(), "every command's text is looked at"
    assert not found, "\n".join(f"{argv}:\n    " + "\n    ".join(lines) for argv, lines in found.items())


def test_the_patterns_catch_what_they_are_for() -> None:
    for noisy in ("launch.c: 99000.0 -> 613333.3333333333", "monetize.p: 0.29759615384615384 -> 0.4",
                  "graded: 1 prospective forecasts", "wrote x.csv (1 rows)", "fitted 1 of 1 reference classes",
                  "met: developers = 4800, arr = 900_000",
                  "score -16,458,173,770,323,802.00 (+0.00 against the ungated -16,458,173,770,323,802.00)"):
        assert problems(noisy), noisy
    for fine in ("launch.c: 99,000.00 -> 613,333.33", "monetize.p: 0.2976 -> 0.4464", "flat Π p    0.00101122",
                 "1 prospective forecast, 2 labelled routes", "rank 1 of 2 routes", "0.1 routes", "21/30 routes",
                 "version 0.1.0", "users = 28_750", "1e-09 relative inside", "checked: 1 row of entries",
                 "score -1.64582e+16", "999,999,999,999,999.00"):
        assert not problems(fine), fine
