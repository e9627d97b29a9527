"""Rewrite the expected outputs of the diagnostic golden files.

Run from anywhere (it runs `pcsc` from the repo root itself):

    python3 tests/regen_golden_diagnostics.py

For every `tests/data/diagnostics/<name>.route` it writes `<name>.expected.txt`: the
whole stderr of `python -m pcsc check tests/data/diagnostics/<name>.route`, run from
the repo root with that relative path. Expected files whose route is gone are deleted.
Read the diff before keeping it: an expected file is a claim that this output (codes,
spans, carets, wording) is right for that input.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "data" / "diagnostics"


def golden_cases() -> list[Path]:
    return sorted(GOLDEN_DIR.glob("*.route"))


def render(route: Path) -> tuple[int, str]:
    """(exit code, stderr) of `pcsc check` on the route, as run from the repo root."""
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pcsc", "check", route.relative_to(ROOT).as_posix()],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    return proc.returncode, proc.stderr


def main() -> int:
    routes = golden_cases()
    for route in routes:
        code, stderr = render(route)
        if "Traceback" in stderr:
            sys.stderr.write(f"{route.name}: pcsc crashed; nothing written\n{stderr}")
            return 1
        target = route.with_suffix(".expected.txt")
        old = target.read_text(encoding="utf-8") if target.is_file() else None
        target.write_text(stderr, encoding="utf-8")
        print(f"{'unchanged' if old == stderr else 'written  '} {target.relative_to(ROOT)} (exit {code})")
    names = {r.stem for r in routes}
    for stale in GOLDEN_DIR.glob("*.expected.txt"):
        if stale.name.removesuffix(".expected.txt") not in names:
            stale.unlink()
            print(f"deleted   {stale.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
