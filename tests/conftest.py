from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SPEC_ROUTE = EXAMPLES / "devtools_api.route"


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
