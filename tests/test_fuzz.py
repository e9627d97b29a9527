"""Fuzzing kept in the suite: a seeded slice of `python -m pcsc.tools.fuzz` (CI), hypothesis
strategies over the same grammar-aware generator and its mutations, a seeded slice of
the mutation fuzzer (`--mutate`) through every entry point, and larger runs marked slow
(`pytest -m fuzz100k`, run by `.ci/fuzz`: 100,000 mutated inputs)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcsc.tools.fuzz import (
    STRANGE,
    Crash,
    Generator,
    Input,
    Mutator,
    corpus,
    fuzz,
    main,
    mutation_fuzz,
    run_entry_points,
    run_input,
)
from tests.conftest import ROOT

seeds = st.integers(min_value=0, max_value=2**32 - 1)

# a route from the grammar, clean or wild
routes = seeds.map(lambda seed: Generator(seed).route())
# any input the command makes: routes, libraries, policies and outcomes, usually mutated
inputs = seeds.map(lambda seed: Generator(seed).next())


@st.composite
def mutated_routes(draw: st.DrawFn) -> Input:
    """A generated route with hypothesis' own edits: text spliced in (odd characters,
    bidi controls, NUL), a byte cut or inserted, line breaks changed."""
    text = draw(routes)
    pos = draw(st.integers(0, len(text)))
    piece = draw(st.lists(st.sampled_from(STRANGE) | st.characters(), max_size=6).map("".join))
    text = text[:pos] + piece + text[pos:]
    data = text.encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(max_size=3)) + data[cut + 1 :]
    newline = draw(st.sampled_from([b"\n", b"\r", b"\r\n"]))
    return Input("route", data.replace(b"\n", newline), "hypothesis")


def test_seeded_slice_finds_nothing(tmp_path: Path) -> None:
    start = time.monotonic()
    report = fuzz(300, seed=20240601, out=tmp_path / "crashes")
    assert report.counts["crash"] == 0, [p.read_text() for p in (tmp_path / "crashes").glob("*.txt")]
    assert report.counts["ok"] > 0 and report.counts["diagnostics"] > 0
    assert time.monotonic() - start < 120  # about 10 s unloaded


def test_the_generator_is_deterministic() -> None:
    a, b = Generator(7), Generator(7)
    assert [a.next().data for _ in range(50)] == [b.next().data for _ in range(50)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_routes())
def test_mutated_routes_never_raise(tmp_path_factory: pytest.TempPathFactory, item: Input) -> None:
    run_input(item, tmp_path_factory.mktemp("fuzz"), random.randrange(2) * 2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs)
def test_generated_inputs_never_raise(tmp_path_factory: pytest.TempPathFactory, item: Input) -> None:
    run_input(item, tmp_path_factory.mktemp("fuzz"), 0)


def test_the_command_prints_counts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["-n", "5", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("5 inputs (seed 3)") and "crash       0" in out


@pytest.mark.slow
def test_a_larger_run_finds_nothing(tmp_path: Path) -> None:
    report = fuzz(5000, seed=1, out=tmp_path / "crashes")
    assert report.counts["crash"] == 0, [p.read_text() for p in (tmp_path / "crashes").glob("*.txt")]


# ---------------------------------------------------------------------- the mutation fuzzer
def test_mutated_slice_finds_nothing(tmp_path: Path) -> None:
    report = mutation_fuzz(200, seed=20260101, out=tmp_path / "crashes")
    assert report.counts["crash"] == 0, [p.read_text() for p in (tmp_path / "crashes").glob("*.txt")]
    assert sum(report.counts.values()) == 200
    assert report.counts["diagnostics"] > 0 and report.counts["ok"] + report.counts["refused"] > 0


def test_the_mutator_is_deterministic_and_sliceable() -> None:
    a, b = Mutator(5), Mutator(5)
    assert [a.input(i).data for i in range(40)] == [b.input(i).data for i in reversed(range(40))][::-1]
    assert [a.input(i).data for i in range(40)] != [Mutator(6).input(i).data for i in range(40)]


def test_the_mutator_starts_from_the_shipped_routes_and_uses_every_edit() -> None:
    routes = corpus()
    assert len(routes) >= 2 * 40 and all(r.lstrip().startswith((b"#", b"route")) for r in routes[:40])
    mutator = Mutator(1, routes)
    notes = " ".join(mutator.input(i).note for i in range(3000))
    for edit in ("flip", "insert", "delete", "duplicate", "splice", "number", "control", "utf8", "truncate"):
        assert f"bytes:{edit}" in notes, edit
    for edit in ("drop", "drop-run", "duplicate", "duplicate-run", "swap", "number", "keyword", "foreign"):
        assert f"token:{edit}" in notes, edit
    datas = [mutator.input(i).data for i in range(3000)]
    assert any(b"1e308" in d for d in datas) and any(b"\xff" in d for d in datas)
    assert all(number.encode() in b"".join(datas) for number in ("-0", "nan", "1e-400", "9999999999999999999999"))
    assert sum(d not in routes for d in datas) > 2900  # mutated, nearly always


def test_the_harness_reports_an_exit_70_and_non_strict_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    route = Input("route", (ROOT / "examples" / "devtools_api.route").read_bytes(), "as shipped")
    assert run_entry_points(route, tmp_path) == "ok"
    monkeypatch.delenv("PCSC_DEBUG", raising=False)
    monkeypatch.setattr("pcsc.cli.commands.graph.run", lambda ctx, args: 1 / 0)  # a bug: exit 70
    with pytest.raises(Crash, match="pcsc graph: exit 70"):
        run_entry_points(route, tmp_path)
    monkeypatch.undo()
    monkeypatch.setattr("pcsc.base.canonical.dumps", lambda *a, **k: '{"x": NaN}')  # what json.dumps allows
    with pytest.raises(Crash, match="NaN in the JSON output"):
        run_entry_points(route, tmp_path)


def test_the_command_runs_the_mutator(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--mutate", "-n", "4", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 mutated inputs (seed 3)") and "crash       0" in out
    assert main(["--mutate", "-n", "٤"]) == 2


@pytest.mark.slow
def test_a_slice_of_10000_mutated_inputs_finds_nothing(tmp_path: Path) -> None:
    """CI's slow run: 10,000 inputs of the mutation fuzzer, from a seed .ci/run derives
    from the commit (PCSC_FUZZ_SEED), so every commit tries inputs the last did not and a
    failure names the seed that reproduces it (`python -m pcsc.tools.fuzz --mutate -n
    10000 --seed S`). The whole 100,000 of seed 1 is `.ci/fuzz`'s."""
    import os

    seed = int(os.environ.get("PCSC_FUZZ_SEED", "1"))
    report = mutation_fuzz(10_000, seed=seed, out=tmp_path / "crashes", jobs=os.cpu_count() or 1)
    print(f"10,000 mutated inputs of seed {seed} in {report.seconds:.0f} s: {dict(report.counts)}")
    assert sum(report.counts.values()) == 10_000
    crashes = [p.read_text()[-3000:] for p in (tmp_path / "crashes").glob("*.txt")]
    assert report.counts["crash"] == 0, (f"seed {seed}", crashes)


