"""Pause the cyclic garbage collector while a pass builds a large, acyclic structure.

Parsing and lowering a file allocate many objects that all stay alive (tokens, nodes,
IR); each full collection then walks every live object, so with the collector on, a
file of 1,000 routes costs more per line than a file of one. Those passes create no
garbage cycles worth collecting, so the collector is paused while they run (reference
counting still frees everything else) and resumed after, as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
