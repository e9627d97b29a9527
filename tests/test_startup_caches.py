"""What a one-route check keeps beside the IR cache so that the next run starts faster:
the compiler's fingerprint (under a stamp of the sources' sizes and times) and each
library's canonical hash (a pin). Each is checked against the computation it saves."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcsc.compiler import ircache
from pcsc.compiler.session import library_hash
from pcsc.lang.fmt import canonical_library
from tests.conftest import ROOT


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PCSC_NO_CACHE", raising=False)
    monkeypatch.setattr(ircache, "_CANONICAL", None)
    ircache.compiler_fingerprint.cache_clear()
    yield tmp_path / "pcsc"
    ircache.compiler_fingerprint.cache_clear()


def test_the_kept_fingerprint_is_the_full_hash_of_the_sources(cache_home: Path) -> None:
    first = ircache.compiler_fingerprint()
    package = ROOT / "pcsc"
    full = ircache._fingerprint(ROOT / "grammar" / "pcsc.lark", package, sorted(package.rglob("*.py")))
    assert first == full
    kept = list(cache_home.glob("fingerprint-*.txt"))
    assert len(kept) == 1 and kept[0].read_text(encoding="ascii") == full
    ircache.compiler_fingerprint.cache_clear()
    kept[0].write_text("f" * 64, encoding="ascii")  # what the next run reads under the same stamp
    assert ircache.compiler_fingerprint() == "f" * 64
    kept[0].write_text("not a digest", encoding="ascii")  # unusable: computed again
    ircache.compiler_fingerprint.cache_clear()
    assert ircache.compiler_fingerprint() == full


def test_a_library_pin_is_computed_once_and_read_back(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = ROOT / "obligations" / "venture.obl"
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    canonical = canonical_library(text)
    assert canonical is not None
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    from pcsc.compiler import session

    monkeypatch.setattr(session, "_CANONICAL_SHA256", {})
    got = library_hash(path)
    assert got is not None and got.canonical == expected
    assert list(cache_home.glob("canonical-*.json"))
    # a new process (no memory of it) reads it back without formatting the library
    monkeypatch.setattr(session, "_CANONICAL_SHA256", {})
    monkeypatch.setattr(ircache, "_CANONICAL", None)
    monkeypatch.setattr(session, "canonical_library", lambda text: pytest.fail("formatted again"))
    again = library_hash(path)
    assert again == got
    usage = ircache.usage(ircache.Limits(10, 10))
    assert usage.other_files >= 2  # the fingerprint and the pins are counted beside the entries ...
    ircache.clear()
    assert not list(cache_home.glob("canonical-*")) and not list(cache_home.glob("fingerprint-*"))  # ... and cleared


def test_a_broken_pin_file_is_no_pin(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pcsc.compiler import session

    monkeypatch.setattr(session, "_CANONICAL_SHA256", {})
    cache_home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (cache_home / f"canonical-{ircache.compiler_fingerprint()[:20]}.json").write_text("{not json", encoding="utf-8")
    got = library_hash(ROOT / "obligations" / "venture.obl")
    assert got is not None and got.canonical is not None and len(got.canonical) == 64


def test_without_the_cache_nothing_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PCSC_NO_CACHE", "1")
    assert ircache.library_canonical("0" * 64, lambda: "a" * 64) == "a" * 64
    assert ircache.library_canonical("0" * 64, lambda: "b" * 64) == "b" * 64  # computed each time
    assert not list(tmp_path.rglob("canonical-*"))
