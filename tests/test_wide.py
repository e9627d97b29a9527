"""Wide routes: the series-parallel decomposition, the graph fold and everything on the
path of `pcsc compile` and `pcsc seams` are linear in the number of branches.

Times are CPU seconds of this process (`time.process_time`), so a loaded machine
slows them little; each bound is generous, and a ratio of 1,000 branches to 100
(about 10 when linear, about 100 when quadratic) checks the growth itself."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.cli import main
from pcsc.lang.ir.shape import Edge, Parallel, Series, Shape
from pcsc.lang.lower.graph import decompose, topological
from tests.conftest import ROOT


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_wide", ROOT / "benchmarks" / "bench_wide.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate_wide_route: Callable[..., str] = _bench().generate_wide_route


def cpu(argv: Sequence[str], repeats: int = 1) -> float:
    """The best CPU time of `pcsc argv` in this process; the command must succeed."""
    best = float("inf")
    for _ in range(repeats):
        sink = io.StringIO()
        start = time.process_time()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            code = main(list(argv))
        best = min(best, time.process_time() - start)
        assert code == 0, sink.getvalue()[-2000:]
    return best


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """Routes of 100 and 1,000 transitions: a first step, then one fork of 99 or 999
    parallel transitions into the join."""
    folder = tmp_path_factory.mktemp("wide")
    out = {}
    for branches in (99, 999):
        path = folder / f"wide{branches + 1}.route"
        path.write_text(generate_wide_route(branches), encoding="utf-8")
        out[branches + 1] = str(path)
    cpu(["check", out[100]])  # the parser's tables and every import, outside the timing
    return out


@pytest.mark.parametrize("command", ["compile", "seams"])
def test_a_thousand_parallel_transitions_take_linear_time(
    wide: dict[int, str], command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCSC_NO_CACHE", "1")  # lower the route every time
    small = cpu([command, wide[100]], repeats=3)
    large = cpu([command, wide[1000]], repeats=2)
    assert large < 2.0, f"pcsc {command} of 1,000 parallel transitions took {large:.2f} CPU s"
    assert large / max(small, 0.01) < 30, (small, large)  # linear: about 10; quadratic: about 100


def test_the_wide_route_compiles_as_generated(wide: dict[int, str], capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark's input is what it says: 1,000 transitions, one fork, no diagnostic."""
    assert main(["compile", "--format", "json", wide[1000]]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    import json

    doc = json.loads(out)
    (route,) = doc["routes"]
    assert len(route["transitions"]) == 1000 and doc["diagnostics"] == []


# ---------------------------------------------------------------- the decomposition


def _reference_decompose(pairs: Sequence[tuple[str, str]], start: str, end: str) -> Shape | list[str]:
    """The decomposition as it was first written (quadratic: one reduction per pass over
    every block): the linear one must give the same answer on every graph."""
    pieces: list[tuple[str, str, Shape, int]] = [(s, t, Edge(str(i)), i) for i, (s, t) in enumerate(pairs)]

    def low(shape: Shape) -> int:
        if isinstance(shape, Edge):
            return int(shape.transition)
        return min(low(x) for x in (shape.items if isinstance(shape, Series) else shape.branches))

    changed = True
    while changed and len(pieces) > 1:
        changed = False
        groups: dict[tuple[str, str], list[tuple[str, str, Shape, int]]] = {}
        for p in pieces:
            groups.setdefault((p[0], p[1]), []).append(p)
        if any(len(g) > 1 for g in groups.values()):
            merged = []
            for (s, t), g in groups.items():
                if len(g) == 1:
                    merged.append(g[0])
                    continue
                branches: list[Shape] = []
                for p in g:
                    branches.extend(p[2].branches if isinstance(p[2], Parallel) else (p[2],))
                branches.sort(key=low)
                merged.append((s, t, Parallel(tuple(branches)), min(p[3] for p in g)))
            pieces = sorted(merged, key=lambda p: p[3])
            changed = True
            continue
        into: dict[str, list[tuple[str, str, Shape, int]]] = {}
        out: dict[str, list[tuple[str, str, Shape, int]]] = {}
        for p in pieces:
            into.setdefault(p[1], []).append(p)
            out.setdefault(p[0], []).append(p)
        for state, ins in into.items():
            outs = out.get(state, [])
            if state in (start, end) or len(ins) != 1 or len(outs) != 1:
                continue
            a, b = ins[0], outs[0]
            items: list[Shape] = []
            for part in (a[2], b[2]):
                items.extend(part.items if isinstance(part, Series) else (part,))
            joined = (a[0], b[1], Series(tuple(items)), min(a[3], b[3]))
            pieces = sorted([p for p in pieces if p is not a and p is not b] + [joined], key=lambda p: p[3])
            changed = True
            break
    if len(pieces) == 1 and pieces[0][0] == start and pieces[0][1] == end:
        return pieces[0][2]
    _, order = topological([(p[0], p[1]) for p in pieces])
    return [s for s in order if s not in (start, end)]


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[tuple[str, str]], str, str]:
    """A DAG from s0 to the last state, in topological order of its states: series-
    parallel or not (random extra edges cross branches), every state on a path."""
    n = draw(st.integers(2, 9))
    states = [f"s{i}" for i in range(n)]
    pairs = [(states[i], states[i + 1]) for i in range(n - 1)]  # a spine keeps every state on a path
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12))
    pairs += [(states[a], states[b]) for a, b in extra if a < b]
    order = draw(st.permutations(range(len(pairs))))
    written = [pairs[i] for i in order]
    sequence, _ = topological(written)  # as lowering hands them over: in topological order
    return [written[i] for i in sequence], states[0], states[-1]


@settings(max_examples=400, deadline=None)
@given(dags())
def test_the_linear_decomposition_is_the_reference_one(graph: tuple[list[tuple[str, str]], str, str]) -> None:
    pairs, start, end = graph
    assert decompose(pairs, start, end) == _reference_decompose(pairs, start, end)


def test_a_thousand_branches_decompose_into_one_parallel_block() -> None:
    pairs = [("s", "f")] + [("f", "j")] * 999
    shape = decompose(pairs, "s", "j")
    assert isinstance(shape, Series) and isinstance(shape.items[1], Parallel)
    assert [b for b in shape.items[1].branches] == [Edge(str(i)) for i in range(1, 1000)]
    start = time.process_time()
    chains = [("s", "f")] + [p for i in range(333) for p in (("f", f"a{i}"), (f"a{i}", f"b{i}"), (f"b{i}", "j"))]
    decompose(chains, "s", "j")
    assert time.process_time() - start < 0.5


def test_a_route_looks_its_states_up_by_name() -> None:
    path = Path(ROOT / "examples" / "graphs" / "lock_cert_pilot.route")
    from pcsc.compiler.session import Session

    (route,) = Session().load_routes(path)
    assert [route.state(s.name) for s in route.states] == list(route.states)
    with pytest.raises(KeyError):
        route.state("nowhere")
