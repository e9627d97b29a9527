"""Rewrite the golden files that tests/test_golden.py compares against.

Run from anywhere (it changes to the repo root itself):

    python3 tests/regen_golden.py

For every `examples/*.route` it writes, under tests/data/golden/:

- `<example>.ir.json`: stdout of `pcsc compile examples/<example>.route --emit ir`
- `<example>.packet.json`: stdout of `pcsc compile examples/<example>.route --format json`

both run from the repo root with the relative path, so that the `file` fields and
spans in the output read `examples/<example>.route`. Each packet's `scorer.code_sha256`
(the hash of pcsc's own code, which any edit changes) is written as `CODE_SHA256`;
tests/test_golden.py checks the real one against a recomputation of its own. Golden files of examples that no
longer exist are deleted. Read the diff before committing: a golden file is a claim
that its numbers are right.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden"
# kind -> the extra arguments of `pcsc compile`
KINDS: dict[str, tuple[str, ...]] = {"ir": ("--emit", "ir"), "packet": ("--format", "json")}


def examples() -> list[str]:
    """The example routes, as paths relative to the repo root, sorted."""
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "examples").glob("*.route"))


def golden_path(example: str, kind: str) -> Path:
    return GOLDEN / f"{Path(example).stem}.{kind}.json"


CODE_SHA256 = "<the sha256 of pcsc's code: checked by tests/test_golden.py>"
_CODE_HASH = re.compile(r'"code_sha256": "[0-9a-f]{64}"')


def normalised(text: str) -> str:
    """``text`` with every scorer code hash replaced by `CODE_SHA256`."""
    return _CODE_HASH.sub(f'"code_sha256": "{CODE_SHA256}"', text)


def render(example: str, kind: str) -> str:
    """stdout of `pcsc compile <example> <KINDS[kind]>`, run in-process from the repo root,
    `normalised`."""
    return normalised(raw(example, kind))


def raw(example: str, kind: str) -> str:
    """stdout of `pcsc compile <example> <KINDS[kind]>`, run in-process from the repo root."""
    from pcsc.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compile", example, *KINDS[kind]])
    if code != 0:
        raise RuntimeError(f"pcsc compile {example} exited {code}:\n{err.getvalue()}")
    return out.getvalue()


def main() -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for example in examples():
        for kind in KINDS:
            path = golden_path(example, kind)
            wanted.add(path)
            text = render(example, kind)
            old = path.read_bytes() if path.exists() else None
            path.write_bytes(text.encode("utf-8"))
            state = "new" if old is None else "unchanged" if old == text.encode("utf-8") else "CHANGED"
            print(f"{state:9}  {path.relative_to(ROOT)}")
    for stale in sorted(set(GOLDEN.glob("*.json")) - wanted):
        stale.unlink()
        print(f"{'deleted':9}  {stale.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