@pytest.mark.fuzz100k
def test_100000_mutated_inputs_find_nothing(tmp_path: Path) -> None:
    """The mutation fuzzer's full run (docs/development.md gives its time): 100,000
    inputs through every entry point, in one process per core."""
    import os

    report = mutation_fuzz(100_000, seed=1, out=tmp_path / "crashes", jobs=os.cpu_count() or 1)
    print(f"100,000 mutated inputs in {report.seconds:.0f} s: {dict(report.counts)}")
    assert sum(report.counts.values()) == 100_000
    assert report.counts["crash"] == 0, [p.read_text()[-3000:] for p in (tmp_path / "crashes").glob("*.txt")]


def test_a_text_parsed_again_reports_the_same() -> None:
    """The parse memo (what lets the entry points share one input's parse): a second
    parse of a text returns the same nodes and replays the same diagnostics, for
    `parse_source` and for a `parse_tree` that fails, under each file name."""
    from pcsc.diagnostics.model import Diagnostics
    from pcsc.lang.syntax import parse_tree
    from pcsc.lang.syntax.parser import parse_source

    good = (ROOT / "examples" / "devtools_api.route").read_text(encoding="utf-8")
    bad = good.replace("state wedge", "state wedge {", 1) + "\n}} junk ("
    for text in (good, bad):
        runs = [Diagnostics() for _ in range(3)]
        nodes = [parse_source(text, "a.route", d) for d in runs[:2]] + [parse_source(text, "b.route", runs[2])]
        assert nodes[0] is nodes[1] and (nodes[0] is None) == (text is bad)
        assert runs[0].items == runs[1].items and bool(runs[0].items) == (text is bad)
        assert {d.span.file for d in runs[2].items} <= {"b.route"} and len(runs[2].items) == len(runs[0].items)
    first, second = Diagnostics(), Diagnostics()
    assert parse_tree(bad, "a.route", first) is None and parse_tree(bad, "a.route", second) is None
    assert first.items == second.items and first.items
    assert parse_tree(good, "a.route", Diagnostics()) is not parse_tree(good, "a.route", Diagnostics())
