"""The IR cache is bounded (entries and bytes, least recently used first), and
`pcsc cache info` / `pcsc cache clear` show and clear it (docs/cli.md, "The IR cache").
It grew without bound: 172 MB and 2,740 entries after an afternoon."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from pcsc.compiler.ircache import MAX_ENTRIES, MAX_MB, Entry, IRCache, Limits, cache_folder
from pcsc.render import schemas
from tests.conftest import EXAMPLES, ROOT, run_cli


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "xdg"
    base.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    for name in ("PCSC_NO_CACHE", "PCSC_CACHE_MAX_ENTRIES", "PCSC_CACHE_MAX_MB"):
        monkeypatch.delenv(name, raising=False)
    folder = cache_folder()
    assert folder is not None
    return folder


def entry(i: int, size: int = 100) -> Entry:
    key = hashlib.sha256(str(i).encode()).hexdigest()
    return Entry(key, b"x" * size, (), ())


def stored(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*/*.pickle")}


def test_the_entry_count_is_bounded_least_recently_used_first(cache: Path) -> None:
    ir = IRCache(cache, Limits(entries=10, bytes=2**30))
    for i in range(10):
        ir.put(entry(i))
    assert len(stored(cache)) == 10
    for i in range(10):  # entry i last used at t0 + i
        (path,) = cache.glob(f"*/{entry(i).key}.pickle")
        os.utime(path, (1e9 + i, 1e9 + i))
    fresh = IRCache(cache, Limits(entries=10, bytes=2**30))  # another run: it reads the folder at its first write
    assert fresh.get(entry(0).key) is not None  # a hit is a use: entry 0 is now the newest
    fresh.put(entry(10))  # 11 entries: past the bound, pruned to 90% of it
    assert stored(cache) == {entry(i).key for i in (0, *range(3, 11))}  # 1 and 2 were the least recently used


def test_the_size_is_bounded(cache: Path) -> None:
    ir = IRCache(cache, Limits(entries=1000, bytes=20_000))
    for i in range(50):
        ir.put(entry(i, size=1000))
    sizes = [p.stat().st_size for p in cache.glob("*/*.pickle")]
    assert sum(sizes) <= 20_000 and len(sizes) >= 10
    assert entry(49).key in stored(cache)  # the newest stays


def test_a_run_over_a_cohort_stays_within_the_bound(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PCSC_CACHE_MAX_ENTRIES", "5")
    routes = sorted(str(p.relative_to(ROOT)) for p in (EXAMPLES / "cohort").glob("*.route"))
    assert len(routes) > 5
    code, _, err = run_cli(capsys, "check", "-q", *routes)
    assert code == 0, err
    assert 0 < len(stored(cache)) <= 5
    # the last files read are the ones kept
    code, out, _ = run_cli(capsys, "cache", "info", "--format", "json")
    doc = json.loads(out)
    schemas.validate(doc)
    assert code == 0 and doc["entries"] == len(stored(cache)) and doc["limits"]["entries"] == 5


def test_the_defaults_are_the_documented_ones(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "cache", "info", "--format", "json")
    doc = json.loads(out)
    assert doc["limits"] == {"entries": MAX_ENTRIES, "bytes": MAX_MB * 2**20}
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"`PCSC_CACHE_MAX_ENTRIES` (default {MAX_ENTRIES:,})" in page
    assert f"`PCSC_CACHE_MAX_MB` (default {MAX_MB})" in page


@pytest.mark.parametrize("value", ["abc", "0", "-3", "1.5"])
def test_a_bad_bound_is_a_usage_error(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PCSC_CACHE_MAX_MB", value)
    code, _, err = run_cli(capsys, "check", str(EXAMPLES / "devtools_api.route"))
    assert code == 2 and "PCSC_CACHE_MAX_MB" in err and "Traceback" not in err


def test_clear_removes_what_pcsc_caches_and_nothing_else(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    run_cli(capsys, "check", "-q", "examples/devtools_api.route")
    before = stored(cache)
    assert before
    tables = cache.parent / f"grammar-typed-{'0' * 20}.cache"  # (this process made its own elsewhere)
    tables.write_bytes(b"tables")
    mine = cache.parent / "notes.txt"
    mine.write_text("not pcsc's")
    (cache / "ab").mkdir(exist_ok=True)
    (cache / "ab" / "keep.pickle").write_bytes(b"a name pcsc does not write")
    code, out, _ = run_cli(capsys, "cache", "clear", "--format", "json")
    doc = json.loads(out)
    schemas.validate(doc)
    assert code == 0 and doc["ok"] and doc["removed"] == len(before) + 1 and doc["bytes"] > 0
    assert stored(cache) == {"keep"} and mine.read_text() == "not pcsc's" and not tables.exists()
    code, out, _ = run_cli(capsys, "cache", "clear")
    assert code == 0 and out.startswith("removed 0 files (0 bytes) from ")
    code, out, _ = run_cli(capsys, "check", "examples/devtools_api.route")
    assert code == 0 and stored(cache) >= {"keep"} and len(stored(cache)) == 2  # rebuilt when next needed


def test_clear_refuses_a_folder_others_can_write(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(EXAMPLES / "devtools_api.route", cache / "x")
    cache.chmod(0o777)
    try:
        code, out, err = run_cli(capsys, "cache", "clear", "--format", "json")
        doc = json.loads(out)
        schemas.validate(doc)
        assert code == 1 and not doc["ok"] and doc["diagnostics"][0]["code"] == "PCSC-E113"
        code, out, _ = run_cli(capsys, "cache", "info", "--format", "json")
        assert json.loads(out)["disabled_by"] == "the folder is not private to this user"
    finally:
        cache.chmod(0o700)


def test_info_says_when_the_cache_is_off(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PCSC_NO_CACHE", "1")
    code, out, _ = run_cli(capsys, "cache", "info")
    assert code == 0 and "(off: PCSC_NO_CACHE is set)" in out.splitlines()[0]


def _shape(line: str) -> str:
    """A line of `cache info`/`cache clear` with its folder and figures left out."""
    line = re.sub(r"/\S+", "PATH", line)
    line = re.sub(r"\d[\d,.]* (?:[KMG]B|bytes?)\b", "SIZE", line)
    line = re.sub(r"\b(file|entrie|entry)s?\b", r"\1(s)", line)
    return re.sub(r"\d[\d,.]*", "N", line)


def test_the_pages_cache_lines_are_what_the_program_prints(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/cli.md shows a reader's own cache, so its figures and folder are its own; the
    # words and the layout of every line must be the program's.
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    block = page.split("$ pcsc cache info\n", 1)[1].split("```", 1)[0]
    shown_info, shown_clear = block.split("$ pcsc cache clear\n")
    assert run_cli(capsys, "check", str(EXAMPLES / "devtools_api.route"))[0] == 0
    code, out, _ = run_cli(capsys, "cache", "info")
    assert code == 0
    assert [_shape(x) for x in shown_info.splitlines()] == [_shape(x) for x in out.splitlines()]
    code, out, _ = run_cli(capsys, "cache", "clear")
    assert code == 0
    assert [_shape(x) for x in shown_clear.splitlines()] == [_shape(x) for x in out.splitlines()]


@pytest.mark.parametrize(("n", "text"), [
    (999, "999 bytes"), (1000, "1.0 KB"), (4 * 2**10, "4.0 KB"), (999 * 2**10, "999.0 KB"),
    (1002 * 2**10 + 700, "1.0 MB"), (2**20 - 1, "1.0 MB"), (64 * 2**20, "64.0 MB"), (2**30 - 1, "1.0 GB"),
    (1500 * 2**30, "1,500.0 GB"),
])
def test_a_size_reads_under_1000_of_its_unit(n: int, text: str) -> None:
    """`cache info` and `cache clear` print sizes with no number of four digits or more
    without a separator (a cache of 1,002 KB read `1002.7 KB`)."""
    from pcsc.cli.commands.cache_info import size_text

    assert size_text(n) == text
