"""`--scheduler ADDRESS`: cohort commands on a Dask cluster (the extra pcsc[dask]) print
byte for byte what they print with `--jobs 1`. The cluster is a `distributed.LocalCluster`
started by the test: threads in this process, and worker processes (which import pcsc
by name, as the workers of a real cluster do) started in a folder of their own, as
`dask worker` is wherever it was started: the command's relative paths (routes,
--lib-path, --policy-path) and the paths it prints are the client's, not the worker's."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pcsc.cli import main
from tests.conftest import ROOT

distributed = pytest.importorskip("distributed", reason="Dask is not installed (the extra pcsc[dask])")

# Dask warns about things a test cannot help (a busy dashboard port, a slow event loop)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")

COMMANDS = [
    ["check", "examples"],
    ["compile", "examples"],
    ["seams", "examples"],
    ["gate", "examples/graphs", "--lib-path", "obligations", "--policy-path", "policies"],
]


def _cluster(processes: bool) -> Any:
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None, silence_logs=40
    )


@pytest.fixture(scope="module", params=[False, True], ids=["threads", "processes"])
def cluster(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, bool]]:
    elsewhere = tmp_path_factory.mktemp("worker-folder")
    with contextlib.chdir(elsewhere if request.param else ROOT):  # worker processes keep the folder they start in
        running = _cluster(request.param)
    with running:
        yield running.scheduler_address, request.param


@pytest.fixture
def scheduler(cluster: tuple[str, bool]) -> str:
    return cluster[0]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", COMMANDS, ids=[a[0] for a in COMMANDS])
def test_a_dask_run_prints_what_a_local_run_prints(
    argv: list[str], scheduler: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    local = _run([*argv, "--format", "json", "--jobs", "1"], capsys)
    remote = _run([*argv, "--format", "json", "--scheduler", scheduler], capsys)
    assert remote == local
    assert local[1]


def test_the_work_runs_on_the_workers(cluster: tuple[str, bool]) -> None:
    import os

    from pcsc.compiler.parallel import executor

    address, processes = cluster
    run = executor(1, address)
    assert run.jobs >= 2
    got = run.map(_where, list(range(6)))
    assert [n for n, _, _ in got] == list(range(6))  # input order
    if processes:
        assert all(pid != os.getpid() and cwd != str(ROOT) for _, pid, cwd in got)


def _where(n: int) -> tuple[int, int, str]:
    import os

    return n, os.getpid(), os.getcwd()


def test_a_route_with_errors_reports_them_as_a_local_run_does(
    scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Diagnostics name the files as the client does: a route's, its local library's."""
    folder = tmp_path / "routes"
    folder.mkdir()
    text = (ROOT / "examples" / "devtools_api.route").read_text(encoding="utf-8")
    (folder / "a.route").write_text(text.replace("launch: garage", "launch: garag"), encoding="utf-8")
    (folder / "b.route").write_text(text.replace("route devtools_api", "route other_api"), encoding="utf-8")
    (folder / "venture.obl").write_text("library venture {\n@@\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    local = _run(["check", "routes", "--jobs", "1"], capsys)
    remote = _run(["check", "routes", "--scheduler", scheduler], capsys)
    assert remote == local
    assert "routes/a.route:" in local[2] and "routes/venture.obl" in local[2]


def test_scheduler_and_jobs_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["check", str(ROOT / "examples"), "--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"], capsys)
    assert code == 2
    assert "--scheduler and --jobs" in err


def test_an_unreachable_scheduler_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, _, err = _run(["check", str(ROOT / "examples"), "--scheduler", f"tcp://127.0.0.1:{port}"], capsys)
    assert code == 2
    assert "cannot connect" in err


def test_without_dask_the_message_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` raises ImportError
    code, _, err = _run(["check", str(ROOT / "examples"), "--scheduler", "tcp://127.0.0.1:1"], capsys)
    assert code == 1 and "PCSC-E115" in err
    assert "pcsc[dask]" in err
