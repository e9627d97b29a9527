"""The independent checker of decision certificates (`pcsc verify-cert`).

It imports only the standard library, nothing of PCSC (a test scans this file), and
recomputes every number of a certificate from the operands recorded beside it with
its own implementation of each rule, in exact rational arithmetic: a step the
compiler computes in floats is computed here exactly and rounded to the nearest float
after each operation, as IEEE arithmetic does; a step the compiler computes exactly
and rounds once (sat, W, a floor price) is computed exactly here, compared with the
recorded exact value, and rounded once. Every comparison is exact.

It also checks that each operand taken from another step is that step's value, that
each operand taken from the policy is the value of that key in the policy document it
reads and hashes itself (TOML, `extends` merged, the recorded overrides set), that the
coverage decisions follow from the recorded `require` results (comparisons, names and
`measured(delta)` evaluated again) and the verdict from the coverage, that the route
files and libraries hash to what was recorded, and, last, that the certificate's
digest matches its body. The first difference is the answer.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

FORMAT = "pcsc-decision-certificate"


class Mismatch(Exception):
    """The first difference: ``what`` names it (a file, a step, a coverage decision)."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what
        self.message = message


# ---------------------------------------------------------------------- arithmetic
def rnd(x: Fraction) -> Fraction:
    """``x`` rounded to the nearest float (ties to even), as an exact rational."""
    return Fraction(x.numerator / x.denominator)


def parse_q(text: str) -> Fraction:
    n, _, d = text.partition("/")
    return Fraction(int(n), int(d))


def show(x: Fraction | None) -> str:
    return "none" if x is None else repr(float(x))


