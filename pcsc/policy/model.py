"""The policy as typed, frozen data. Every number a score uses comes from here."""

from __future__ import annotations

from typing import Literal

import attrs

from pcsc.ir.expr import Expr


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
    id: str
    version: str
    coverage: Literal["gate", "dock", "off"] = "gate"
    extends: str | None = None
    description: str | None = None


@attrs.frozen
class Prior:
    p: float = attrs.field(validator=_unit_interval)
    floor_usd: float = attrs.field(validator=_non_negative)
    source: str


@attrs.frozen
class EvidencePolicy:
    min_tier: int = 1
    tier_weight: dict[str, float] = attrs.field(factory=dict)
    strict_point_in_time: bool = False


@attrs.frozen
class Reweighting:
    corroborate_gain: float
    contradict_gain: float
    w_min: float = attrs.field(validator=_non_negative)
    w_max: float = attrs.field(validator=_non_negative)
    decay: float = attrs.field(validator=_unit_interval)


@attrs.frozen
class FloorTable:
    points: list[tuple[float, float]]


@attrs.frozen
class Floors:
    delta: dict[str, FloorTable] = attrs.field(factory=dict)


@attrs.frozen
class Uncertainty:
    default: float = attrs.field(validator=_non_negative)


@attrs.frozen
class Buckets:
    neg_below: float
    pos_from: float


@attrs.frozen
class Gate:
    """A `[[gates]]` entry. ``expr`` is its rule compiled when the policy is loaded
    (`pcsc.policy.load`); it is not read from the file (``derived``) and is None only
    on a gate built by hand."""

    id: str
    kind: Literal["eligibility", "risk"]
    rule: str
    block: bool = False
    description: str | None = None
    expr: Expr | None = attrs.field(default=None, eq=False, repr=False, metadata={"derived": True})


@attrs.frozen
class Ranking:
    """How `pcsc rank` orders eligible routes: by the criteria score T or the released score."""

    key: Literal["criteria", "score"] = "score"


def _default_windows() -> list[int]:
    return [30, 90, 180]


@attrs.frozen
class ForecastPolicy:
    """How frozen forecasts are resolved: besides each transition's own horizon, every
    milestone is also read at these fixed windows (days after the route's as_of)."""

    windows: list[int] = attrs.field(factory=_default_windows)


@attrs.frozen
class Policy:
    policy: PolicyHeader
    priors: dict[str, Prior]
    evidence: EvidencePolicy
    reweighting: Reweighting
    uncertainty: Uncertainty
    floors: Floors = attrs.field(factory=Floors)
    criteria: dict[str, float] = attrs.field(factory=dict)
    buckets: Buckets | None = None
    gates: list[Gate] = attrs.field(factory=list)
    ranking: Ranking = attrs.field(factory=Ranking)
    forecast: ForecastPolicy = attrs.field(factory=ForecastPolicy)

    @property
    def id(self) -> str:
        return self.policy.id

    @property
    def version(self) -> str:
        return self.policy.version


@attrs.frozen
class LoadedPolicy:
    """A policy with its identity: where it came from and its canonical SHA-256."""

    policy: Policy
    path: str
    sha256: str
    resolved: dict[str, object]  # the merged TOML document the hash is taken over

    @property
    def ref(self) -> str:
        return f"{self.policy.id}@{self.policy.version}"
