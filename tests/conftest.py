from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SPEC_ROUTE = EXAMPLES / "devtools_api.route"
#: The tables a test's policy needs besides what the test is about, at the usual values
#: (tier weights 0.5/0.8/1.0, W within [0.3, 1.5], uncertainty 0.25).
POLICY_TABLES = """[evidence]
min_tier = 1
tier_weight = { 1 = 0.5, 2 = 0.8, 3 = 1.0 }
strict_point_in_time = false

[reweighting]
corroborate_gain = 0.5
contradict_gain = 0.5
w_min = 0.3
w_max = 1.5
decay = 0.5

[uncertainty]
default = 0.25
"""


@pytest.fixture
def spec_route() -> Path:
    return SPEC_ROUTE


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> object:
    """Every test (and every process a test starts) caches parser tables, lowered IR
    and proofs in a folder of this session, never in the user's cache."""
    import os

    folder = tmp_path_factory.mktemp("xdg-cache")
    folder.chmod(0o700)
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


def pin_libraries(
    policies: Path,
    libraries: list[Path],
    *,
    policy_id: str = "probe",
    version: str = "1.0.0",
    extends: str = "venture@1.0.0",
    local: bool = False,
) -> str:
    """Write ``policies/<policy_id>/<version>.toml``, a policy that extends ``extends``
    and pins each library file (its declared version, its canonical sha256), so that
    routes under it may use them: a route uses only the libraries its policy names.
    With ``local``, the policy sets `local_libraries = true` and names each library
    without pinning its content. Returns the policy's reference."""
    import re

    from pcsc.compiler.session import library_sha256

    lines = ["[policy]", f'id = "{policy_id}"', f'version = "{version}"', f'extends = "{extends}"']
    lines += ["local_libraries = true", ""] if local else [""]
    for lib in libraries:
        header = re.search(r"^library\s+(\w+)\s+version", lib.read_text(encoding="utf-8"), re.M)
        assert header is not None, lib
        lines.append(f"[libraries.{header[1]}]")
        if not local:
            declared = re.search(r'^library\s+\w+\s+version\s+"([^"]+)"', lib.read_text(encoding="utf-8"), re.M)
            assert declared is not None, lib
            lines += [f'version = "{declared[1]}"', f'sha256 = "{library_sha256(lib)}"']
        lines.append("")
    path = policies / policy_id / f"{version}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return f"{policy_id}@{version}"


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`pcsc ARGV…` in this process: the exit code, standard output and standard error."""
    from pcsc.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the test from the repository's root, as the docs' commands are run."""
    monkeypatch.chdir(ROOT)
