"""The vision's value V: the policy's formula (`[vision] value`) over the values the
route's vision states, each `usd` field in the fold's unit (`pcsc.score.units`).

The default formula is the venture one, V = tam × capture × defensibility, computed
as it always was: left to right, in floats.
"""

from __future__ import annotations

import math

from pcsc.base.humanize import significant
from pcsc.lang.interp import BASE_FUNCTIONS, EvalError, Interpreter
from pcsc.lang.ir import Vision
from pcsc.policy.load import compile_rule
from pcsc.policy.model import Policy
from pcsc.score.finite import NotFinite, checked
from pcsc.score.units import in_fold, usd_rate

_FUNCTIONS = {name: BASE_FUNCTIONS[name] for name in ("min", "max")}


class VisionValueError(NotFinite):
    """The formula cannot compute a finite value from this vision's values (a division
    by zero, an overflow); ``problem`` says which, ``inputs`` what it read."""

    def __init__(self, problem: str, vision: Vision, policy: Policy, inputs: dict[str, float]) -> None:
        super().__init__(f"the vision's value: {problem}", vision.span)
        self.problem = problem
        self.inputs = inputs
        self.formula = policy.vision.value
        self.line = policy.vision.line


def vision_inputs(vision: Vision, policy: Policy) -> dict[str, float]:
    """The formula's names and values: each declared field as the vision states it,
    a `usd` field in the fold's unit."""
    rate = usd_rate(policy)
    kinds = policy.vision.fields
    return {name: in_fold(vision.get(name), rate) if kind == "usd" else vision.get(name)
            for name, kind in kinds.items()}


def vision_value(vision: Vision, policy: Policy) -> float:
    """V for ``vision`` under ``policy``'s formula; `VisionValueError` when it is not a
    finite number."""
    if policy.vision.is_default:  # the venture formula, exactly as it was always computed
        tam, capture, defensibility = vision.tam, vision.capture, vision.defensibility
        tam = in_fold(tam, usd_rate(policy))
        return checked(tam * capture * defensibility, "the value tam × capture × defensibility",
                       tam, capture, defensibility)
    inputs = vision_inputs(vision, policy)
    expr = policy.vision.expr if policy.vision.expr is not None else compile_rule(policy.vision.value)
    try:
        value = Interpreter(inputs, _FUNCTIONS).eval(expr)
    except EvalError as err:
        raise VisionValueError(err.message, vision, policy, inputs) from None
    except OverflowError:
        value = math.inf
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise VisionValueError("the formula does not compute a number", vision, policy, inputs)
    if not math.isfinite(value):
        shown = ", ".join(f"{k} = {significant(v)}" for k, v in inputs.items())
        raise VisionValueError(f"the result is not a finite number (from {shown})", vision, policy, inputs)
    return float(value)
