"""The policy as typed, frozen data. Every number a score uses comes from here."""

from __future__ import annotations

import math
from typing import Literal

import attrs

from pcsc.base.modes import Mode
from pcsc.lang.ir.expr import Expr
from pcsc.lang.lower.vision import DEFAULT_VISION_FIELDS, DEFAULT_VISION_VALUE


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
    p_max: float = attrs.field(
        default=1.0,
        validator=_unit_interval,
        metadata={
            "doc": "The most any p can be: `p = clip(p_prior · W, 0, p_max)`, with or without evidence. In "
            "[0, 1]; 1, the default, is the plain clip to a probability. Below 1 it keeps a strong prior "
            "and supporting evidence from making a step certain (0.9 × W = 1.25 is 1.125, clipped to 1)."
        },
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
    by_class: dict[str, dict[str, FloorTable]] = attrs.field(
        factory=dict,
        metadata={
            "doc": "Delta-indexed floors for the transitions of one reference class, one table per state field "
            '(`[floors.by_class."<class>".<field>]`): for a transition of that class, its table for a field '
            "replaces `[floors.delta.<field>]`; other classes, and fields it does not list, use `[floors.delta]`."
        },
    )

    def table(self, ref_class: str, field: str) -> FloorTable | None:
        """The floor table of ``field`` for a transition of ``ref_class``: the class's own
        table when it has one, else the field's (None: the change is not priced)."""
        own = self.by_class.get(ref_class, {}).get(field)
        return own if own is not None else self.delta.get(field)

    def key(self, ref_class: str, field: str) -> tuple[str, ...]:
        """Where `table` found the table, as a policy key path."""
        if field in self.by_class.get(ref_class, {}):
            return ("floors", "by_class", ref_class, field)
        return ("floors", "delta", field)

    def priced(self, ref_class: str) -> set[str]:
        """The fields a transition of ``ref_class`` has a floor table for."""
        return {*self.delta, *self.by_class.get(ref_class, {})}


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
            "(PCSC-E419). Under a fold kept in another unit, a payoff written without a unit (in the fold's "
            "own) is capped at this amount times `[units.rates] usd`."
        },
    )


def _default_vision_fields() -> dict[str, str]:
    return dict(DEFAULT_VISION_FIELDS)


@attrs.frozen
class VisionPolicy:
    """How the vision's value V is computed from the values a route's vision states.
    ``expr`` is ``value`` compiled when the policy is loaded (`pcsc.policy.load`)."""

    value: str = attrs.field(
        default=DEFAULT_VISION_VALUE,
        metadata={
            "doc": "The formula of V, in the expression language of `require` lines and gate rules, over the "
            "names `fields` declares (`+ - * /`, numbers, `min`, `max`, parentheses). Its result is in the "
            "fold's unit (`[units] fold`): a `usd` field is converted at `[units.rates] usd` as it is read. "
            "The default is the venture formula."
        },
    )
    fields: dict[str, str] = attrs.field(
        factory=_default_vision_fields,
        metadata={
            "doc": "The values a route's vision states, each with its kind: `usd` (an amount: `5M usd`), "
            "`ratio` (in [0, 1], or a percentage), `count` or `number` (at least 0). Every "
            "field must be one the formula reads, and a vision states each one. `extends` replaces the whole "
            "`[vision]` table: a formula and its fields go together."
        },
    )
    expr: Expr | None = attrs.field(default=None, eq=False, repr=False, metadata={"derived": True})
    #: the line of `value =` in the policy file that wrote it (0 when unknown or defaulted)
    line: int = attrs.field(default=0, eq=False, repr=False, metadata={"derived": True})
    #: that file, as shown to the user (a policy's own, or the one it extends)
    file: str = attrs.field(default="", eq=False, repr=False, metadata={"derived": True})

    @property
    def is_default(self) -> bool:
        return self.value == DEFAULT_VISION_VALUE and self.fields == dict(DEFAULT_VISION_FIELDS)


@attrs.frozen
class UnitsPolicy:
    """The unit every amount of the fold is kept in (costs, floors, the vision's value,
    the score), and what the amounts a route writes in another unit are worth in it."""

    fold: str = attrs.field(
        default="usd",
        metadata={
            "doc": "The name of the unit the fold is kept in: `usd`, or any name the policy chooses "
            "(`impact_points`, `researcher_months`). Every amount PCSC prints (c, D, R, the value, the score) is "
            "printed in it. Class and delta floors (`floor_usd`, `floors.delta`) are in this unit."
        },
    )
    rates: dict[str, float] = attrs.field(
        factory=dict,
        metadata={
            "doc": "What one unit a route writes is worth in the fold's unit (`usd = 0.001`: 1 usd is 0.001 "
            "of the fold's unit). A route writes amounts in `usd` (cost items, `learning_cost`, `usd` "
            "vision fields); under a fold kept in another unit, such an amount without a rate here is an "
            "error (PCSC-E416). Positive and finite; a fold kept in usd takes no rate."
        },
    )

    @property
    def is_default(self) -> bool:
        return self.fold == "usd" and not self.rates

    @property
    def label(self) -> str:
        """The unit as outputs print it beside an amount: `USD`, or the fold's own name."""
        return "USD" if self.fold == "usd" else self.fold

    def rate(self, unit: str) -> float | None:
        """How many fold units one ``unit`` is worth; None when the policy does not say."""
        return 1.0 if unit == self.fold else self.rates.get(unit)


