"""`pcsc check --watch`: run the command, then again whenever a file it reads changes,
until Ctrl-C (exit 130). Files are polled (their size and modification time): no
extra package, and the same on every system."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from pcsc.base.config import find_configs
from pcsc.base.humanize import plural

#: What a change to which re-runs the command: routes, libraries, policies and settings.
WATCHED = (".route", ".obl", ".toml")
INTERVAL = 0.3  # seconds between polls


def snapshot(roots: Iterable[Path]) -> dict[str, tuple[int, int]]:
    """Size and modification time of every watched file under ``roots`` (folders walked,
    links not followed) and of the configuration files above them."""
    seen: dict[str, tuple[int, int]] = {}

    def note(path: Path) -> None:
        try:
            st = path.stat()
        except OSError:
            seen[str(path)] = (-1, -1)  # gone: a change too
            return
        seen[str(path)] = (st.st_size, st.st_mtime_ns)

    for root in roots:
        if root.is_dir():
            for folder, _, names in os.walk(root):
                for name in names:
                    if name.endswith(WATCHED):
                        note(Path(folder) / name)
        else:
            note(root)
        for config in find_configs((root if root.is_dir() else root.parent).resolve()):
            note(config)
    return seen


def settled(roots: list[Path], interval: float) -> None:
    """Wait until nothing changes for one interval: an editor (or a checkout) writing
    several files, or one in several steps, is checked once it is done."""
    last = snapshot(roots)
    while True:
        time.sleep(interval)
        now = snapshot(roots)
        if now == last:
            return
        last = now


def watch(roots: list[Path], run_once: Callable[[], int], interval: float = INTERVAL) -> int:
    """``run_once`` now and after every change under ``roots``; 130 on Ctrl-C."""
    try:
        while True:
            before = snapshot(roots)
            run_once()
            sys.stderr.write(f"pcsc: watching {plural(len(before), 'file')} for changes (Ctrl-C stops)\n")
            sys.stderr.flush()
            while snapshot(roots) == before:
                time.sleep(interval)
            settled(roots, interval)
            sys.stderr.write("pcsc: a file changed; running again\n")
    except KeyboardInterrupt:
        return 130
