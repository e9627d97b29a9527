"""Many files through workers (`pcsc.compiler.cohort`): files go out in chunks, a worker
keeps one run's policies and clean libraries from chunk to chunk, and what a chunk
reports is what a fresh session reports. (`tests/test_speed.py` and `tests/test_dask.py`
check that whole commands print the same with and without workers.)"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pcsc.compiler.cohort import FileLoad, Settings, chunks, load_chunk, worker_session
from tests.conftest import EXAMPLES, ROOT

COHORT = sorted((EXAMPLES / "cohort").glob("*.route"))


@pytest.mark.parametrize(("n", "jobs"), [(0, 2), (1, 2), (5, 2), (100, 2), (10_000, 2), (10_000, 8), (37, 3)])
def test_chunks_cover_the_files_in_order(n: int, jobs: int) -> None:
    files = list(range(n))
    parts = chunks(files, jobs)
    assert [f for part in parts for f in part] == files
    assert all(1 <= len(part) <= 64 for part in parts)
    if n >= jobs * 8:
        assert len(parts) >= jobs * 8  # enough chunks for every worker to take several


def _fresh(settings: Settings, files: list[tuple[Path, str]]) -> FileLoad:
    """``load_chunk`` in a thread of its own: a worker that has seen nothing of the run."""
    out: list[FileLoad] = []
    thread = threading.Thread(target=lambda: out.append(load_chunk((settings, files))))
    thread.start()
    thread.join()
    return out[0]


def _broken_library_tree(tmp_path: Path) -> list[tuple[Path, str]]:
    """Four routes; the odd ones beside a `venture.obl` with a syntax error."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "venture.obl").write_text("library venture {\n@@\n", encoding="utf-8")
    text = (EXAMPLES / "devtools_api.route").read_text(encoding="utf-8")
    files = []
    for i in range(4):
        shown = f"{'ab'[i % 2]}/r{i}.route"
        (tmp_path / shown).parent.mkdir(exist_ok=True)
        (tmp_path / shown).write_text(text.replace("route devtools_api", f"route r{i}"), encoding="utf-8")
        files.append((tmp_path / shown, shown))
    return files


@pytest.mark.parametrize("keep_routes", [True, False])
def test_a_warm_worker_reports_what_a_fresh_session_reports(tmp_path: Path, keep_routes: bool) -> None:
    """The second chunk of a run, in a worker that loaded the policy and the libraries
    for the first, gives what that chunk gives in a worker that saw nothing: a clean
    library is taken from the worker, a broken one is loaded (and reported) again."""
    cohort = [(p, str(p.relative_to(ROOT))) for p in COHORT[:6]]
    broken = _broken_library_tree(tmp_path)
    settings = Settings(lib_path=(ROOT / "obligations",), bind=True, keep_routes=keep_routes, cwd=tmp_path)
    for first, second in ((cohort[:3], cohort[3:]), (broken[:2], broken[2:])):
        load_chunk((settings, first))
        warm = load_chunk((settings, second))
        assert warm == _fresh(settings, second)
        assert warm.inputs and [shown for shown, _ in warm.inputs] == [shown for _, shown in second]
    assert any(d.span.file == "b/venture.obl" for d in warm.diagnostics)  # reported in this chunk too
    assert warm.count == 1  # r3 uses the broken library


def test_a_worker_keeps_one_runs_policies_and_libraries() -> None:
    settings = Settings(lib_path=(ROOT / "obligations",), bind=True)
    files = [(p, p.name) for p in COHORT[:2]]
    load_chunk((settings, files))
    a, b = worker_session(settings), worker_session(settings)
    assert a is not b and a.diags is not b.diags  # a fresh session for each chunk ...
    assert a.policies is b.policies  # ... over the run's policies, loaded once
    caches = a.caches  # type: ignore[attr-defined]
    assert [path.name for path, _ in caches.clean] == ["startup.obl"]  # the cohort's library
    other = Settings(lib_path=(ROOT / "obligations",), bind=True)  # another run: nothing of this one
    assert other != settings
    assert worker_session(other).policies is not a.policies
