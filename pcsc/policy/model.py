"""The policy as typed, frozen data. Every number a score uses comes from here."""

from __future__ import annotations

import math
from typing import Literal

import attrs

from pcsc.base.modes import Mode
from pcsc.lang.ir.expr import Expr


class PolicyValueError(ValueError):
    """A value of the right type but out of range; ``key`` names it in its table."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def _unit_interval(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise PolicyValueError(attribute.name, f"must be in [0, 1], got {value!r}")


def _non_negative(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value >= 0.0:
        raise PolicyValueError(attribute.name, f"must be at least 0, got {value!r}")


@attrs.frozen
class PolicyHeader:
    id: str = attrs.field(metadata={"doc": "The policy's name; the folder `policies/<id>/` it lives in."})
    version: str = attrs.field(
        metadata={"doc": "Its version; the file `policies/<id>/<version>.toml`. A published version never changes."}
    )
    coverage: Mode = attrs.field(
        default="gate",
        metadata={
            "doc": "What an uncovered material change does to the score: `gate` withholds it (verdict "
            "`suspend-and-ask`), `dock` removes the value over the uncovered path and releases the rest, "
            "`off` releases it unchecked. `--coverage` on the command line may set any mode; a configuration "
            "file's `coverage` may only raise it."
        },
    )
    extends: str | None = attrs.field(
        default=None,
        metadata={
            "doc": "`id@version` of a policy this one inherits from; the two are merged key by key, "
            "and the child's `id`, `version` and `coverage` are its own."
        },
    )
    description: str | None = attrs.field(default=None, metadata={"doc": "Free text about the policy."})
    local_libraries: bool = attrs.field(
        default=False,
        metadata={
            "doc": "May a library beside the route (or on `--lib-path`) replace a pinned or shipped library "
            "of the same name? When true, the packet records `local_libraries` and which file was used. "
            "It admits no new name: a route still uses only the libraries the policy names under `[libraries]`."
        },
    )


@attrs.frozen
class LibraryPin:
    """A `[libraries.<name>]` entry: a library the policy's routes may use, and the one
    content that name may resolve to. ``sha256`` is taken over the library's canonical
    text, the text `pcsc fmt` writes (comments included), so layout never changes it.
    Only a policy with `local_libraries = true` may name a library without its content."""

    version: str | None = attrs.field(
        default=None,
        metadata={
            "doc": "The library's version, as its `library … version` line states it. Required unless the "
            "policy sets `local_libraries = true`."
        },
    )
    sha256: str | None = attrs.field(
        default=None,
        metadata={
            "doc": "SHA-256 of the library's canonical text: the file as `pcsc fmt` writes it (for a formatted "
            "file saved with LF line ends, `sha256sum` of the file). Required unless the policy sets "
            "`local_libraries = true`; `pcsc policy check` prints what a pin should be."
        },
    )


@attrs.frozen
class Prior:
    p: float = attrs.field(
        validator=_unit_interval,
        metadata={"doc": "The prior probability that a transition of this class succeeds, in [0, 1]: `p_prior`."},
    )
    floor_usd: float = attrs.field(
        validator=_non_negative,
        metadata={"doc": "The least a transition of this class can cost, in USD: `floor_class`."},
    )
    source: str = attrs.field(metadata={"doc": "Where the prior and the floor come from."})


@attrs.frozen
class EvidencePolicy:
    min_tier: int = attrs.field(
        default=1, metadata={"doc": "Evidence of a lower tier is not admissible: it counts for nothing."}
    )
    tier_weight: dict[str, float] = attrs.field(
        factory=dict,
        metadata={
            "doc": "The weight of each tier (keys are whole numbers, as strings), multiplied into an item's "
            "own `weight`. Evidence of a tier at least `min_tier` that is missing here is refused (PCSC-E307)."
        },
    )
    strict_point_in_time: bool = attrs.field(
        default=False,
        metadata={
            "doc": "When true, evidence captured after the route's `as_of` is an error (PCSC-E310) "
            "instead of a warning (PCSC-W601) and an exclusion."
        },
    )


@attrs.frozen
class Reweighting:
    corroborate_gain: float = attrs.field(
        metadata={"doc": "How much saturated supporting evidence raises the weight W: `gc`."}
    )
    contradict_gain: float = attrs.field(
        metadata={"doc": "How much saturated contradicting evidence lowers the weight W: `gk`."}
    )
    w_min: float = attrs.field(validator=_non_negative, metadata={"doc": "The least W can be; at least 0."})
    w_max: float = attrs.field(
        validator=_non_negative, metadata={"doc": "The most W can be; not less than `w_min`."}
    )
    decay: float = attrs.field(
        validator=_unit_interval,
        metadata={"doc": "In [0, 1]: the i-th strongest item of evidence counts `decay^i` of its weight."},
    )


@attrs.frozen
class FloorTable:
    points: list[tuple[float, float]] = attrs.field(
        metadata={
            "doc": "Breakpoints `[|Δ|, usd]`, |Δ| positive and increasing, floors non-decreasing: the least "
            "a change of that size costs. Linear between breakpoints, from (0, 0), and past the last one "
            "along the last segment."
        }
    )


@attrs.frozen
class Floors:
    delta: dict[str, FloorTable] = attrs.field(
        factory=dict,
        metadata={"doc": "Delta-indexed floors, one table per state field: the price of a material change."},
    )


@attrs.frozen
class Uncertainty:
    default: float = attrs.field(
        validator=_non_negative,
        metadata={"doc": "The uncertainty U of a transition that lists fewer than two `estimates`."},
    )


@attrs.frozen
class Buckets:
    neg_below: float = attrs.field(metadata={"doc": "A criteria score T below this is bucket `neg`."})
    pos_from: float = attrs.field(
        metadata={"doc": "A criteria score T at or above this is bucket `pos`; between the two, `mix`."}
    )


@attrs.frozen
class Gate:
    """A `[[gates]]` entry. ``expr`` is its rule compiled when the policy is loaded
    (`pcsc.policy.load`); it is not read from the file (``derived``) and is None only
    on a gate built by hand."""

    id: str = attrs.field(metadata={"doc": "The gate's name, unique in the policy; `extends` merges gates by id."})
    kind: Literal["eligibility", "risk"] = attrs.field(
        metadata={"doc": "`eligibility` gates always block when they fail; `risk` gates only with `block = true`."}
    )
    rule: str = attrs.field(
        metadata={"doc": "An expression over the route's numbers that must hold (see the language reference)."}
    )
    block: bool = attrs.field(
        default=False, metadata={"doc": "Whether a failed `risk` gate makes the route ineligible."}
    )
    description: str | None = attrs.field(default=None, metadata={"doc": "Free text about the gate."})
    expr: Expr | None = attrs.field(default=None, eq=False, repr=False, metadata={"derived": True})


@attrs.frozen
class Ranking:
    """How `pcsc rank` orders eligible routes: by the criteria score T or the released score."""

    key: Literal["criteria", "score"] = attrs.field(
        default="score",
        metadata={
            "doc": "What orders eligible routes in `pcsc rank` and `pcsc freeze`: the released `score` or the "
            "criteria score T (`criteria`)."
        },
    )


def _default_windows() -> list[int]:
    return [30, 90, 180]


@attrs.frozen
class ForecastPolicy:
    """How frozen forecasts are resolved: besides each transition's own horizon, every
    milestone is also read at these fixed windows (days after the route's as_of)."""

    windows: list[int] = attrs.field(
        factory=_default_windows,
        metadata={"doc": "Days after the route's as_of at which every milestone is also read; positive, increasing."},
    )


@attrs.frozen
class FitRecord:
    """How `pcsc policy fit` wrote this version: the routes it held out, which
    `pcsc policy compare` grades on when `--holdout` is not given."""

    holdout: float = attrs.field(
        validator=_unit_interval,
        metadata={
            "doc": "The share of routes held out of the fit, in [0, 1]: a route is held out when the first byte "
            "of SHA-256(route name) is below 256·holdout."
        },
    )
    strength: float = attrs.field(
        validator=_non_negative, metadata={"doc": "The prior strength the fit used, in pseudo-transitions."}
    )
    gain_strength: float | None = attrs.field(
        default=None,
        metadata={
            "doc": "When the fit also refitted the reweighting gains: the strength S of the penalty "
            "(S/2)·Σ(g − g_old)² that held them toward the old gains."
        },
    )
    calibration: Literal["isotonic", "platt"] | None = attrs.field(
        default=None, metadata={"doc": "When the fit also fitted a calibration map: its method."}
    )


@attrs.frozen
class IsotonicMap:
    """The breakpoints of an isotonic calibration map."""

    x: list[float] = attrs.field(
        metadata={
            "doc": "The p before calibration at each breakpoint: in [0, 1], strictly increasing, at least one."
        }
    )
    y: list[float] = attrs.field(
        metadata={
            "doc": "The calibrated p at each breakpoint: in [0, 1], non-decreasing, as many as `x`. Between "
            "breakpoints the map is linear; below the first and above the last it is flat."
        }
    )


@attrs.frozen
class PlattMap:
    """The two coefficients of a Platt (logistic) calibration map."""

    a: float = attrs.field(metadata={"doc": "The intercept: `p' = 1 / (1 + exp(−(a + b·logit(p))))`."})
    b: float = attrs.field(
        validator=_non_negative,
        metadata={
            "doc": "The slope on logit(p), at least 0 (so the map never reverses an order); logit(p) is taken "
            "of p clipped to [1e-9, 1 − 1e-9]."
        },
    )


@attrs.frozen
class Calibration:
    """A map applied to each transition's p after p = clip(p_prior·W, 0, 1): the score
    folds the calibrated p. `pcsc policy fit --calibration` writes it."""

    method: Literal["isotonic", "platt"] = attrs.field(
        metadata={
            "doc": "Which map applies: `isotonic` (the breakpoints of `[calibration.isotonic]`, linear between "
            "them) or `platt` (the coefficients of `[calibration.platt]`). The other method's table, if "
            "inherited through `extends`, is not used."
        }
    )
    isotonic: IsotonicMap | None = attrs.field(
        default=None, metadata={"doc": "The isotonic map's breakpoints; required when `method = \"isotonic\"`."}
    )
    platt: PlattMap | None = attrs.field(
        default=None, metadata={"doc": "The Platt map's coefficients; required when `method = \"platt\"`."}
    )
    source: str | None = attrs.field(default=None, metadata={"doc": "Where the map comes from (how it was fitted)."})


def _rate(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (value >= 0.0 and value < float("inf")):
        raise PolicyValueError(attribute.name, f"must be a finite number at least 0, got {value!r}")


@attrs.frozen
class FoldPolicy:
    """Which fold scores a route. The defaults are the paper's staged fold."""

    discount: float = attrs.field(
        default=0.0,
        validator=_rate,
        metadata={
            "doc": "An annual discount rate r (at least 0, finite) applied along each transition's horizon: "
            "`R_i = −c_i + p_i·d_i·R_{i+1}` with `d_i = (1 + r)^(−h_i)`, `h_i` the horizon in years of "
            "365.25 days (a month is 1/12 year; no horizon: `d_i = 1`). 0, the default, is the paper's fold."
        },
    )
    abandonment: bool = attrs.field(
        default=False,
        metadata={
            "doc": "When true, the fold may stop before paying a stage whose continuation is worth less than "
            "nothing: `R_i = max(0, −c_i + p_i·d_i·R_{i+1})`, and D and the binding transition use that R. "
            "Off by default (the paper's fold)."
        },
    )

    @property
    def is_default(self) -> bool:
        return self.discount == 0.0 and not self.abandonment


def _finite_non_negative(_: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not (math.isfinite(value) and value >= 0.0):
        raise PolicyValueError(attribute.name, f"must be a finite amount of at least 0, got {value!r}")


@attrs.frozen
class PayoffPolicy:
    """Whether a route's states may carry payoffs, and how much one may credit."""

    max_usd: float = attrs.field(
        validator=_finite_non_negative,
        metadata={
            "doc": "The most one state's payoff credits, in usd: a state that writes more is credited this "
            "(`explain` shows both, and which bound the credit). A policy without `[payoffs]` admits no payoff "
            "(PCSC-E419)."
        },
    )


@attrs.frozen
class Policy:
    policy: PolicyHeader = attrs.field(metadata={"doc": "The policy's identity and coverage mode."})
    priors: dict[str, Prior] = attrs.field(
        metadata={"doc": "One table per reference class, named by the string a transition's `class` line gives."}
    )
    evidence: EvidencePolicy = attrs.field(metadata={"doc": "Which evidence is admissible and what each tier weighs."})
    reweighting: Reweighting = attrs.field(metadata={"doc": "How evidence moves a prior: the weight W."})
    uncertainty: Uncertainty = attrs.field(metadata={"doc": "The uncertainty U that picks the binding transition."})
    floors: Floors = attrs.field(factory=Floors, metadata={"doc": "Cost floors priced by the size of a change."})
    criteria: dict[str, float] = attrs.field(
        factory=dict,
        metadata={"doc": "The weight of each criterion a route may score in its `criteria` block; at least 0."},
    )
    buckets: Buckets | None = attrs.field(
        default=None, metadata={"doc": "How the criteria score T maps to a predicted bucket; no bucket without it."}
    )
    gates: list[Gate] = attrs.field(
        factory=list, metadata={"doc": "Rules a route must pass to be eligible for ranking, as `[[gates]]` tables."}
    )
    ranking: Ranking = attrs.field(factory=Ranking, metadata={"doc": "How `pcsc rank` orders eligible routes."})
    fold: FoldPolicy = attrs.field(
        factory=FoldPolicy,
        metadata={"doc": "Which fold scores a route: discounting and the option to stop (default: the paper's fold)."},
    )
    libraries: dict[str, LibraryPin] = attrs.field(
        factory=dict,
        metadata={
            "doc": "Libraries pinned by name: the obligations that judge a route belong to the policy. A route "
            "may use only the libraries named here (a policy that names none admits the libraries PCSC ships, "
            "held to their shipped content), and a pinned name must resolve to exactly this content; pins are "
            "inherited through `extends`."
        },
    )
    forecast: ForecastPolicy = attrs.field(
        factory=ForecastPolicy,
        metadata={"doc": "How frozen forecasts resolve: the fixed windows read besides each transition's horizon."},
    )
    payoffs: PayoffPolicy | None = attrs.field(
        default=None,
        metadata={"doc": "Payoffs credited when a state is reached, and their cap; none are admitted without it."},
    )
    fit: FitRecord | None = attrs.field(
        default=None,
        metadata={"doc": "Written by `pcsc policy fit`: the hold-out split of the fit, which `policy compare` uses."},
    )
    calibration: Calibration | None = attrs.field(
        default=None,
        metadata={
            "doc": "A calibration map applied to each transition's p after the prior and W (none by default: "
            "p = clip(p_prior·W, 0, 1) is scored as is)."
        },
    )

    @property
    def id(self) -> str:
        return self.policy.id

    @property
    def version(self) -> str:
        return self.policy.version


#: Where a policy or library file was found: shipped with PCSC; in a folder given on
#: the command line (--policy-path, --lib-path), by the Python API's arguments, or by a
#: configuration file's policy_path or lib_path; beside the route (a library); a policy
#: file given by its path; a search folder no one labelled (a store built in code).
FoundIn = Literal["shipped", "command line", "api argument", "config", "route folder", "file", "search path"]


@attrs.frozen
class Found:
    """Where one policy or library file came from: ``file`` as shown (None for a shipped
    file) and, when a configuration file's folder list led to it, that ``config`` file."""

    where: FoundIn
    file: str | None
    config: str | None = None

    def as_json(self) -> dict[str, str | None]:
        return {"in": self.where, "file": self.file, "config": self.config}


@attrs.frozen
class LoadedPolicy:
    """A policy with its identity: where it came from and its canonical SHA-256."""

    policy: Policy
    path: str
    sha256: str
    resolved: dict[str, object]  # the merged TOML document the hash is taken over
    #: where this policy's file, then each it `extends` (nearest first), was found: (ref, where)
    found: tuple[tuple[str, Found], ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.policy.id}@{self.policy.version}"
