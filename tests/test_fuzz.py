"""Fuzzing kept in the suite: a seeded slice of `python -m pcsc.tools.fuzz` (CI), hypothesis
strategies over the same grammar-aware generator and its mutations, and a larger run
marked slow (`pytest -m slow`)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pcsc.tools.fuzz import STRANGE, Generator, Input, fuzz, main, run_input

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