def clip(x: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
    return lo if x < lo else hi if x > hi else x


# ---------------------------------------------------------------------- files
def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_of(path: Path, what: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Mismatch(what, f"cannot be read from {path}: {exc}") from None


def jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Key-by-key override; tables merge recursively; gates merge by id; arrays replace."""
    out = dict(base)
    for key, value in child.items():
        if key == "gates" and isinstance(value, list) and isinstance(base.get(key), list):
            by_id = {g.get("id"): g for g in base[key] if isinstance(g, dict)}
            order = [g.get("id") for g in base[key] if isinstance(g, dict)]
            for g in value:
                gid = g.get("id") if isinstance(g, dict) else None
                if gid not in by_id:
                    order.append(gid)
                by_id[gid] = g
            out[key] = [by_id[g] for g in order]
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = merge(base[key], value)
        else:
            out[key] = value
    return out


class Files:
    """Where the recorded files are read: ``--against`` files by name first, else the
    recorded path under its base (the certificate's folder or a shipped folder)."""

    def __init__(self, bases: Mapping[str, Path], against: Sequence[Path]) -> None:
        self.bases = bases
        self.against = list(against)

    def locate(self, entry: Mapping[str, Any]) -> Path:
        name = Path(entry["path"]).name
        for given in self.against:
            if given.name == name:
                return given
        base = self.bases.get(entry["base"])
        if base is None:
            raise Mismatch(entry["path"], f"no folder for the base `{entry['base']}`")
        return Path(base) / str(entry["path"])


def policy_document(record: Mapping[str, Any], files: Files) -> dict[str, Any]:
    """The resolved document of a recorded policy: its files (top first) read as TOML
    and merged from the root of the `extends` chain down."""
    resolved: dict[str, Any] | None = None
    for entry in reversed(record["files"]):
        what = f"policy {entry['ref']} ({entry['path']})"
        try:
            doc = tomllib.loads(text_of(files.locate(entry), what))
        except tomllib.TOMLDecodeError as exc:
            raise Mismatch(what, f"not valid TOML: {exc}") from None
        if resolved is not None:
            header = resolved.get("policy", {})
            base = dict(resolved)
            base["policy"] = {k: v for k, v in header.items() if k not in ("extends", "description")}
            doc = merge(base, doc)
        resolved = doc
    assert resolved is not None
    out: dict[str, Any] = jsonable(resolved)
    return out


def set_key(document: dict[str, Any], path: Sequence[str], value: Any) -> None:
    node = document
    for part in path[:-1]:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[path[-1]] = value


def lookup(document: Mapping[str, Any], path: Sequence[str]) -> Any:
    node: Any = document
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


# ---------------------------------------------------------------------- one route
class RouteCheck:
    def __init__(self, route: Mapping[str, Any], policy: Mapping[str, Any]) -> None:
        self.route = route
        self.name = route["route"]
        self.policy = policy
        self.values: dict[str, Any] = {}  # symbol -> Fraction | other value
        self.exact: dict[str, Fraction] = {}

    def fail(self, what: str, message: str) -> Mismatch:
        return Mismatch(f"route {self.name}: {what}", message)

    def number(self, o: Mapping[str, Any], what: str) -> Fraction:
        """An operand or value: its float and rational must agree; a step's must be that
        step's value; a policy key's must be the policy's."""
        if not isinstance(o, Mapping) or "f" not in o or "q" not in o:
            raise self.fail(what, "expected a number {f, q}")
        f = o["f"]
        x = Fraction(f)
        if parse_q(o["q"]) != x:
            raise self.fail(what, f"float {f!r} and rational {o['q']} differ")
        if "step" in o:
            ref = o["step"]
            if ref not in self.values:
                raise self.fail(what, f"refers to `{ref}`, which no earlier step computes")
            if self.values[ref] != x:
                raise self.fail(what, f"is {f!r}, but step `{ref}` is {show(self.values[ref])}")
        if "policy" in o:
            self.policy_value(o["policy"], x, what)
        return x

    def policy_value(self, key: Sequence[str], x: Any, what: str) -> None:
        actual = lookup(self.policy, key)
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            if key[:2] == ["evidence", "tier_weight"] and actual is None and x == 0:
                return  # a tier the policy does not list weighs 0
            raise self.fail(what, f"policy key {'.'.join(key)} is {actual!r}, not a number")
        if Fraction(actual) != x:
            raise self.fail(what, f"is {show(x)}, but the policy's {'.'.join(key)} is {actual!r}")

    def policy_points(self, points: Mapping[str, Any], what: str) -> None:
        actual = lookup(self.policy, points["policy"])
        ok = isinstance(actual, list) and all(isinstance(p, list) and len(p) == 2 for p in actual)
        if not ok or [[Fraction(a), Fraction(b)] for a, b in actual] != [
            [Fraction(a), Fraction(b)] for a, b in points["v"]
        ]:
            raise self.fail(what, f"points are not the policy's {'.'.join(points['policy'])}")

    def exact_of(self, o: Mapping[str, Any], what: str) -> Fraction:
        x = self.number(o, what)
        ref = o.get("step")
        return self.exact.get(ref, x) if ref else x

    # ------------------------------------------------------------------ rules
    def run(self) -> None:
        for s in self.route["steps"]:
            symbol, rule, ops, value = s["symbol"], s["rule"], s["operands"], s["value"]
            what = f"{symbol} ({rule})"
            handler = RULES.get(rule)
            if handler is None:
                raise self.fail(what, "unknown rule")
            got = handler(self, ops, what)
            if "exact" in value:
                exact, rounded = got if isinstance(got, tuple) else (None, got)
                if exact is not None:
                    if parse_q(value["exact"]) != exact:
                        raise self.fail(what, f"exact value {value['exact']} is not the recomputed {exact}")
                    self.exact[symbol] = exact
                got = rounded
            elif isinstance(got, tuple):
                got = got[1]
            if "v" in value:
                recorded: Any = value["v"]
                if recorded != got or type(recorded) is not type(got):
                    raise self.fail(what, f"recorded {recorded!r}, recomputed {got!r}")
                self.values[symbol] = got
                continue
            x = self.number(value, what)
            if x != got:
                raise self.fail(what, f"recorded {show(x)}, recomputed {show(got)}")
            self.values[symbol] = x

    def check_coverage_and_verdict(self) -> None:
        prices = {s["symbol"]: s for s in self.route["steps"] if ".price[" in s["symbol"]}
        has_floor = set((self.policy.get("floors") or {}).get("delta") or {})
        uncovered = 0
        mode = self.route["decision"]["mode"]
        for row in self.route["coverage"]:
            where = f"coverage {row['transition']}.{row['field']}"
            material = is_material(row["material_rule"], row["source"], row["target"])
            if material != row["material"]:
                raise self.fail(where, f"material is recorded {row['material']}, recomputed {material}")
            symbol = f"{row['transition']}.price[{row['field']}]"
            if (material and row["field"] in has_floor) != (symbol in prices):
                raise self.fail(where, "the delta floor prices a change that is not material, or misses one")
            if symbol in prices:
                ops = prices[symbol]["operands"]
                change = (float(ops["source"]["f"]), float(ops["target"]["f"]))
                if change != (float(row["source"]), float(row["target"])):
                    raise self.fail(symbol, "its change is not the coverage row's")
            if not material or mode == "off":
                continue
            by = None
            for o in row["obligations"]:
                holds = True
                for req in o["requires"]:
                    result = evaluate_require(req)
                    if result is not None and result != req["result"]:
                        raise self.fail(
                            f"{where}: {o['obligation']}: `{req['require']}` (line {req['line']})",
                            f"recorded {req['result']}, recomputed {result}",
                        )
                    holds = holds and bool(req["result"])
                if holds and o["claimed"] and by is None:
                    by = o["obligation"]
            covered = by is not None
            if row["covered"] != covered or row["by"] != by:
                raise self.fail(where, f"recorded covered={row['covered']} by {row['by']}, "
                                       f"recomputed covered={covered} by {by}")
            uncovered += not covered
        decision = self.route["decision"]
        score, docked = self.values["score"], self.values["docked_score"]
        if mode == "off":
            verdict, released = "ungated", score
        elif uncovered == 0:
            verdict, released = "released", score
        elif mode == "gate":
            verdict, released = "suspend-and-ask", None
        else:
            verdict, released = "docked", docked
        if decision["verdict"] != verdict:
            raise self.fail("verdict", f"recorded {decision['verdict']}, recomputed {verdict} "
                                       f"({uncovered} uncovered material changes under {mode})")
        recorded = None if decision["score"] is None else self.number(decision["score"], "released score")
        if recorded != released:
            raise self.fail("released score", f"recorded {show(recorded)}, recomputed {show(released)}")


def _V(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(rnd(c.number(o["tam"], w) * c.number(o["capture"], w)) * c.number(o["defensibility"], w))


def _copy(key: str) -> Callable[[RouteCheck, Mapping[str, Any], str], Fraction]:
    return lambda c, o, w: c.number(o[key], w)


def _sat(c: RouteCheck, o: Mapping[str, Any], w: str) -> tuple[Fraction, Fraction]:
    decay = c.number(o["decay"], w)
    xs = []
    for item in o["items"]:
        weight, tier_weight = c.number(item["weight"], w), c.number(item["tier_weight"], w)
        x = c.number(item["x"], w)
        if rnd(weight * tier_weight) != x:
            raise c.fail(w, f"effective weight of `{item['evidence']}` is {show(x)}, not weight × tier_weight")
        if item["tier_weight"].get("policy", [None, None, None])[2:] != [str(item["tier"])]:
            raise c.fail(w, f"the tier weight of `{item['evidence']}` is not its tier's")
        xs.append(x)
    S = sum((x * decay**i for i, x in enumerate(sorted(xs, reverse=True))), Fraction(0))
    exact = S / (1 + S)
    return exact, rnd(exact)


def _W(c: RouteCheck, o: Mapping[str, Any], w: str) -> tuple[Fraction | None, Fraction]:
    sat_c, sat_k = c.exact_of(o["sat_c"], w), c.exact_of(o["sat_k"], w)
    gc, gk = c.number(o["gc"], w), c.number(o["gk"], w)
    lo, hi = c.number(o["w_min"], w), c.number(o["w_max"], w)
    if not o["evidence"]["v"]:
        if sat_c or sat_k:
            raise c.fail(w, "no admissible evidence is recorded, yet a sat is not 0")
        return None, Fraction(1)
    exact = 1 + gc * sat_c - gk * sat_k
    return exact, lo if exact < lo else hi if exact > hi else rnd(exact)


def _p(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return clip(rnd(c.number(o["p_prior"], w) * c.number(o["W"], w)), Fraction(0), Fraction(1))


def _policy_list(c: RouteCheck, o: Mapping[str, Any], w: str) -> list[Fraction]:
    actual = lookup(c.policy, o["policy"])
    if not isinstance(actual, list) or [Fraction(a) for a in actual] != [Fraction(b) for b in o["v"]]:
        raise c.fail(w, f"the list is not the policy's {'.'.join(o['policy'])}")
    return [Fraction(a) for a in actual]


def _isotonic(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """Linear interpolation between the breakpoints, each float operation rounded as the
    compiler's is; flat outside the breakpoints; clipped to [0, 1]."""
    p = c.number(o["p_raw"], w)
    xs, ys = _policy_list(c, o["x"], w), _policy_list(c, o["y"], w)
    if p <= xs[0]:
        return clip(ys[0], Fraction(0), Fraction(1))
    if p >= xs[-1]:
        return clip(ys[-1], Fraction(0), Fraction(1))
    i = max(j for j in range(len(xs)) if xs[j] <= p)
    x0, x1, y0, y1 = xs[i], xs[i + 1], ys[i], ys[i + 1]
    value = rnd(y0 + rnd(rnd(rnd(y1 - y0) * rnd(p - x0)) / rnd(x1 - x0)))
    return clip(value, Fraction(0), Fraction(1))


def _platt(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """The logistic map in floats with the platform's exp and log, as the compiler
    computes it (the one rule that is not rational)."""
    p, a, b = float(c.number(o["p_raw"], w)), float(c.number(o["a"], w)), float(c.number(o["b"], w))
    q_ = min(max(p, 1e-9), 1.0 - 1e-9)
    z = a + b * math.log(q_ / (1.0 - q_))
    if z >= 0:
        return Fraction(1.0 / (1.0 + math.exp(-z)))
    e = math.exp(z)
    return Fraction(e / (1.0 + e))


def _budget(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    total = Fraction(0)
    for item in o["items"]:
        total = rnd(total + rnd(c.number(item["count"], w) * c.number(item["unit_cost"], w)))
    return total


def _price(c: RouteCheck, o: Mapping[str, Any], w: str) -> tuple[Fraction, Fraction]:
    points = o["points"]
    c.policy_points(points, w)
    s, t = c.number(o["source"], w), c.number(o["target"], w)
    x = abs(rnd(t - s))
    xs = [Fraction(0)] + [Fraction(a) for a, _ in points["v"]]
    ys = [Fraction(0)] + [Fraction(b) for _, b in points["v"]]
    i = next((i for i in range(1, len(xs)) if x <= xs[i]), len(xs) - 1)
    exact = ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1])
    return exact, rnd(exact)


def _sum(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    total = Fraction(0)
    for x in o["prices"]:
        total = rnd(total + c.number(x, w))
    return total


def _c(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    budget, fc, fd = c.number(o["budget"], w), c.number(o["floor_class"], w), c.number(o["floor_delta"], w)
    best = max(budget, fc, fd)
    bound = "budget" if best == budget else "floor_class" if best == fc else "floor_delta"
    if o["bound_by"]["v"] != bound:
        raise c.fail(w, f"cost_bound_by is recorded {o['bound_by']['v']}, recomputed {bound}")
    return best


def _U(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    xs = [c.number(x, w) for x in o["estimates"]]
    if len(xs) < 2:
        raise c.fail(w, "a range needs two estimates")
    return rnd(max(xs) - min(xs))


def _fold(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(-c.number(o["c"], w) + rnd(c.number(o["p"], w) * c.number(o["R_next"], w)))


def _product(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    total = Fraction(1)
    for p in o["p"]:
        total = rnd(total * c.number(p, w))
    return total


def _D(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(c.number(o["reach"], w) * max(c.number(o["R_next"], w), Fraction(0)))


def _binding(c: RouteCheck, o: Mapping[str, Any], w: str) -> int:
    products = [rnd(c.number(u, w) * c.number(d, w)) for u, d in zip(o["U"], o["D"], strict=True)]
    best = 0
    for i, x in enumerate(products):
        if x > products[best]:
            best = i
    return best


def _docked(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    R = Fraction(0)
    for p, cost in zip(reversed(o["p"]), reversed(o["c"]), strict=True):
        R = rnd(-c.number(cost, w) + rnd(c.number(p, w) * R))
    return R


def _T(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction | None:
    rows = [(c.number(r["weight"], w), c.number(r["score"], w)) for r in o["rows"]]
    total_w = Fraction(0)
    for weight, _ in rows:
        total_w = rnd(total_w + weight)
    if not rows or total_w == 0:
        return None
    weighted = Fraction(0)
    for weight, s in rows:
        weighted = rnd(weighted + rnd(weight * clip(s, Fraction(0), Fraction(100))))
    return rnd(weighted / total_w)


def _bucket(c: RouteCheck, o: Mapping[str, Any], w: str) -> str | None:
    T = c.values.get("T")
    if T is None or o["neg_below"] is None:
        if o["neg_below"] is None and lookup(c.policy, ["buckets"]) is not None:
            raise c.fail(w, "the policy has [buckets], the certificate none")
        return None
    neg, pos = c.number(o["neg_below"], w), c.number(o["pos_from"], w)
    return "neg" if T < neg else "pos" if T >= pos else "mix"


def _eligible(c: RouteCheck, o: Mapping[str, Any], w: str) -> bool:
    gates = {g.get("id"): g for g in c.policy.get("gates") or [] if isinstance(g, dict)}
    if [g["id"] for g in o["gates"]] != list(gates):
        raise c.fail(w, "the gates are not the policy's")
    for g in o["gates"]:
        rule = gates[g["id"]]
        blocks = rule.get("kind") == "eligibility" or bool(rule.get("block", False))
        if g["blocks"] != blocks or g["rule"] != rule.get("rule"):
            raise c.fail(w, f"gate `{g['id']}` is not the policy's")
    return all(g["passed"] or not g["blocks"] for g in o["gates"])


RULES: dict[str, Callable[[RouteCheck, Mapping[str, Any], str], Any]] = {
    "V = tam × capture × defensibility": _V,
    "p_prior = priors[class].p": _copy("prior"),
    "sat = S/(1+S), S = Σ x_(i)·decay^i over x sorted descending": _sat,
    "W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max)": _W,
    "p = clip(p_prior · W, 0, 1)": _p,
    "p = isotonic map of p_raw: linear between the points (x, y), flat outside, clipped to [0, 1]": _isotonic,
    "p = 1 / (1 + exp(−(a + b·logit(p_raw)))), p_raw clipped to [1e-9, 1 − 1e-9]": _platt,
    "budget = Σ count × unit cost": _budget,
    "floor_class = priors[class].floor_usd": _copy("floor"),
    "price = piecewise-linear floor through (0, 0) and the points, of |Δ|": _price,
    "floor_delta = Σ prices": _sum,
    "c = max(budget, floor_class, floor_delta)": _c,
    "U = max − min of the estimates": _U,
    "U = uncertainty.default": _copy("default"),
    "R_n = V": _copy("V"),
    "R_i = −c_i + p_i · R_{i+1}": _fold,
    "score = R_0": _copy("R_0"),
    "flat product = Π p_i": _product,
    "reach_i = Π_{j<i} p_j": _product,
    "D_i = reach_i · max(R_{i+1}, 0)": _D,
    "binding = the first i with the largest U_i · D_i": _binding,
    "docked = R_0 refolded with R_n = 0": _docked,
    "T = Σ w·clip(s, 0, 100) / Σ w": _T,
    "bucket = neg if T < neg_below, pos if T ≥ pos_from, else mix": _bucket,
    "eligible = every gate passes or does not block": _eligible,
}


# ---------------------------------------------------------------------- coverage
def written(x: Any) -> Fraction:
    """The decimal a number was written as (its shortest repr), exactly."""
    return Fraction(repr(float(x)))


def is_material(rule: Mapping[str, Any] | None, source: Any, target: Any) -> bool:
    if source == target and type(source) is type(target):
        return False
    if isinstance(source, bool) or isinstance(target, bool) or (rule is not None and rule.get("bool")):
        return bool(source != target)
    if rule is None:
        return True
    s, t = written(source), written(target)
    if rule["relative"] and s == 0:
        return True
    amount = written(rule["amount"]["f"])
    return abs(t - s) >= amount * (abs(s) if rule["relative"] else 1)


def truthy(v: Any) -> bool:
    if isinstance(v, list):
        return len(v) > 0
    if isinstance(v, str):
        return v != ""
    return v is not None and v is not False and v != 0


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def compare(op: str, a: Any, b: Any) -> bool:
    a = len(a) if isinstance(a, list) else a
    b = len(b) if isinstance(b, list) else b
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if a is None or b is None:
        return False
    return _ORDER[op](a, b)


def bounds_target(bounds: Sequence[Sequence[Any]], source: Any, target: Any) -> bool:
    for op, bound in bounds:
        if isinstance(target, bool) or isinstance(bound, bool):
            if op == "==" and bound == target:
                return True
            continue
        rise = target > source
        if op == "==" and bound == target:
            return True
        if rise and op in (">=", ">") and bound >= target:
            return True
        if not rise and op in ("<=", "<") and bound <= target:
            return True
    return False


def evaluate_require(req: Mapping[str, Any]) -> bool | None:
    """A require line evaluated again from its recorded operands; None when the
    certificate records only its result (a function other than `measured`)."""
    check = req["check"]
    if "compare" in check:
        return compare(str(check["compare"]), check["left"], check["right"])
    if "name" in check:
        return truthy(check["value"])
    if "grounded" in check:  # the text, quoted (case and spacing aside) in a supporting excerpt
        needle = " ".join(str(check["grounded"]).casefold().split()) if check["grounded"] is not None else ""
        return bool(needle) and any(needle in " ".join(str(x).casefold().split()) for x in check["excerpts"])
    if "measured" in check:
        return all(bounds_target(d["bounds"], d["source"], d["target"]) for d in check["measured"])
    if "error" in check:
        return False
    return None


# ---------------------------------------------------------------------- the certificate
def verify(text: str, bases: Mapping[str, Path], against: Sequence[Path] = ()) -> dict[str, Any]:
    """Check a certificate; a summary when it holds, else `Mismatch` naming the first
    difference. ``bases`` maps each recorded base (`certificate`, `shipped-obligations`,
    `shipped-policies`) to its folder; ``against`` are files to read instead of the
    recorded paths, matched by file name."""
    try:
        cert = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Mismatch("certificate", f"not JSON: {exc}") from None
    if not isinstance(cert, dict) or cert.get("certificate") != FORMAT or cert.get("version") != 1:
        raise Mismatch("certificate", f"not a {FORMAT} of version 1")
    files = Files(bases, against)
    policies: dict[str, dict[str, Any]] = {}
    for record in cert["policies"]:
        document = policy_document(record, files)
        what = f"policy {record['ref']} ({record['files'][0]['path']})"
        if len(record["files"]) > 1:  # the document merges these files: any of them may have changed
            what += " and what it extends: " + ", ".join(f"{f['ref']} ({f['path']})" for f in record["files"][1:])
        digest = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
        if digest != record["file_sha256"]:
            raise Mismatch(what, f"its document has sha256 {digest}, the certificate records {record['file_sha256']}")
        for o in cert["overrides"]:
            if o["applies_to"] == "policy":
                set_key(document, o["path"], o["value"])
        digest = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
        if digest != record["sha256"]:
            raise Mismatch(what, f"with the overrides, sha256 {digest}, the certificate records {record['sha256']}")
        policies[record["ref"]] = document
    for route in cert["routes"]:
        if route["policy"] not in policies:
            raise Mismatch(f"route {route['route']}", f"policy {route['policy']} is not recorded")
        check = RouteCheck(route, policies[route["policy"]])
        check.run()
        check.check_coverage_and_verdict()
    for entry in cert["inputs"]:
        what = f"input {entry['path']}"
        text_in = text_of(files.locate(entry), what)
        text_in = text_in.replace("\r\n", "\n").replace("\r", "\n")
        digest = sha256_text(text_in)
        if digest != entry["sha256"]:
            raise Mismatch(what, f"has sha256 {digest}, the certificate records {entry['sha256']}")
    for entry in cert["libraries"]:
        what = f"library {entry['name']} ({entry['path']})"
        digest = sha256_text(text_of(files.locate(entry), what).replace("\r\n", "\n"))
        if digest != entry["sha256"]:
            raise Mismatch(what, f"has sha256 {digest}, the certificate records {entry['sha256']}")
    body = {k: v for k, v in cert.items() if k != "digest"}
    digest = hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()
    if digest != cert.get("digest"):
        raise Mismatch("certificate", f"its body has sha256 {digest}, but its digest says {cert.get('digest')}: "
                                      "it was edited after it was written")
    steps = sum(len(r["steps"]) for r in cert["routes"])
    decisions = sum(1 for r in cert["routes"] for row in r["coverage"] if row["material"])
    return {
        "routes": [{"route": r["route"], "verdict": r["decision"]["verdict"]} for r in cert["routes"]],
        "steps": steps,
        "coverage_decisions": decisions,
        "inputs": len(cert["inputs"]),
        "libraries": len(cert["libraries"]),
        "policies": len(cert["policies"]),
    }