@attrs.frozen
class Admission:
    """What a transition of one reference class may claim (`pcsc/coverage/admission.py`).
    ``checks`` are the expressions of ``require`` and ``bounds`` compiled when the policy
    is loaded (``derived``: not read from the file)."""

    fields: list[str] = attrs.field(
        metadata={
            "doc": "The only fields a transition of this class may change materially; a material change of any "
            "other field is refused (PCSC-E502)."
        }
    )
    bounds: dict[str, str] = attrs.field(
        factory=dict,
        metadata={
            "doc": "Per field, an expression that must hold when the field changes materially, over `delta` "
            "(target − source), `source`, `target` and `relative` (delta / |source|; `none` from 0), with "
            "`abs`, `min`, `max`: `\"abs(delta) <= 0.1\"` bounds it absolutely, `\"relative <= 50%\"` relatively."
        },
    )
    require: list[str] = attrs.field(
        factory=list,
        metadata={
            "doc": "Expressions in the vocabulary of an obligation's `require` lines that must hold for the "
            "transition, with `delta` every material change of it: the evidence tier a class needs is "
            "`\"evidence(tier >= 2) >= 1\"`."
        },
    )
    checks: tuple[tuple[str, str, Expr], ...] = attrs.field(
        default=(), eq=False, repr=False, metadata={"derived": True}
    )  # (field or "", text, expression): bounds by field, then require lines


RegistryMode = Literal["off", "report", "required"]


@attrs.frozen
class CoverageOptions:
    """What coverage checks besides the obligations."""

    registry: RegistryMode = attrs.field(
        default="off",
        metadata={
            "doc": "How a route is held to its gold registry (`[registry.<route>]`): `required` refuses a route "
            "that skips a registry state, passes them out of order, restates a registry field or has no "
            "registry entry (PCSC-E503); `report` counts and shows the same without refusing (PCSC-W504); "
            "`off` does not look."
        },
    )
    registry_file: str | None = attrs.field(
        default=None,
        metadata={
            "doc": "A TOML file of `[registry.<route>]` tables, written apart from the policy, named relative to "
            "the folder of the policy file that names it (and inside it); its tables join the policy's own."
        },
    )
    registry_sha256: str | None = attrs.field(
        default=None,
        metadata={
            "doc": "SHA-256 of the registry file's bytes (`sha256sum`); required with `registry_file`: a file "
            "with other content is refused (PCSC-E403), so the policy's hash pins the registry too."
        },
    )


@attrs.frozen
class RegistryState:
    name: str = attrs.field(metadata={"doc": "The state's name, as the route must name it."})
    fields: dict[str, float | bool] = attrs.field(
        factory=dict,
        metadata={
            "doc": "The value each listed field must have in that state (USD, counts and ratios in base units: "
            "`0.28`, not `28%`)."
        },
    )


@attrs.frozen
class Registry:
    """The gold chain of one route, written before any route is scored."""

    states: list[RegistryState] = attrs.field(
        metadata={"doc": "The typed states the route must pass through, in the order it must pass them."}
    )
    source: str | None = attrs.field(default=None, metadata={"doc": "Who wrote the registry, and from what."})


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
    vision: VisionPolicy = attrs.field(
        factory=VisionPolicy,
        metadata={"doc": "How the vision's value V is computed (default: `tam * capture * defensibility`)."},
    )
    units: UnitsPolicy = attrs.field(
        factory=UnitsPolicy,
        metadata={"doc": "The unit the fold is kept in (default: usd) and the rates of the units a route writes."},
    )
    admission: dict[str, Admission] = attrs.field(
        factory=dict,
        metadata={
            "doc": "Per reference class, what a transition of that class may claim: the fields it may change, "
            "a bound on each change, and what else must hold (such as the evidence tier). Once a policy "
            "(with what it extends) has any admission table, a class without one admits no material change; "
            "a policy with none admits every claim."
        },
    )
    coverage: CoverageOptions = attrs.field(
        factory=CoverageOptions, metadata={"doc": "What coverage checks besides the obligations."}
    )
    registry: dict[str, Registry] = attrs.field(
        factory=dict,
        metadata={
            "doc": "Per route (by its name), the gold registry: the states it must pass through in order and "
            "the values each must carry. Read only when `coverage.registry` is not `off`."
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
