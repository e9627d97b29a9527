"""The numbers of docs/formulas.md, computed with floats from the IR and the policy.

Nothing here imports sympy or numpy: this is the hot path of `check` and `compile`.
Each number carries the rule and inputs that produced it (see `explain`).
"""

from pcsc.score.route import RouteNumbers, TransitionNumbers, score_route

__all__ = ["RouteNumbers", "TransitionNumbers", "score_route"]
