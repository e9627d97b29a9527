"""PCSC: a proof-carrying strategy compiler.

The pipeline, one package per stage (docs/architecture.md):

    lang (parse, lower: IR + checks) -> policy (load, pin) -> score (numbers)
        -> coverage (GATE / DOCK) -> compiler (the session) -> analysis -> render -> cli, api

As a library (docs/api.md)::

    import pcsc
    r = pcsc.compile("examples/")
    print(r.route("devtools_api").score)

The public API is exactly the names in ``__all__`` (written once, in
`pcsc.api.core`); every other module and name is private and may change. ``import
pcsc`` is cheap: the API (and with it the parser, the pipeline and their
dependencies) is imported on first use of one of its names, ``__all__`` included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcsc._version import __version__ as __version__

if TYPE_CHECKING:  # the names below, for type checkers; at run time `__getattr__` loads them
    from pcsc.api.core import *  # noqa: F403  (the names of `pcsc.api.core.__all__`)


def __getattr__(name: str) -> Any:
    """Load the API on first use of a public name (PEP 562), keeping ``import pcsc`` cheap.
    ``__all__`` is the API's own list (`pcsc.api.core.__all__`) and ``__version__``."""
    from pcsc.api import core as _api

    if name == "__all__":
        value: Any = [*_api.__all__, "__version__"]
    elif name in _api.__all__:
        value = getattr(_api, name)
    else:
        raise AttributeError(f"module 'pcsc' has no attribute {name!r}")
    globals()[name] = value  # later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
