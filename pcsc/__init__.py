"""PCSC: a proof-carrying strategy compiler.

The pipeline, one package per stage (docs/architecture.md):

    lang (parse, lower: IR + checks) -> policy (load, pin) -> score (numbers)
        -> coverage (GATE / DOCK) -> compiler (the session) -> analysis -> render -> cli, api

As a library (docs/api.md)::

    import pcsc
    r = pcsc.compile("examples/")
    print(r.route("devtools_api").score)

The public API is exactly the names in ``__all__``; every other module and name is
private and may change. ``import pcsc`` is cheap: the API (and with it the parser,
the pipeline and their dependencies) is imported on first use of one of its names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pcsc._version import __version__

if TYPE_CHECKING:
    from pcsc.api.core import (
        Attempt,
        Binding,
        CheckResult,
        CoverageMode,
        CoverageSetting,
        DeltaResult,
        Diagnostic,
        ExperimentMode,
        ExperimentResult,
        FailedRequire,
        Gate,
        Input,
        Ledger,
        LedgerEntry,
        LedgerError,
        LedgerVerification,
        PathLike,
        Policy,
        PolicyError,
        PolicyInfo,
        Result,
        RouteResult,
        RouteSeamsResult,
        SeamPipeline,
        SeamResult,
        SeamsResult,
        SeamsSummary,
        Source,
        TransitionResult,
        Uncovered,
        Verdict,
        analyse_seams,
        check,
        compile,
        load_policy,
        open_ledger,
    )

__all__ = [
    "Attempt",
    "Binding",
    "CheckResult",
    "CoverageMode",
    "CoverageSetting",
    "DeltaResult",
    "Diagnostic",
    "ExperimentMode",
    "ExperimentResult",
    "FailedRequire",
    "Gate",
    "Input",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "LedgerVerification",
    "PathLike",
    "Policy",
    "PolicyError",
    "PolicyInfo",
    "Result",
    "RouteResult",
    "RouteSeamsResult",
    "SeamPipeline",
    "SeamResult",
    "SeamsResult",
    "SeamsSummary",
    "Source",
    "TransitionResult",
    "Uncovered",
    "Verdict",
    "analyse_seams",
    "__version__",
    "check",
    "compile",
    "load_policy",
    "open_ledger",
]


def __getattr__(name: str) -> Any:
    """Load the API on first use of a public name (PEP 562), keeping ``import pcsc`` cheap."""
    if name in __all__:
        from pcsc.api import core as _api

        value = getattr(_api, name)
        globals()[name] = value  # later lookups do not come back here
        return value
    raise AttributeError(f"module 'pcsc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
