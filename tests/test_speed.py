"""Speed and scale: the lowered-IR cache, `--jobs N`, the linear seam identities.

Every test here runs with XDG_CACHE_HOME in a temporary folder (see conftest), and the
cache tests give each test its own, so nothing touches the user's cache.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from pcsc.analysis.seams.identity import seam_identities, seam_identity
from pcsc.cli import main
from pcsc.compiler.ircache import cache_folder
from pcsc.compiler.session import Session
from tests.conftest import EXAMPLES, ROOT

WARNING = "\n    state spare { developers 1 }\n"  # W603: lowering warns, the route still compiles


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A route (with a lowering warning), its library and its policy in a private
    folder; the cache in another; the working folder at the tree."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("PCSC_NO_CACHE", raising=False)
    work = tmp_path / "work"
    (work / "policies" / "venture").mkdir(parents=True)
    shutil.copy(ROOT / "policies" / "venture" / "1.0.0.toml", work / "policies" / "venture" / "1.0.0.toml")
    shutil.copy(ROOT / "obligations" / "venture.obl", work / "venture.obl")
    text = (EXAMPLES / "log_search.route").read_text(encoding="utf-8")
    head, brace, tail = text.partition("{")
    (work / "r.route").write_text(head + brace + WARNING + tail, encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def check(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *extra: str) -> tuple[int, str, int]:
    """`pcsc check r.route`: exit code, output, and how many files were lowered afresh."""
    lowered = []
    original = Session.routes_from_text

    def counting(self: Session, text: str, shown: str, route_dir: Path) -> object:
        lowered.append(shown)
        return original(self, text, shown, route_dir)

    monkeypatch.setattr(Session, "routes_from_text", counting)
    code = main(["check", "--policy-path", "policies", *extra, "r.route"])
    out, err = capsys.readouterr()
    return code, out + err, len(lowered)


def entries() -> list[Path]:
    folder = cache_folder()
    assert folder is not None
    return sorted(folder.rglob("*.pickle"))


def test_an_unchanged_file_is_lowered_once_and_reports_the_same(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = check(capsys, monkeypatch)
    assert first[0] == 0 and first[2] == 1
    assert "PCSC-W603" in first[1] and "PCSC-W601" in first[1]  # a lowering and a binding warning
    assert len(entries()) == 1
    second = check(capsys, monkeypatch)
    assert second[2] == 0  # a hit: nothing parsed or lowered
    assert second[:2] == first[:2]
    json_first = check(capsys, monkeypatch, "--format", "json")
    monkeypatch.setenv("PCSC_NO_CACHE", "1")
    json_fresh = check(capsys, monkeypatch, "--format", "json")
    assert json_fresh[2] == 1 and json_first[2] == 0
    assert json_first[1] == json_fresh[1]


def test_a_changed_file_library_or_policy_is_seen(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = check(capsys, monkeypatch)
    assert check(capsys, monkeypatch)[2] == 0
    # the file: another text is another key
    route = tree / "r.route"
    route.write_text(route.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert check(capsys, monkeypatch)[2] == 1
    assert check(capsys, monkeypatch)[2] == 0
    # the library: the entry records its hash, so an edit is a miss
    lib = tree / "venture.obl"
    lib.write_text(lib.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert check(capsys, monkeypatch)[2] == 1
    # a library found elsewhere on the search path is a miss too
    lib.unlink()
    assert check(capsys, monkeypatch)[2] == 1
    # the policy: binding is never cached, so a changed policy changes the report at once
    policy = tree / "policies" / "venture" / "1.0.0.toml"
    text = policy.read_text(encoding="utf-8")
    assert "strict_point_in_time = false" in text
    policy.write_text(text.replace("strict_point_in_time = false", "strict_point_in_time = true"), encoding="utf-8")
    code, out, lowered = check(capsys, monkeypatch)
    assert lowered == 0 and code == 1 and "PCSC-E310" in out and out != first[1]


def test_a_corrupt_entry_is_a_miss_not_a_crash(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = check(capsys, monkeypatch)
    (entry,) = entries()
    for junk in (b"", b"not a pickle", entry.read_bytes()[:40]):
        entry.write_bytes(junk)
        again = check(capsys, monkeypatch)
        assert again[2] == 1 and again[:2] == first[:2]
    assert check(capsys, monkeypatch)[2] == 0  # rewritten by the miss


def test_no_cache_turns_it_off(tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PCSC_NO_CACHE", "1")
    assert cache_folder() is None
    assert check(capsys, monkeypatch)[2] == 1
    assert check(capsys, monkeypatch)[2] == 1
    monkeypatch.delenv("PCSC_NO_CACHE")
    assert entries() == []


def test_a_file_with_errors_is_not_stored(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    route = tree / "r.route"
    route.write_text(route.read_text(encoding="utf-8").replace("uses    venture", "uses    nowhere"), encoding="utf-8")
    first = check(capsys, monkeypatch)
    assert first[0] == 1 and "PCSC-E206" in first[1]
    assert entries() == []
    assert check(capsys, monkeypatch)[:2] == first[:2]


# ---------------------------------------------------------------------- --jobs
COMMANDS = [
    ["check", "examples"],
    ["compile", "examples"],
    ["gate", "examples"],
    ["rank", "examples"],
    ["seams", "examples/devtools_api.route", "examples/log_search.route", "examples/feature_flags.route"],
    ["redteam", "--max-edits", "4", "examples/devtools_api.route", "examples/log_search.route"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[a[0] for a in COMMANDS])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_jobs_do_not_change_the_output(
    argv: list[str], fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    outputs = []
    for jobs in ("1", "2"):
        code = main([*argv, "--format", fmt, "--jobs", jobs])
        out, err = capsys.readouterr()
        outputs.append((code, out, err))
    assert outputs[0] == outputs[1]
    assert outputs[0][1] or outputs[0][2]


def test_jobs_keep_the_order_of_inputs_and_library_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken library used by several files is reported once, at its first use, and
    standard input keeps its place among the files."""
    (tmp_path / "broken.obl").write_text("library broken {\n  field x {\n}\n", encoding="utf-8")
    text = (EXAMPLES / "devtools_api.route").read_text(encoding="utf-8")
    for i in range(4):
        body = text.replace("uses    venture", "uses    venture, broken") if i % 2 else text
        (tmp_path / f"r{i}.route").write_text(body, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for jobs in ("1", "2"):
        monkeypatch.setattr("sys.stdin", __import__("io").StringIO(text))
        code = main(["check", "--format", "json", "r0.route", "r1.route", "-", "r2.route", "r3.route", "--jobs", jobs])
        outputs.append((code, *capsys.readouterr()))
    assert outputs[0] == outputs[1]
    document = json.loads(outputs[0][1])
    assert [i["path"] for i in document["inputs"]][:5] == ["r0.route", "r1.route", "<stdin>", "r2.route", "r3.route"]


# ---------------------------------------------------------------------- seam identities
def test_linear_seam_identities_equal_the_one_seam_computation() -> None:
    rng = random.Random(20260710)
    for n in (3, 4, 12, 40):
        for _ in range(10):
            ps = [rng.choice([rng.random(), 0.0, 1.0, 0.5]) for _ in range(n)]
            cs = [rng.choice([rng.uniform(-1e6, 1e6), 0.0]) for _ in range(n)]
            value = rng.uniform(-1e12, 1e12)
            ks = list(range(1, n - 1))
            fast = seam_identities(ps, cs, value, ks)
            slow = [seam_identity(ps, cs, value, k) for k in ks]
            assert fast == slow
            for a, b in zip(fast, slow, strict=True):
                assert a.identity_holds
                assert repr(a) == repr(b)  # the same numerators and denominators


# ---------------------------------------------------------------------- bootstraps
def test_many_scorers_bootstrap_as_one_at_a_time() -> None:
    import itertools

    import numpy as np

    from pcsc.forecast import metrics

    rng = np.random.default_rng(3)
    y = rng.random(30) < 0.4
    y[:2] = [True, False]
    columns = [np.round(rng.random(30) + 0.4 * y * rng.random(30), 1) for _ in range(5)]  # with ties
    singles, pairs = metrics.bootstrap_many(columns, y, 700, 11)
    assert singles == [metrics.bootstrap_auc(c, y, 700, 11) for c in columns]
    assert pairs == [metrics.paired_delta_auc(a, b, y, 700, 11) for a, b in itertools.combinations(columns, 2)]


def test_a_cache_hit_still_answers_to_the_policys_pins(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The IR of an unchanged file is reused, but its libraries are resolved again under
    today's policy: a pin that no longer matches the library is refused, not replayed."""
    assert check(capsys, monkeypatch)[0] == 0
    assert check(capsys, monkeypatch)[2] == 0  # a hit
    policy = tree / "policies" / "venture" / "1.0.0.toml"
    text = policy.read_text(encoding="utf-8")
    [pinned] = [line for line in text.splitlines() if line.startswith("sha256 = ")]
    policy.write_text(text.replace(pinned, 'sha256 = "' + "0" * 64 + '"'), encoding="utf-8")
    code, out, lowered = check(capsys, monkeypatch)
    assert code == 1 and ("PCSC-E409" in out or "PCSC-E410" in out), out
    assert lowered == 1  # the entry did not hold: the file was lowered afresh, and refused
