from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SPEC_ROUTE = EXAMPLES / "devtools_api.route"


@pytest.fixture
def spec_route() -> Path:
    return SPEC_ROUTE
