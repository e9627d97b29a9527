"""One route's recomputation (`RouteCheck`): every step by its own rule (`RULES`), each
operand tied to the step, policy key or file it comes from, the numbers the author wrote
bound to their places, the route's structure and fold, the coverage rows and the verdict."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from pcsc.certify.check.expressions import (
    BASE_FUNCTIONS,
    DAYS,
    DeltaSet,
    Evaluator,
    ExprError,
    Node,
    as_value,
    bounds_target,
    field_bounds,
    is_material,
    literal_number,
    normalise,
    parse_expression,
    truthy,
    unquote,
)
from pcsc.certify.check.reading import Mismatch, canonical, clip, lookup, parse_q, rnd, show, squeeze
from pcsc.certify.check.route_text import (
    _CONDITION_ENDS,
    _LIST_WORDS,
    Layout,
    Place,
    Source,
    layout_of,
    route_statement,
)

MODE_RANK = {"off": 0, "dock": 1, "gate": 2}  # what an uncovered change costs, least to most


# ---------------------------------------------------------------------- one route
class RouteCheck:
    def __init__(
        self,
        route: Mapping[str, Any],
        policy: Mapping[str, Any],
        source: Callable[[str, str], Source] | None = None,
        file_policy: Mapping[str, Any] | None = None,
    ) -> None:
        self.route = route
        self.name = route["route"]
        self.policy = policy
        self.file_policy = policy if file_policy is None else file_policy  # before the recorded overrides
        self.values: dict[str, Any] = {}  # symbol -> Fraction | other value
        self.exact: dict[str, Fraction] = {}
        self._source = source
        self.counts = {"gates": 0, "requires": 0}
        self.current = ""  # the symbol of the step being checked
        self.last_walking = ""  # the last `walking` step checked (the option to stop)
        self.rate, self.abandonment = Fraction(0), False  # the policy's fold, set by `check_fold`
        self.layout: Layout | None = None  # the route file's tokens and blocks (`check_written`)
        self.evidence: list[dict[str, Any]] | None = None  # the route's evidence items (`route_evidence`)
        self.evaluation_failed = False  # the last require line evaluated raised an error
        self.registry: Mapping[str, Any] = {}  # the policy's gold registry, by route (`registry_tables`)

    def source(self, kind: str, name: str) -> Source:
        """The route's file (``kind`` "input") or one of its libraries ("library")."""
        if self._source is None:
            raise self.fail(f"{kind} {name}", "no file to read it from")
        return self._source(kind, name)

    def library_obligations(self) -> dict[str, tuple[list[str], list[tuple[int, str]]]]:
        return _library_obligations(self)

    def admission_refusals(self, admission: Mapping[str, Any]) -> list[list[Any]]:
        """What each transition claims that its class's admission table refuses, derived
        from the coverage rows, the policy and the evidence each `sat(C)` step weighs:
        [transition, class, field, check] in the order the compiler reports them."""
        out: list[list[Any]] = []
        for t in self.transitions():
            step = next(s for s in self.route["steps"] if s["symbol"] == f"{t}.p_prior")
            key = step["operands"]["prior"].get("policy") or []
            cls = key[1] if len(key) == 3 and key[0] == "priors" else None
            rows = [r for r in self.route["coverage"] if r["transition"] == t and r["material"]]
            rules = admission.get(cls) if isinstance(cls, str) else None
            if not isinstance(rules, dict):
                out += [[t, cls, r["field"], "fields"] for r in rows]
                continue
            fields = rules.get("fields") or []
            out += [[t, cls, r["field"], "fields"] for r in rows if r["field"] not in fields]
            sat = next((s for s in self.route["steps"] if s["symbol"] == f"{t}.sat(C)"), None)
            weighed = [] if sat is None else [
                {"name": i["evidence"], "tier": Fraction(i["tier"]), "weight": self.number(i["weight"], t)}
                for i in sat["operands"]["items"]
            ]
            by_field = {r["field"]: r for r in rows}
            bounds = rules.get("bounds") or {}
            checks = [(f, text) for f, text in bounds.items()] + [("", text) for text in rules.get("require") or []]
            for field, text in checks:
                if field and field not in by_field:
                    continue
                try:
                    if field:
                        ok = truthy(_bound_evaluator(by_field[field]).eval(parse_expression(text)))
                    else:
                        ok = truthy(_admission_evaluator(weighed).eval(parse_expression(text)))
                except ExprError:
                    ok = False
                if not ok:
                    out.append([t, cls, field or None, text])
        return out

    def evaluate_require(self, row: Mapping[str, Any], o: Mapping[str, Any], req: Mapping[str, Any],
                         what: str) -> bool:
        return _evaluate_require(self, row, o, req, what)

    @property
    def route_file(self) -> Source:
        return self.source("input", self.route["file"])

    def transitions(self) -> list[str]:
        return [s["symbol"].removesuffix(".p_prior") for s in self.route["steps"]
                if s["symbol"].endswith(".p_prior")]

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
            if ("exact" in o) != (ref in self.exact) or ("exact" in o and parse_q(o["exact"]) != self.exact[ref]):
                raise self.fail(what, f"its exact value is not step `{ref}`'s")
        if "policy" in o:
            self.policy_value(o["policy"], x, what)
        return x

    def policy_value(self, key: Sequence[str], x: Any, what: str) -> None:
        actual = lookup(self.policy, key)
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            if list(key) == ["fold", "discount"] and actual is None and x == 0:
                return  # no discount rate: the paper's fold
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

    def flag(self, o: Mapping[str, Any], what: str) -> bool:
        """A recorded bool: a step's must be that step's value."""
        if not isinstance(o, Mapping) or not isinstance(o.get("v"), bool):
            raise self.fail(what, "expected a bool {v}")
        if "step" in o:
            ref = o["step"]
            if ref not in self.values:
                raise self.fail(what, f"refers to `{ref}`, which no earlier step computes")
            if self.values[ref] is not o["v"]:
                raise self.fail(what, f"is {o['v']}, but step `{ref}` is {self.values[ref]}")
        return bool(o["v"])

    def check_fold(self) -> None:
        """The fold the certificate records must be the policy's `[fold]` (no table, or no
        key: the paper's fold, discount 0 and no abandonment)."""
        fold = self.route["fold"]
        if fold["discount"].get("policy") != ["fold", "discount"]:
            raise self.fail("fold: the discount rate", "is not read from the policy's fold.discount")
        self.rate = self.number(fold["discount"], "fold: the discount rate")
        stop = fold["abandonment"]
        actual = lookup(self.policy, ["fold", "abandonment"])
        actual = False if actual is None else actual
        if not isinstance(stop.get("v"), bool) or stop.get("policy") != ["fold", "abandonment"] or stop["v"] != actual:
            raise self.fail("fold: abandonment", f"is recorded {stop.get('v')!r}, but the policy's fold.abandonment "
                                                 f"is {actual!r}")
        self.abandonment = stop["v"]

    @property
    def fold_kind(self) -> str:
        """`paper`, `discount` (a rate, no option to stop) or `stop` (the option to stop)."""
        return "stop" if self.abandonment else "paper" if self.rate == 0 else "discount"

    def exact_of(self, o: Mapping[str, Any], what: str) -> Fraction:
        x = self.number(o, what)
        ref = o.get("step")
        return self.exact.get(ref, x) if ref else x

    # ------------------------------------------------------------------ rules
    def run(self) -> None:
        self.check_fold()
        for s in self.route["steps"]:
            symbol, rule, ops, value = s["symbol"], s["rule"], s["operands"], s["value"]
            what = f"{symbol} ({rule})"
            handler = RULES.get(rule)
            if handler is None:
                raise self.fail(what, "unknown rule")
            folds = FOLDS.get(rule)
            if folds is not None and self.fold_kind not in folds:
                raise self.fail(what, f"is a rule of {' or '.join(FOLD_NAMES[k] for k in folds)}, but the "
                                      f"policy's fold is {FOLD_NAMES[self.fold_kind]}")
            self.current = symbol
            check_operand_steps(self, symbol, rule, ops, what)
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

    def check_mode(self) -> str:
        """The coverage mode must be the policy's, or, lowered on the command line (by
        `--coverage`, or by a recorded `--set policy.coverage`), say it was: `lowered_from`
        names the mode the policy's files set. A mode raised above the policy's needs
        the command line too. Returns the mode."""
        decision = self.route["decision"]
        mode, source, lowered = decision["mode"], decision["mode_source"], decision["lowered_from"]
        own = lookup(self.file_policy, ["policy", "coverage"]) or "gate"
        applied = lookup(self.policy, ["policy", "coverage"]) or "gate"  # with the recorded overrides
        if mode not in MODE_RANK or own not in MODE_RANK or applied not in MODE_RANK:
            raise self.fail("decision.mode", f"is {mode!r}; a coverage mode is gate, dock or off")
        if source == "policy":
            if mode != applied:
                why = f"the policy's coverage is {own}" + (f", {applied} with the recorded --set" if applied != own
                                                           else "")
                raise self.fail("decision.mode", f"is {mode} from the policy, but {why}")
        elif source != "command line":
            raise self.fail("decision.mode_source", f"is {source!r}, not `policy` or `command line`")
        want = own if MODE_RANK[mode] < MODE_RANK[own] else None
        if lowered != want:
            said = "none" if lowered is None else repr(lowered)
            raise self.fail("decision.lowered_from", f"is {said}, but mode {mode} "
                            + (f"is lowered from the policy's {own}" if want else f"is not below the policy's {own}"))
        return str(mode)

    def check_coverage_and_verdict(self) -> None:
        prices = {s["symbol"]: s for s in self.route["steps"] if ".price[" in s["symbol"]}
        has_floor = set((self.policy.get("floors") or {}).get("delta") or {})
        uncovered = 0
        mode = self.check_mode()
        library = self.library_obligations()
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
            if not material or mode == "off":  # no coverage decision: none may be recorded
                if row["covered"] is not None or row["by"] is not None or row["obligations"]:
                    raise self.fail(where, "records a coverage decision, but "
                                    + ("the change is not material" if not material else "coverage is off"))
                continue
            tried = [name for name, (covers, _) in library.items() if row["field"] in covers]
            if [o["obligation"] for o in row["obligations"]] != tried:
                raise self.fail(where, f"the obligations tried are not those of the libraries that cover "
                                       f"`{row['field']}` ({', '.join(tried) or 'none'})")
            by = None
            for o in row["obligations"]:
                holds = True
                covers, lines = library[o["obligation"]]
                stated = self.route_file.transition(self.name, row["transition"])
                listed = None if stated is None else stated["discharges"]
                if listed is None or o["claimed"] != (o["obligation"] in listed):
                    raise self.fail(f"{where}: {o['obligation']}", f"is recorded claimed={o['claimed']}, but "
                                    f"`{row['transition']}` in {self.route['file']} lists "
                                    f"{', '.join(sorted(listed or ())) or 'no obligation'} in its `discharges`")
                if o["covers"] != covers:
                    raise self.fail(f"{where}: {o['obligation']}", f"covers {o['covers']} in the certificate, "
                                                                  f"{covers} in its library")
                written_lines = [(req["line"], squeeze(req["expr"])) for req in o["requires"]]
                if written_lines != lines or any(squeeze(req["require"]) != f"require {squeeze(req['expr'])}"
                                            for req in o["requires"]):
                    raise self.fail(f"{where}: {o['obligation']}", "its require lines are not those its library "
                                    "writes, in order: " + "; ".join(f"line {n}: require {x}" for n, x in lines))
                for req in o["requires"]:
                    at = f"{where}: {o['obligation']}: `{req['require']}` (line {req['line']})"
                    self.evaluation_failed = False
                    result = self.evaluate_require(row, o, req, at)
                    if result != req["result"]:
                        raise self.fail(at, f"recorded {req['result']}, recomputed {result}")
                    if ("error" in req) != self.evaluation_failed:
                        raise self.fail(at, "records an error, but the checker evaluates it" if "error" in req
                                        else "records no error, but the checker cannot evaluate it")
                    holds = holds and result
                if holds and o["claimed"] and by is None:
                    by = o["obligation"]
            covered = by is not None
            if row["covered"] != covered or row["by"] != by:
                raise self.fail(where, f"recorded covered={row['covered']} by {row['by']}, "
                                       f"recomputed covered={covered} by {by}")
            uncovered += not covered
        # claims a class does not admit and departures from the gold registry (each derived
        # again here); under a required registry each refuses like an uncovered change
        refusals = self.route.get("refusals") or {}
        held = lookup(self.policy, ["coverage", "registry"]) or "off"
        departures = [[f.get("kind"), f.get("state"), f.get("field")] for f in refusals.get("registry") or ()]
        if held == "off" or mode == "off":
            if departures:
                raise self.fail("refusals.registry", "recorded, but no registry is read (coverage.registry or the "
                                                     "mode is off)")
        else:
            derived = registry_findings(self)
            if departures != derived:
                listed = "; ".join(f"{k} {s or ''}{'.' + f if f else ''}".strip() for k, s, f in derived) or "none"
                raise self.fail("refusals.registry", f"recorded {len(departures)}, derived again {len(derived)} from "
                                                     f"the registry the policy pins ({listed})")
        admission = self.policy.get("admission")
        if isinstance(admission, dict) and admission:
            claims = [[a.get("transition"), a.get("class"), a.get("field"), a.get("check")]
                      for a in refusals.get("not_admitted") or ()]
            derived = self.admission_refusals(admission)
            if claims != derived:
                listed = "; ".join(f"{t}.{f or '(transition)'}: {k}" for t, _, f, k in derived) or "none"
                raise self.fail("refusals.not_admitted", f"recorded {len(claims)}, derived again {len(derived)} "
                                                         f"({listed})")
        elif refusals.get("not_admitted"):
            raise self.fail("refusals.not_admitted", "recorded, but the policy has no admission rules")
        if mode != "off":
            uncovered += len(refusals.get("not_admitted") or ()) + (len(departures) if held == "required" else 0)
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


# ---------------------------------------------------------------------- operands
def _library_obligations(c: RouteCheck) -> dict[str, tuple[list[str], list[tuple[int, str]]]]:
    """The obligations of the route's libraries, in their order (the first of a name wins)."""
    out: dict[str, tuple[list[str], list[tuple[int, str]]]] = {}
    for name in c.route["libraries"]:
        for key, value in c.source("library", name).obligations().items():
            out.setdefault(key, value)
    return out


def _decode(c: RouteCheck, o: Any, what: str) -> Any:
    """A recorded operand as a value: a number (checked as every number is), a date,
    a record, or anything else as written."""
    if not isinstance(o, Mapping):
        raise c.fail(what, f"expected a typed operand, got {o!r}")
    if "f" in o:
        return c.number(o, what)
    if "date" in o:
        return dt.date.fromisoformat(o["date"])
    if "record" in o:
        return {str(k): _decode(c, v, what) for k, v in o["record"].items()}
    if "v" in o:
        return o["v"]
    raise c.fail(what, f"expected a typed operand, got {o!r}")


def _transition_operand(c: RouteCheck, t: str, name: str, o: Mapping[str, Any], what: str) -> Any:
    """A name of a `require` line, tied to where the certificate or the route states it."""
    value = _decode(c, o, f"{what}: `{name}`")
    where = f"{what}: `{name}`"
    if name == "budget" and "usd_of" in o:  # under a fold in another unit: the usd the transition writes
        step = next((s for s in c.route["steps"] if s["symbol"] == f"{t}.budget"), None)
        if o["usd_of"] != f"{t}.budget" or step is None or value != _budget(c, step["operands"], where):
            raise c.fail(where, f"is not the usd sum of step `{t}.budget`'s cost items")
    elif name == "budget" and o.get("step") != f"{t}.budget":
        raise c.fail(where, f"is not step `{t}.budget`")
    if name == "class":
        prior = next((s for s in c.route["steps"] if s["symbol"] == f"{t}.p_prior"), None)
        stated = None if prior is None else prior["operands"]["prior"].get("policy", [None, None])[1]
        if value != stated:
            raise c.fail(where, f"is {value!r}, but `{t}` is priced as class {stated!r}")
    elif name in ("mechanism", "asset", "actor"):
        stated = transition_text(c, t, name)
        if value != stated:
            raise c.fail(where, f"is {value!r}, but `{t}` in {c.route['file']} writes {stated!r}")
    elif name in ("kill", "threshold") and value is not None:
        if not isinstance(value, str) or not c.route_file.states(name, value):
            raise c.fail(where, f"`{value}` is not the {name} of a transition in {c.route['file']}")
    elif name in ("horizon", "learning_cost"):
        stated = c.route_file.transition(c.name, t) or {}
        expected = stated.get(name)
        if name == "horizon" and expected is not None:  # a require line reads the horizon in days
            expected = rnd(expected * DAYS.get(str(stated.get("horizon_unit")), Fraction(0)))
        if value != expected:
            raise c.fail(where, f"is {value if value is None else show(value)}, but `{t}` in {c.route['file']} "
                                f"states {show(expected)}{' days' if name == 'horizon' else ''}")
    elif name == "as_of" and not (isinstance(value, dt.date) and c.route_file.states("as_of", value.isoformat())):
        raise c.fail(where, f"{value} is not the route's as_of in {c.route['file']}")
    return value


def _supporting(c: RouteCheck, t: str, items: Sequence[Mapping[str, Any]], what: str) -> list[dict[str, Any]]:
    """The admissible supporting evidence of a transition: the items its sat(C) step
    weighs, each with its excerpt, source and capture date as the route writes them."""
    sat = next((s for s in c.route["steps"] if s["symbol"] == f"{t}.sat(C)"), None)
    weighed = {} if sat is None else {i["evidence"]: i for i in sat["operands"]["items"]}
    blocks = {e["name"]: e for e in route_evidence(c)}
    in_order = [name for name in blocks if name in weighed]  # as written
    if [i["name"] for i in items] != in_order:
        raise c.fail(what, f"its evidence ({', '.join(i['name'] for i in items) or 'none'}) is not the "
                           f"admissible supporting evidence `{t}.sat(C)` weighs, in the order written "
                           f"({', '.join(in_order) or 'none'})")
    out = []
    for i in items:
        name, at = i["name"], f"{what}: evidence `{i['name']}`"
        tier, weight = c.number(i["tier"], at), c.number(i["weight"], at)
        if tier != Fraction(weighed[name]["tier"]) or weight != c.number(weighed[name]["weight"], at):
            raise c.fail(at, f"its tier or weight is not the one `{t}.sat(C)` weighs")
        block = blocks.get(name, {})
        for key in ("excerpt", "source", "captured"):
            stated = block.get(key)
            stated = stated.isoformat() if isinstance(stated, dt.date) else stated
            if i[key] != stated:
                raise c.fail(at, f"its {key} {i[key]!r} is not the one `evidence {name}` in {c.route['file']} "
                                 f"writes ({stated!r})")
        out.append({"tier": tier, "weight": weight, "source": i["source"], "excerpt": i["excerpt"], "name": name,
                    "captured": None if i["captured"] is None else dt.date.fromisoformat(i["captured"])})
    return out


def _evaluate_require(c: RouteCheck, row: Mapping[str, Any], o: Mapping[str, Any], req: Mapping[str, Any],
                      what: str) -> bool:
    """A require line evaluated again from its text and its recorded operands."""
    t = row["transition"]
    c.counts["requires"] += 1
    names = {n: _transition_operand(c, t, n, v, what) for n, v in req["operands"].items()}
    check_written_conditions(c, t, req["operands"], what)
    if "delta" in req:
        scoped = [(r["field"], r["source"], r["target"]) for r in c.route["coverage"]
                  if r["transition"] == t and r["material"] and r["field"] in o["covers"]]
        recorded = [(d["field"], d["source"], d["target"]) for d in req["delta"]]
        if recorded != scoped:
            raise c.fail(f"{what}: `delta`", "its changes are not the transition's material changes of the "
                                             "fields the obligation covers")
        names["delta"] = DeltaSet([(f, as_value(s_), as_value(t_)) for f, s_, t_ in scoped])
    supporting = _supporting(c, t, req["evidence"], what) if "evidence" in req else []

    def delta_arg(ev: Evaluator, args: Sequence[Node], fn: str) -> DeltaSet:
        value = ev.eval(args[0]) if len(args) == 1 else None
        if not isinstance(value, DeltaSet):
            raise ExprError(f"`{fn}` takes `delta`")
        return value

    def measured(ev: Evaluator, args: Sequence[Node]) -> bool:
        ds = delta_arg(ev, args, "measured")
        text = names.get("threshold")
        threshold = parse_expression(text) if isinstance(text, str) else None
        return all(bounds_target(field_bounds(threshold, f), s_, t_) for f, s_, t_ in ds.changes)

    def floor(ev: Evaluator, args: Sequence[Node]) -> Fraction:
        total = Fraction(0)
        for f, _, _ in delta_arg(ev, args, "floor").changes:
            if f"{t}.price[{f}]" in c.values:
                total = rnd(total + c.values[f"{t}.price[{f}]"])
        rate = usd_rate(c)  # a require line reads usd: a floor priced in another fold unit, back in usd
        return total if rate is None or rate == 1 else rnd(total / rate)

    def grounded(ev: Evaluator, args: Sequence[Node]) -> bool:
        if len(args) != 1:
            raise ExprError("`grounded` takes one argument")
        text = ev.eval(args[0])
        if text is None:
            return False
        if not isinstance(text, str):
            raise ExprError("`grounded` needs text")
        needle = normalise(text)
        return bool(needle) and any(needle in normalise(e["excerpt"]) for e in supporting)

    def evidence(ev: Evaluator, args: Sequence[Node]) -> list[str]:
        if len(args) > 1:
            raise ExprError("`evidence` takes at most one filter")
        return [e["name"] for e in supporting if not args or truthy(ev.child(e).eval(args[0]))]

    functions = {**BASE_FUNCTIONS, "measured": measured, "floor": floor, "grounded": grounded, "evidence": evidence}
    try:
        return truthy(Evaluator(names, functions).eval(parse_expression(req["expr"])))
    except ExprError:
        c.evaluation_failed = True
        return False


def _abs(ev: Evaluator, args: Sequence[Node]) -> Fraction:
    value = ev.eval(args[0]) if len(args) == 1 else None
    if not isinstance(value, Fraction):
        raise ExprError("`abs` needs a number")
    return abs(value)


def _bound_evaluator(row: Mapping[str, Any]) -> Evaluator:
    """An admission bound's names for one material change: delta, source, target and
    delta relative to |source| (none from 0)."""
    source, target = as_value(row["source"]), as_value(row["target"])
    if isinstance(source, bool) or isinstance(target, bool):
        delta, relative = target, None
    else:
        delta = rnd(target - source)
        relative = None if source == 0 else rnd(delta / abs(source))
    names = {"delta": delta, "source": source, "target": target, "relative": relative}
    return Evaluator(names, {**BASE_FUNCTIONS, "abs": _abs})


def _admission_evaluator(weighed: Sequence[Mapping[str, Any]]) -> Evaluator:
    """An admission `require` line over the admissible supporting evidence (its tier and
    weight); a line naming anything else cannot be evaluated here and fails."""
    def evidence(ev: Evaluator, args: Sequence[Node]) -> list[str]:
        if len(args) > 1:
            raise ExprError("`evidence` takes at most one filter")
        return [e["name"] for e in weighed if not args or truthy(ev.child(e).eval(args[0]))]

    return Evaluator({}, {**BASE_FUNCTIONS, "abs": _abs, "evidence": evidence})


def _V(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(rnd(c.number(o["tam"], w) * c.number(o["capture"], w)) * c.number(o["defensibility"], w))


VISION_RULE = "V = the policy's [vision] value over the vision's fields, a usd field × the rate"
BUDGET_AT_RATE_RULE = "budget = (Σ count × unit cost) × rate"
VISION_KINDS = ("usd", "ratio", "count", "number")
DEFAULT_VISION = ("tam * capture * defensibility", {"tam": "usd", "capture": "ratio", "defensibility": "ratio"})


def usd_rate(c: RouteCheck) -> Fraction | None:
    """What 1 usd is worth in the fold's unit, by the policy document (None: a usd fold)."""
    units = lookup(c.policy, ["units"])
    if not isinstance(units, dict) or units.get("fold", "usd") == "usd":
        return None
    rate = lookup(c.policy, ["units", "rates", "usd"])
    return None if isinstance(rate, bool) or not isinstance(rate, (int, float)) else Fraction(rate)


def _V_formula(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """V by the policy's own formula, read from the policy document with its fields'
    kinds; a usd field is multiplied by the rate (rounded, as the compiler does)."""
    formula, kinds = lookup(c.policy, ["vision", "value"]), lookup(c.policy, ["vision", "fields"])
    if lookup(c.policy, ["vision"]) is None:  # the default formula, under a fold in another unit
        formula, kinds = DEFAULT_VISION
    if not isinstance(formula, str) or o["formula"].get("v") != formula or not isinstance(kinds, dict) \
            or o["formula"].get("policy") != ["vision", "value"]:
        raise c.fail(w, "the formula is not the policy's [vision] value")
    if sorted(o["fields"]) != sorted(kinds) or any(k not in VISION_KINDS for k in kinds.values()):
        raise c.fail(w, "its fields are not the policy's [vision] fields")
    rate = usd_rate(c)
    if "rate" in o and (rate is None or c.number(o["rate"], w) != rate):
        raise c.fail(w, "its rate is not the policy's units.rates.usd")
    names: dict[str, Fraction] = {}
    for name, kind in kinds.items():
        x = c.number(o["fields"][name], w)
        names[name] = rnd(x * rate) if kind == "usd" and rate is not None else x
    try:
        value = Evaluator(names, {k: BASE_FUNCTIONS[k] for k in ("min", "max")}).eval(parse_expression(formula))
    except ExprError as exc:
        raise c.fail(w, f"the formula cannot be evaluated: {exc}") from None
    if not isinstance(value, Fraction):
        raise c.fail(w, "the formula does not compute a number")
    return value


def _budget_rate(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    rate = usd_rate(c)
    if rate is None or c.number(o["rate"], w) != rate:
        raise c.fail(w, "its rate is not the policy's units.rates.usd")
    return rnd(_budget(c, o, w) * rate)


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
    t = c.current.removesuffix(".W")
    weighs = any(s["operands"]["items"] for s in c.route["steps"] if s["symbol"] in (f"{t}.sat(C)", f"{t}.sat(K)"))
    if o["evidence"].get("v") is not weighs:
        raise c.fail(w, f"`evidence` is recorded {o['evidence'].get('v')!r}, but `{t}`'s sat steps weigh "
                        + ("some" if weighs else "no") + " evidence")
    if not o["evidence"]["v"]:
        if sat_c or sat_k:
            raise c.fail(w, "no admissible evidence is recorded, yet a sat is not 0")
        return None, Fraction(1)
    exact = 1 + gc * sat_c - gk * sat_k
    return exact, lo if exact < lo else hi if exact > hi else rnd(exact)


def _p(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return clip(rnd(c.number(o["p_prior"], w) * c.number(o["W"], w)), Fraction(0), Fraction(1))


def _p_max(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return clip(rnd(c.number(o["p_prior"], w) * c.number(o["W"], w)), Fraction(0), c.number(o["p_max"], w))


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
    computes it (with the discount d, a rule that is not rational)."""
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


# --- a route that forks and joins: the series-parallel fold, float op by op


def _series_cost(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """C = Σ_i (Π_{j<i} P_j)·C_i, accumulated in order."""
    total, reached = Fraction(0), Fraction(1)
    for p, cost in zip(o["p"], o["c"], strict=True):
        total = rnd(total + rnd(reached * c.number(cost, w)))
        reached = rnd(reached * c.number(p, w))
    return total


def _parallel_cost(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    total = Fraction(0)
    for cost in o["c"]:
        total = rnd(total + c.number(cost, w))
    return total


def _scaled(start: str) -> Callable[[RouteCheck, Mapping[str, Any], str], Fraction]:
    """``start`` times the product of the P operands, multiplied in order."""
    def rule(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
        x = c.number(o[start], w)
        for p in o["p"]:
            x = rnd(x * c.number(p, w))
        return x
    return rule


def _others(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(_product(c, o, w) * c.number(o["x"], w))


def _reach(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(_product(c, o, w) * c.number(o["w"], w))


def _one(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return Fraction(1)


def _zero(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return Fraction(0)


# --- the policy's fold (`[fold]`): the discount d and the option to stop
DISCOUNT_RULE = "d = (1 + r)^(−h), h the horizon in years (days / 365.25, months / 12, none: 0)"
STOPS_RULE = "stops = −c + p · d · R_next < 0 (the planner stops before paying this stage)"
WALKING_RULE = "walking = walking before and not stops (the planner reaches and pays this stage)"


def _discount(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """d = (1 + r)^(−h) in floats, as the compiler computes it: h = amount / 365.25 for
    days, amount / 12 for months, the amount for years, 0 without a horizon, then the
    platform's float power (the one rule of the fold that is not rational); exactly 1
    when r = 0. The rate must be the policy's and the horizon the one the route file
    writes for the transition."""
    t = c.current.removesuffix(".d")
    if o["rate"].get("policy") != ["fold", "discount"]:
        raise c.fail(w, "the rate is not read from the policy's fold.discount")
    rate = c.number(o["rate"], w)
    horizon, unit = o["horizon"], o["unit"]["v"]
    amount = None
    if isinstance(horizon, Mapping) and "f" in horizon:
        amount = c.number(horizon, w)
        if horizon.get("route") != f"{t} horizon":
            raise c.fail(w, f"the horizon is not read from `{t}` in {c.route['file']}")
    elif horizon.get("v") is not None:
        raise c.fail(w, "expected a horizon {f, q} or none")
    stated = c.route_file.transition(c.name, t)
    if stated is None:
        raise c.fail(w, f"{c.route['file']} has no transition `{t}` in route `{c.name}`")
    if amount != stated.get("horizon") or unit != stated.get("horizon_unit"):
        def shown(a: Fraction | None, u: Any) -> str:
            return "no horizon" if a is None else f"horizon {show(a)} {u}"
        raise c.fail(w, f"{shown(amount, unit)} is recorded, but `{t}` in {c.route['file']} states "
                        f"{shown(stated.get('horizon'), stated.get('horizon_unit'))}")
    r = float(rate)
    if r == 0.0:
        return Fraction(1)
    if amount is None:
        years = 0.0
    elif unit in _YEARS:
        years = float(amount) / _YEARS[unit]  # over 1.0 for years: exact, as the compiler's float(amount)
    else:
        raise c.fail(w, f"a horizon's unit is days, months or years, not {unit!r}")
    return Fraction((1.0 + r) ** (-years))


_YEARS = {"days": 365.25, "months": 12.0, "years": 1.0}


def _plain(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """−c + p·d·R_next, each float operation rounded; c, p and d of one stage (a
    transition's c, p and d, or a block's C, P and D)."""
    refs = [str(o[k].get("step", "")).rpartition(".") for k in ("c", "p", "d")]
    if len({stage for stage, _, _ in refs}) != 1 or [kind.lower() for _, _, kind in refs] != ["c", "p", "d"]:
        raise c.fail(w, "its cost, probability and discount are not the c, p and d of one stage")
    p, d = c.number(o["p"], w), c.number(o["d"], w)
    return rnd(-c.number(o["c"], w) + rnd(rnd(p * d) * c.number(o["R_next"], w)))


def _fold_discounted(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return _plain(c, o, w)


def _fold_stop(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return max(Fraction(0), _plain(c, o, w))


def _stops(c: RouteCheck, o: Mapping[str, Any], w: str) -> bool:
    if o["R_next"].get("step", "").startswith("docked "):
        raise c.fail(w, "the planner stops by the score's fold, not the docked one")
    stage = c.current.removesuffix(".stops")
    if str(o["c"].get("step", "")).rpartition(".")[0] != stage:
        raise c.fail(w, f"its operands are not those of `{stage}`")
    return _plain(c, o, w) < 0


def _walking(c: RouteCheck, o: Mapping[str, Any], w: str) -> bool:
    """The planner walks a stage when it walked the stage before and does not stop here."""
    stage = c.current.removesuffix(".walking")
    if o["stops"].get("step") != f"{stage}.stops":
        raise c.fail(w, f"`stops` is not step `{stage}.stops`")
    before = o["before"]
    if before.get("step", "") != c.last_walking:
        expected = f"step `{c.last_walking}`" if c.last_walking else "true (the first stage)"
        raise c.fail(w, f"`before` is not {expected}")
    walks = c.flag(before, w) and not c.flag(o["stops"], w)
    c.last_walking = c.current
    return walks


def _D_walking(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    ref, stage = str(o["walking"].get("step", "")), c.current.removesuffix(".D")
    if ref != f"{stage}.walking" and not (ref.startswith("[") and ref.endswith(".walking")):
        raise c.fail(w, f"`walking` is not step `{stage}.walking` or its block's")
    reach, after = c.number(o["reach"], w), c.number(o["R_next"], w)
    return rnd(reach * max(after, Fraction(0))) if c.flag(o["walking"], w) else Fraction(0)


def _discounted_product(c: RouteCheck, start: Fraction, o: Mapping[str, Any], w: str) -> Fraction:
    """start · Π p_i·d_i, multiplied in order: (x·p_i)·d_i... as the compiler's loops do."""
    x = start
    for p, d in zip(o["p"], o["d"], strict=True):
        x = rnd(rnd(x * c.number(p, w)) * c.number(d, w))
    return x


def _fold_reach(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """reach_{i+1} = reach_i · (p_i·d_i): each factor rounded, then the product."""
    total = Fraction(1)
    for p, d in zip(o["p"], o["d"], strict=True):
        total = rnd(total * rnd(c.number(p, w) * c.number(d, w)))
    return total


def _fold_docked(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    R = Fraction(0)
    for p, d, cost in zip(reversed(o["p"]), reversed(o["d"]), reversed(o["c"]), strict=True):
        R = rnd(-c.number(cost, w) + rnd(rnd(c.number(p, w) * c.number(d, w)) * R))
        if c.abandonment:
            R = max(Fraction(0), R)
    return R


def _series_D(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    total = Fraction(1)
    for d in o["d"]:
        total = rnd(total * c.number(d, w))
    return total


def _parallel_D(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return min(c.number(d, w) for d in o["d"])


def _fold_series_cost(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """C = Σ_i (Π_{j<i} P_j·D_j)·C_i, accumulated in order."""
    total, reached = Fraction(0), Fraction(1)
    for p, d, cost in zip(o["p"], o["d"], o["c"], strict=True):
        total = rnd(total + rnd(reached * c.number(cost, w)))
        reached = rnd(rnd(reached * c.number(p, w)) * c.number(d, w))
    return total


def _fold_series_w(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return _discounted_product(c, c.number(o["w"], w), o, w)


def _fold_parallel_x(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """(Π P of the other branches) · (D / D_b) · x; the ratio is 1 when the branch is the
    slowest (D_b = D) and 0 when D_b = 0."""
    joined, own = c.number(o["D"], w), c.number(o["D_b"], w)
    ratio = Fraction(1) if own == joined else rnd(joined / own) if own != 0 else Fraction(0)
    return rnd(rnd(_product(c, o, w) * ratio) * c.number(o["x"], w))


def _fold_graph_reach(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    return rnd(_discounted_product(c, Fraction(1), o, w) * c.number(o["w"], w))


# --- payoffs along the way (a chain): v of the state a stage reaches, credited with its success
PAYOFF_RULE = "v = min(payoff, payoffs.max_usd): the payoff of the state the transition reaches"
PAYOFF_RATE_RULE = "v = min(payoff, payoffs.max_usd) × rate: the payoff of the state the transition reaches"
PAYOFF_FOLD_RULE = ("v = min(payoff, payoffs.max_usd × rate): the payoff of the state the transition reaches, "
                    "written in the fold's unit")
PAYOFF_R = ("R_i = −c_i + p_i · (v_{i+1} + R_{i+1})", "R_i = −c_i + p_i · d_i · (v_{i+1} + R_{i+1})",
            "R_i = max(0, −c_i + p_i · d_i · (v_{i+1} + R_{i+1}))")
PAYOFF_STOPS = "stops = −c + p · d · (v + R_next) < 0 (the planner stops before paying this stage)"
PAYOFF_D = ("D_i = reach_i · max(v_{i+1} + R_{i+1}, 0)",
            "D_i = reach_i · max(v_{i+1} + R_{i+1}, 0) while walking, else 0")
PAYOFF_DOCKED = tuple(f"docked = R_0 refolded with R_n = 0 and each payoff credited while every change up to its "
                      f"state is covered: {rule}" for rule in PAYOFF_R)


def written_payoffs(c: RouteCheck) -> dict[str, tuple[Fraction, int]]:
    """The `payoff AMOUNT usd` (or `payoff AMOUNT`) each state of the route writes, as the
    route language reads the amount (rounded to a float), with its line: state -> (amount, line)."""
    return {state: (amount, line) for state, (amount, line, _) in _payoff_lines(c).items()}


def _payoff_lines(c: RouteCheck) -> dict[str, tuple[Fraction, int, bool]]:
    """state -> (amount, line, whether the amount is written with a unit)."""
    route, out = f"route {c.name}", {}
    toks = _layout(c).toks
    for i, p in enumerate(toks):
        if p[0] == "name" and p[1] == "payoff" and len(p[4]) == 2 and p[4][0] == route \
                and p[4][1].startswith("state "):  # `payoff` is no field's name: the key of a state's payoff
            state = p[4][1].removeprefix("state ")
            j = i + 1 + (i + 1 < len(toks) and toks[i + 1][1] == "-")
            unit = j + 1 < len(toks) and toks[j + 1][0] == "unit"
            j += 1 + unit
            if state not in out:  # a payoff written twice is the compiler's error
                out[state] = (rnd(_single(c, toks[i + 1 : j], f"state {state}: `payoff` (line {p[2]})")), p[2], unit)
    return out


def paid_transitions(c: RouteCheck) -> list[str]:
    """The transitions whose target state writes a payoff, in the certificate's order."""
    paid = written_payoffs(c)
    return [t for t in c.transitions() if _ends(c, t)[1] in paid]


def _payoff(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """v = min(the payoff the target state writes, the policy's `[payoffs] max_usd`), in the
    fold's unit: times `[units.rates] usd` (rounded once) under a fold in another unit."""
    t = c.current.removesuffix(".v")
    target = _ends(c, t)[1]
    stated = written_payoffs(c).get(target)
    if stated is None:
        raise c.fail(w, f"state `{target}` writes no payoff in {c.route['file']}")
    if o["payoff"].get("route") != f"state {target} payoff":
        raise c.fail(w, f"the payoff is not read from state `{target}`")
    written = c.number(o["payoff"], w)
    if written != stated[0]:
        raise c.fail(w, f"the payoff is {show(written)}, but state `{target}` writes {show(stated[0])} "
                        f"(line {stated[1]} of {c.route['file']})")
    if o["cap"].get("policy") != ["payoffs", "max_usd"]:
        raise c.fail(w, "the cap is not read from the policy's payoffs.max_usd")
    if lookup(c.policy, ["payoffs", "max_usd"]) is None:
        cap = Fraction(o["cap"]["f"])
        if cap != 0 or parse_q(o["cap"]["q"]) != 0:
            raise c.fail(w, f"the cap is {show(cap)}, but the policy has no payoffs.max_usd (a payoff is credited 0)")
    else:
        cap = c.number(o["cap"], w)
    rate = usd_rate(c)
    if not _payoff_lines(c)[target][2] and rate is not None and rate != 1:
        # written in the fold's unit (no unit): at face value, the cap converted at the rate
        if "rate" not in o or c.number(o["rate"], w) != rate:
            raise c.fail(w, "its rate is not the policy's units.rates.usd")
        if next(s["rule"] for s in c.route["steps"] if s["symbol"] == c.current) != PAYOFF_FOLD_RULE:
            raise c.fail(w, f"is not the rule of a payoff in the fold's unit: {PAYOFF_FOLD_RULE}")
        limit = rnd(cap * rate)
        bound = "route" if written <= limit else "policy cap"
        if o["bound_by"].get("v") != bound:
            raise c.fail(w, f"bound_by is recorded {o['bound_by'].get('v')!r}, recomputed {bound!r}")
        return min(written, limit)
    bound = "route" if written <= cap else "policy cap"
    if o["bound_by"].get("v") != bound:
        raise c.fail(w, f"bound_by is recorded {o['bound_by'].get('v')!r}, recomputed {bound!r}")
    credited = min(written, cap)
    if rate is None or rate == 1:
        if "rate" in o:
            raise c.fail(w, "a rate is recorded, but the fold is kept in usd (or at rate 1)")
        if c.route["steps"] and next(s["rule"] for s in c.route["steps"] if s["symbol"] == c.current) != PAYOFF_RULE:
            raise c.fail(w, f"is not the rule of a fold kept in usd: {PAYOFF_RULE}")
        return credited
    if "rate" not in o or c.number(o["rate"], w) != rate:
        raise c.fail(w, "its rate is not the policy's units.rates.usd")
    if next(s["rule"] for s in c.route["steps"] if s["symbol"] == c.current) != PAYOFF_RATE_RULE:
        raise c.fail(w, f"is not the rule of a fold in another unit: {PAYOFF_RATE_RULE}")
    return rnd(credited * rate)


def _after(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """v + R_next, rounded: what the stage's success is worth."""
    return rnd(c.number(o["v"], w) + c.number(o["R_next"], w))


def _paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """−c + p·d·(v + R_next), each float operation rounded (the paper's fold: p·(v + R_next));
    the c, p, d and v of one stage."""
    keys = ("c", "p", "v") if "d" not in o else ("c", "p", "d", "v")
    refs = [str(o[k].get("step", "")).rpartition(".") for k in keys]
    if len({stage for stage, _, _ in refs}) != 1 or [kind for _, _, kind in refs] != list(keys):
        raise c.fail(w, f"its {', '.join(keys)} are not those of one stage")
    q = c.number(o["p"], w) if "d" not in o else rnd(c.number(o["p"], w) * c.number(o["d"], w))
    return rnd(-c.number(o["c"], w) + rnd(q * _after(c, o, w)))


def _fold_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    if (c.fold_kind == "paper") != ("d" not in o):
        raise c.fail(w, "a discount d is read under the paper's fold, or missing under the policy's [fold]")
    r = _paid(c, o, w)
    return max(Fraction(0), r) if c.abandonment else r


def _stops_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> bool:
    if o["R_next"].get("step", "").startswith("docked "):
        raise c.fail(w, "the planner stops by the score's fold, not the docked one")
    stage = c.current.removesuffix(".stops")
    if str(o["c"].get("step", "")).rpartition(".")[0] != stage or "d" not in o:
        raise c.fail(w, f"its operands are not those of `{stage}`")
    return _paid(c, o, w) < 0


def _D_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    stage = c.current.removesuffix(".D")
    if o["v"].get("step") != f"{stage}.v":
        raise c.fail(w, f"`v` is not step `{stage}.v`")
    if "walking" in o:
        if o["walking"].get("step") != f"{stage}.walking":
            raise c.fail(w, f"`walking` is not step `{stage}.walking`")
        if not c.flag(o["walking"], w):
            return Fraction(0)
    return rnd(c.number(o["reach"], w) * max(_after(c, o, w), Fraction(0)))


def _docked_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """R_0 refolded with R_n = 0, each payoff credited while every transition up to its
    state has no uncovered material change (by the coverage rows, which
    `check_coverage_and_verdict` decides again; under coverage `off` the rows decide
    nothing and the flags are as recorded)."""
    ts = c.transitions()
    flags = [c.flag(x, w) for x in o["credited"]]
    if len(flags) != len(ts):
        raise c.fail(w, f"`credited` has {len(flags)} flags for {len(ts)} transitions")
    if c.route["decision"]["mode"] != "off":
        uncovered = {r["transition"] for r in c.route["coverage"] if r["material"] and r["covered"] is False}
        want, covered = [], True
        for t in ts:
            covered = covered and t not in uncovered
            want.append(covered)
        if flags != want:
            def named(xs: Sequence[bool]) -> str:
                return ", ".join(t for t, f in zip(ts, xs, strict=True) if f) or "none"
            raise c.fail(w, f"credits the payoffs along {named(flags)}, but the covered path is {named(want)}")
    paid = set(paid_transitions(c))
    vs = []
    for t, x in zip(ts, o["v"], strict=True):
        v = c.number(x, w)
        if t not in paid and (x.get("step") is not None or v != 0):
            raise c.fail(w, f"credits a payoff at `{t}`, whose target state writes none")
        vs.append(v)
    if (c.fold_kind == "paper") != ("d" not in o):
        raise c.fail(w, "a discount d is read under the paper's fold, or missing under the policy's [fold]")
    ds = o.get("d") or [None] * len(ts)
    R = Fraction(0)
    for p, d, cost, v, credited in reversed(list(zip(o["p"], ds, o["c"], vs, flags, strict=True))):
        q = c.number(p, w) if d is None else rnd(c.number(p, w) * c.number(d, w))
        R = rnd(-c.number(cost, w) + rnd(q * rnd((v if credited else Fraction(0)) + R)))
        if c.abandonment:
            R = max(Fraction(0), R)
    return R



# --- payoffs on a route that forks and joins (docs/graphs.md, "Payoffs on a graph"): v_i the payoff
# of the state block i exits to, the `v` step of the transition its exit is reached by (a join's: the
# first branch's); the docked score is one refold over the route's blocks, by the checker's own tree
GRAPH_PAYOFF_SERIES_C = ("series: C = Σ_i (Π_{j<i} P_j)·C_i − Σ_{i<n} (Π_{j≤i} P_j)·v_i",
                         "series: C = Σ_i (Π_{j<i} P_j · D_j)·C_i − Σ_{i<n} (Π_{j≤i} P_j · D_j)·v_i")
GRAPH_PAYOFF_SPINE = ("R = −C + P · (v + R(next)) (spine)", "R = −C + P · D · (v + R(next)) (spine)",
                      "R = max(0, −C + P · D · (v + R(next))) (spine)")
GRAPH_PAYOFF_STOPS = "stops = −C + P · D · (v + R(next)) < 0 (the planner stops before paying this spine item)"
GRAPH_PAYOFF_SPINE_X = "x = v + R(exit) (a spine item)"
GRAPH_PAYOFF_SERIES_X = ("x = v + (−C_next + P_next · x_next) (series item)",
                         "x = v + (−C_next + P_next · D_next · x_next) (series item)")
GRAPH_PAYOFF_DOCKED = tuple(
    f"docked = R(start) refolded over the route's blocks with V = 0, each payoff credited while every change on "
    f"every path into its state is covered ({fold})"
    for fold in ("the paper's fold", "discounted", "discounted, with the option to stop"))


def _one_stage(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """The rounded p·d of one stage (p alone under the paper's fold), its c, p and d the
    C, P and D of one block (or a transition's c, p, d)."""
    keys = ("c", "p") if "d" not in o else ("c", "p", "d")
    if not isinstance(o.get("v"), Mapping):
        raise c.fail(w, "reads no payoff `v`")
    if (c.fold_kind == "paper") != ("d" not in o):
        raise c.fail(w, "a discount d is read under the paper's fold, or missing under the policy's [fold]")
    refs = [str(o[k].get("step", "")).rpartition(".") for k in keys]
    if len({stage for stage, _, _ in refs}) != 1 or [kind.lower() for _, _, kind in refs] != list(keys):
        raise c.fail(w, f"its {', '.join(keys)} are not those of one stage")
    if not str(o["v"].get("step", "")).endswith(".v"):
        raise c.fail(w, "its v is not a payoff's `v` step")
    p = c.number(o["p"], w)
    return p if "d" not in o else rnd(p * c.number(o["d"], w))


def _spine_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """−C + P·D·(v + R(next)), each float operation rounded; the max with the option to stop."""
    q = _one_stage(c, o, w)
    r = rnd(-c.number(o["c"], w) + rnd(q * _after(c, o, w)))
    return max(Fraction(0), r) if c.abandonment else r


def _spine_stops_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> bool:
    if o["R_next"].get("step", "").startswith("docked "):
        raise c.fail(w, "the planner stops by the score's fold, not the docked one")
    q = _one_stage(c, o, w)
    return rnd(-c.number(o["c"], w) + rnd(q * _after(c, o, w))) < 0


def _spine_x_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    if not isinstance(o.get("v"), Mapping) or not str(o["v"].get("step", "")).endswith(".v"):
        raise c.fail(w, "its v is not a payoff's `v` step")
    return rnd(c.number(o["v"], w) + c.number(o["R"], w))


def _series_x_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """v + (−C_next + P_next·D_next·x_next): the R at the item's exit (the later items folded
    onto the series' continuation), and the payoff there."""
    q = _one_stage(c, o, w)
    return rnd(c.number(o["v"], w) + rnd(-c.number(o["c"], w) + rnd(q * c.number(o["R_next"], w))))


def _series_cost_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """C = Σ_i (Π_{j<i} P_j·D_j)·C_i, each item's exit payoff (but the last's) taken off
    once its item is reached and has succeeded, accumulated in order as the compiler does."""
    if (c.fold_kind == "paper") != ("d" not in o):
        raise c.fail(w, "a discount d is read under the paper's fold, or missing under the policy's [fold]")
    n = len(o["c"])
    ds = o.get("d") or [None] * n
    if len(o["v"]) != n - 1:
        raise c.fail(w, f"`v` has {len(o['v'])} payoffs for the {n - 1} states inside the series")
    total, reached = Fraction(0), Fraction(1)
    for i, (p, d, cost) in enumerate(zip(o["p"], ds, o["c"], strict=True)):
        total = rnd(total + rnd(reached * c.number(cost, w)))
        reached = rnd(reached * c.number(p, w))
        if d is not None:
            reached = rnd(reached * c.number(d, w))
        if i < n - 1:
            x = o["v"][i]
            v = c.number(x, w)
            if x.get("step") is None and v != 0:
                raise c.fail(w, f"credits a payoff of {show(v)} at a state inside the series that writes none")
            total = rnd(total - rnd(reached * v))
    return total


def _graph_docked_paid(c: RouteCheck, o: Mapping[str, Any], w: str) -> Fraction:
    """The route's blocks folded again, by the checker's own series-parallel tree of the
    route file, from V = 0: each transition's p, c (and d), and each payoff credited only
    when no transition on any path from the start into its state has an uncovered material
    change (derived from the coverage rows, which are decided again; under coverage `off`
    the flags are as recorded)."""
    ts = c.transitions()
    flags = [c.flag(x, w) for x in o["credited"]]
    if len(flags) != len(ts) or any(len(o[k]) != len(ts) for k in ("p", "c", "v", *(("d",) if "d" in o else ()))):
        raise c.fail(w, f"its lists are not one entry for each of the {len(ts)} transitions")
    if (c.fold_kind == "paper") != ("d" not in o):
        raise c.fail(w, "a discount d is read under the paper's fold, or missing under the policy's [fold]")
    structure = Structure(c, [])
    if c.route["decision"]["mode"] != "off":
        uncovered = {r["transition"] for r in c.route["coverage"] if r["material"] and r["covered"] is False}
        into: dict[str, set[str]] = {}
        for t in structure.order:
            a, b = structure.ends[t]
            into.setdefault(b, set()).update(into.get(a, set()), {t} & uncovered)
        want = [not into[structure.ends[t][1]] for t in ts]
        if flags != want:
            def named(xs: Sequence[bool]) -> str:
                return ", ".join(t for t, f in zip(ts, xs, strict=True) if f) or "none"
            raise c.fail(w, f"credits the payoffs into {named(flags)}, but those whose every path is covered are "
                            f"{named(want)}")
    paid = set(paid_transitions(c))
    edge: dict[str, tuple[Fraction, Fraction, Fraction]] = {}
    at: dict[str, Fraction] = {}
    ds = o.get("d") or [None] * len(ts)
    for t, p, d, cost, x, credited in zip(ts, o["p"], ds, o["c"], o["v"], flags, strict=True):
        for key, ref in (("p", p), ("c", cost), ("d", d)):
            if ref is not None and ref.get("step") != f"{t}.{key}":
                raise c.fail(w, f"its {key} of `{t}` is not step `{t}.{key}`")
        v = c.number(x, w)
        if t not in paid and (x.get("step") is not None or v != 0):
            raise c.fail(w, f"credits a payoff at `{t}`, whose target state writes none")
        if t in paid and x.get("step") != f"{t}.v":
            raise c.fail(w, f"its v of `{t}` is not step `{t}.v`")
        edge[t] = (c.number(p, w), c.number(cost, w), Fraction(1) if d is None else c.number(d, w))
        at[structure.ends[t][1]] = v if credited else Fraction(0)
    blocks: dict[int, tuple[Fraction, Fraction, Fraction]] = {}

    def block(node: Shape) -> tuple[Fraction, Fraction, Fraction]:
        if node[0] == "edge":
            return edge[node[1]]
        parts = [block(x) for x in node[1]]
        if node[0] == "parallel":
            P, C = Fraction(1), Fraction(0)
            for bp, bc, _ in parts:
                P, C = rnd(P * bp), rnd(C + bc)
            return P, C, min(bd for _, _, bd in parts)
        P, C, D, Q = Fraction(1), Fraction(0), Fraction(1), Fraction(1)
        for i, (bp, bc, bd) in enumerate(parts):
            C = rnd(C + rnd(Q * bc))
            Q = rnd(rnd(Q * bp) * bd)
            P, D = rnd(P * bp), rnd(D * bd)
            if i < len(parts) - 1:
                C = rnd(C - rnd(Q * at.get(structure.exit_of(node[1][i]), Fraction(0))))
        return P, C, D

    shape = structure.shape
    items = shape[1] if shape[0] == "series" else [shape]
    R = Fraction(0)
    for item in reversed(items):
        P, C, D = blocks.setdefault(id(item), block(item))
        R = rnd(-C + rnd(rnd(P * D) * rnd(at.get(structure.exit_of(item), Fraction(0)) + R)))
        if c.abandonment:
            R = max(Fraction(0), R)
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
    if not isinstance(o["T"], Mapping) or o["T"].get("step") != "T":
        raise c.fail(w, "operand `T` is not step `T`")
    _bucket_bounds(c, o, w)
    T = c.values.get("T")
    if (T is None) != (o["T"].get("v", 0) is None) or (T is not None and c.number(o["T"], w) != T):
        raise c.fail(w, f"operand `T` is not step `T` ({show(T)})")
    if T is None or o["neg_below"] is None:
        if o["neg_below"] is None and lookup(c.policy, ["buckets"]) is not None:
            raise c.fail(w, "the policy has [buckets], the certificate none")
        return None
    neg, pos = c.number(o["neg_below"], w), c.number(o["pos_from"], w)
    return "neg" if T < neg else "pos" if T >= pos else "mix"


def _bucket_bounds(c: RouteCheck, o: Mapping[str, Any], w: str) -> None:
    """The bounds a bucket step records are the policy's `[buckets]` (none without it),
    whether or not T is computed."""
    has = lookup(c.policy, ["buckets"]) is not None
    for key in ("neg_below", "pos_from"):
        x = o.get(key)
        if not has:
            if x is not None:
                raise c.fail(w, f"`{key}` is recorded, but the policy has no [buckets]")
            continue
        if not isinstance(x, Mapping) or x.get("policy") != ["buckets", key]:
            raise c.fail(w, f"`{key}` is not read from the policy's buckets.{key}")
        c.number(x, w)


def _eligible(c: RouteCheck, o: Mapping[str, Any], w: str) -> bool:
    gates = {g.get("id"): g for g in c.policy.get("gates") or [] if isinstance(g, dict)}
    if [g["id"] for g in o["gates"]] != list(gates):
        raise c.fail(w, "the gates are not the policy's")
    for g in o["gates"]:
        rule = gates[g["id"]]
        blocks = rule.get("kind") == "eligibility" or bool(rule.get("block", False))
        if g["blocks"] != blocks or g["rule"] != rule.get("rule") or g["kind"] != rule.get("kind"):
            raise c.fail(w, f"gate `{g['id']}` is not the policy's")
    names = _gate_operands(c, o["names"], w)
    for g in o["gates"]:
        c.counts["gates"] += 1
        try:
            passed = truthy(Evaluator(names, BASE_FUNCTIONS).eval(parse_expression(g["rule"])))
        except ExprError:
            passed = False
        if passed != g["passed"]:
            raise c.fail(f"{w}: gate `{g['id']}` (`{g['rule']}`)",
                         f"recorded passed={g['passed']}, recomputed {passed}")
    return all(g["passed"] or not g["blocks"] for g in o["gates"])


_GATE_STEPS = {"score": "score", "value": "V", "flat_product": "flat_product", "criteria_score": "T"}


def _gate_operands(c: RouteCheck, recorded: Mapping[str, Any], w: str) -> dict[str, Any]:
    """The names a gate rule reads, each tied to its step or to the route."""
    names = {k: _decode(c, v, f"{w}: `{k}`") for k, v in recorded.items()}
    for name, symbol in _GATE_STEPS.items():
        if c.values.get(symbol) is None:
            if names.get(name) is not None:
                raise c.fail(f"{w}: `{name}`", f"is {names.get(name)}, but step `{symbol}` is none")
        elif (recorded.get(name) or {}).get("step") != symbol:
            raise c.fail(f"{w}: `{name}`", f"is not step `{symbol}`")
    transitions = c.transitions()
    ev, route = names.get("evidence") or {}, names.get("route") or {}
    if names.get("transitions") != transitions or route.get("transitions") != transitions:
        raise c.fail(f"{w}: `transitions`", f"are not the route's ({', '.join(transitions)})")
    if route.get("name") != c.name:
        raise c.fail(f"{w}: `route.name`", f"is {route.get('name')!r}, not {c.name!r}")
    as_of = route.get("as_of")
    if not isinstance(as_of, dt.date) or not c.route_file.states("as_of", as_of.isoformat()):
        raise c.fail(f"{w}: `route.as_of`", f"{as_of} is not the route's as_of in {c.route['file']}")
    if ev.get("admissible") != c.route["admissible_evidence"]:
        raise c.fail(f"{w}: `evidence.admissible`", "is not the route's admissible evidence")
    for s in c.route["steps"]:
        for item in s["operands"]["items"] if s["symbol"].endswith((".sat(C)", ".sat(K)")) else ():
            if item["evidence"] not in ev["admissible"]:
                raise c.fail(f"{w}: `evidence.admissible`", f"leaves out `{item['evidence']}`, "
                                                            f"which `{s['symbol']}` weighs")
    every = ev.get("all")
    written = [e["name"] for e in route_evidence(c)]
    if every != written:
        raise c.fail(f"{w}: `evidence.all`", f"is not the route's evidence, in order ({', '.join(written) or 'none'})")
    for name in every:
        if not isinstance(name, str) or not c.route_file.states("evidence", name):
            raise c.fail(f"{w}: `evidence.all`", f"names `{name}`, which {c.route['file']} does not write")
    return names


# Which step each operand of a rule must name: for a step `<t>.<x>` of transition t,
# the operand names `<t>.<suffix>`; the fold over a chain names stage i's own c and p.
_OWN_STEPS: dict[str, dict[str, str]] = {
    "W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max)": {"sat_c": "sat(C)", "sat_k": "sat(K)"},
    "p = clip(p_prior · W, 0, 1)": {"p_prior": "p_prior", "W": "W"},
    "p = clip(p_prior · W, 0, p_max)": {"p_prior": "p_prior", "W": "W"},
    "c = max(budget, floor_class, floor_delta)": {"budget": "budget", "floor_class": "floor_class",
                                                  "floor_delta": "floor_delta"},
    "D_i = reach_i · max(R_{i+1}, 0)": {"reach": "reach"},
}
_CHAIN_FOLDS = ("R_i = −c_i + p_i · R_{i+1}", "R_i = −c_i + p_i · d_i · R_{i+1}",
                "R_i = max(0, −c_i + p_i · d_i · R_{i+1})")
_PER_TRANSITION_LISTS: dict[str, dict[str, str]] = {
    PAYOFF_DOCKED[0]: {"p": "p", "c": "c"},
    PAYOFF_DOCKED[1]: {"p": "p", "d": "d", "c": "c"},
    PAYOFF_DOCKED[2]: {"p": "p", "d": "d", "c": "c"},
    "binding = the first i with the largest U_i · D_i": {"U": "U", "D": "D"},
    "flat product = Π p_i": {"p": "p"},
    "docked = R_0 refolded with R_n = 0": {"p": "p", "c": "c"},
    "docked = R_0 refolded with R_n = 0: R_i = −c_i + p_i · d_i · R_{i+1}": {"p": "p", "d": "d", "c": "c"},
    "docked = R_0 refolded with R_n = 0: R_i = max(0, −c_i + p_i · d_i · R_{i+1})": {"p": "p", "d": "d", "c": "c"},
}
_CHAIN_D = ("D_i = reach_i · max(R_{i+1}, 0)", "D_i = reach_i · max(R_{i+1}, 0) while walking, else 0")
_CHAIN_REACH = ("reach_i = Π_{j<i} p_j", "reach_i = Π_{j<i} p_j · d_j")


def check_operand_steps(c: RouteCheck, symbol: str, rule: str, ops: Mapping[str, Any], what: str) -> None:
    """Each operand a rule takes from another step names the step the rule reads: the
    transition's own step (`launch.c`'s `floor_delta` is `launch.floor_delta`), stage
    i's `c` and `p` and `R_{i+1}` in the fold of a chain, every transition's `U` and
    `D` in order for `binding`. A same-valued other step does not pass."""

    def expect(name: str, o: Any, want: str) -> None:
        got = o.get("step") if isinstance(o, Mapping) else None
        if got != want:
            raise c.fail(what, f"operand `{name}` names step `{got}`, but the rule reads `{want}`")

    transitions = c.transitions()
    t = symbol.rpartition(".")[0]
    own = _OWN_STEPS.get(rule)
    if own is not None and t in transitions:
        for name, suffix in own.items():
            expect(name, ops.get(name), f"{t}.{suffix}")
    if rule == "floor_delta = Σ prices" and t in transitions:
        for o in ops.get("prices", []):
            ref = o.get("step", "") if isinstance(o, Mapping) else ""
            if not (ref.startswith(f"{t}.price[") and ref.endswith("]")):
                raise c.fail(what, f"operand `prices` names step `{ref}`, not a price of `{t}`")
    if (rule in _CHAIN_FOLDS or rule in PAYOFF_R) and re.fullmatch(r"R_[0-9]+", symbol):
        i = int(symbol[2:])
        if i >= len(transitions):
            raise c.fail(what, f"no transition {i} (the route has {len(transitions)})")
        expect("c", ops.get("c"), f"{transitions[i]}.c")
        expect("p", ops.get("p"), f"{transitions[i]}.p")
        expect("R_next", ops.get("R_next"), f"R_{i + 1}")
        if rule in PAYOFF_R:
            expect("v", ops.get("v"), f"{transitions[i]}.v")
    chain = any(s["symbol"] == "R_0" for s in c.route["steps"])
    if rule in PAYOFF_D and t in transitions:
        expect("reach", ops.get("reach"), f"{t}.reach")
        expect("R_next", ops.get("R_next"), f"R_{transitions.index(t) + 1}")
    if rule in _CHAIN_D and chain and t in transitions:
        expect("R_next", ops.get("R_next"), f"R_{transitions.index(t) + 1}")
    elif rule in _CHAIN_D and t in transitions:
        expect("R_next", ops.get("R_next"), f"{t}.x")
    if rule in _CHAIN_REACH and t in transitions:
        earlier = transitions[: transitions.index(t)]
        for name, suffix in (("p", "p"), ("d", "d")):
            if name in ops or rule != "reach_i = Π_{j<i} p_j":
                got = [o.get("step") if isinstance(o, Mapping) else None for o in ops.get(name, [])]
                if got != [f"{x}.{suffix}" for x in earlier]:
                    raise c.fail(what, f"operand `{name}` names steps {', '.join(map(str, got)) or 'none'}, but the "
                                       f"rule reads the {suffix} of every earlier transition")
    lists = _PER_TRANSITION_LISTS.get(rule)
    if lists is not None:
        for name, suffix in lists.items():
            got = [o.get("step") if isinstance(o, Mapping) else None for o in ops.get(name, [])]
            want = [f"{x}.{suffix}" for x in transitions]
            if got != want:
                raise c.fail(what, f"operand `{name}` names steps {', '.join(map(str, got)) or 'none'}, but the rule "
                                   f"reads {', '.join(want)}")


RULES: dict[str, Callable[[RouteCheck, Mapping[str, Any], str], Any]] = {
    "V = tam × capture × defensibility": _V,
    VISION_RULE: _V_formula,
    BUDGET_AT_RATE_RULE: _budget_rate,
    "p_prior = priors[class].p": _copy("prior"),
    "sat = S/(1+S), S = Σ x_(i)·decay^i over x sorted descending": _sat,
    "W = clip(1 + gc·sat(C) − gk·sat(K), w_min, w_max)": _W,
    "p = clip(p_prior · W, 0, 1)": _p,
    "p = clip(p_prior · W, 0, p_max)": _p_max,
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
    "series: P = Π P_i": _product,
    "parallel: P = Π P_i": _product,
    "series: C = Σ_i (Π_{j<i} P_j)·C_i": _series_cost,
    "parallel: C = Σ C_b": _parallel_cost,
    "R(end) = V": _copy("V"),
    "R = −C + P · R(next) (spine)": _fold,
    "score = R(start)": _copy("R"),
    "w = 1 (a spine item)": _one,
    "x = R(exit) (a spine item)": _copy("R"),
    "w = w(parent) · Π P of the earlier items (series item)": _scaled("w"),
    "x = x(parent) (the last item of a series)": _copy("x"),
    "x = −C_next + P_next · x_next (series item)": _fold,
    "w = w(parent) (parallel branch)": _copy("w"),
    "x = (Π P of the other branches) · x(parent) (parallel branch)": _others,
    "reach = (Π P of the earlier spine items) · w": _reach,
    "docked R(end) = 0": _zero,
    "docked = R(start) refolded with V = 0": _copy("R"),
    DISCOUNT_RULE: _discount,
    "R_i = −c_i + p_i · d_i · R_{i+1}": _fold_discounted,
    "R_i = max(0, −c_i + p_i · d_i · R_{i+1})": _fold_stop,
    STOPS_RULE: _stops,
    WALKING_RULE: _walking,
    "reach_i = Π_{j<i} p_j · d_j": _fold_reach,
    "D_i = reach_i · max(R_{i+1}, 0) while walking, else 0": _D_walking,
    "docked = R_0 refolded with R_n = 0: R_i = −c_i + p_i · d_i · R_{i+1}": _fold_docked,
    "docked = R_0 refolded with R_n = 0: R_i = max(0, −c_i + p_i · d_i · R_{i+1})": _fold_docked,
    "series: D = Π D_i": _series_D,
    "parallel: D = min D_b (the join waits for the slowest branch)": _parallel_D,
    "series: C = Σ_i (Π_{j<i} P_j · D_j)·C_i": _fold_series_cost,
    "R = −C + P · D · R(next) (spine)": _fold_discounted,
    "R = max(0, −C + P · D · R(next)) (spine)": _fold_stop,
    "w = w(parent) · Π P · D of the earlier items (series item)": _fold_series_w,
    "x = −C_next + P_next · D_next · x_next (series item)": _fold_discounted,
    "x = (Π P of the other branches) · (D / D_b) · x(parent) (parallel branch)": _fold_parallel_x,
    "reach = (Π P · D of the earlier spine items) · w": _fold_graph_reach,
    PAYOFF_RULE: _payoff,
    PAYOFF_RATE_RULE: _payoff,
    PAYOFF_FOLD_RULE: _payoff,
    **{rule: _fold_paid for rule in PAYOFF_R},
    PAYOFF_STOPS: _stops_paid,
    **{rule: _D_paid for rule in PAYOFF_D},
    **{rule: _docked_paid for rule in PAYOFF_DOCKED},
    **{rule: _series_cost_paid for rule in GRAPH_PAYOFF_SERIES_C},
    **{rule: _spine_paid for rule in GRAPH_PAYOFF_SPINE},
    GRAPH_PAYOFF_STOPS: _spine_stops_paid,
    GRAPH_PAYOFF_SPINE_X: _spine_x_paid,
    **{rule: _series_x_paid for rule in GRAPH_PAYOFF_SERIES_X},
    **{rule: _graph_docked_paid for rule in GRAPH_PAYOFF_DOCKED},
    "T = Σ w·clip(s, 0, 100) / Σ w": _T,
    "bucket = neg if T < neg_below, pos if T ≥ pos_from, else mix": _bucket,
    "eligible = every gate passes or does not block": _eligible,
}


FOLD_NAMES = {"paper": "the paper's fold", "discount": "the discounted fold",
              "stop": "the fold with the option to stop"}
_EXTENSION = ("discount", "stop")
# The rules that hold under one fold only; the policy's `[fold]` picks the fold (any other
# rule holds under every fold).
FOLDS: dict[str, tuple[str, ...]] = {
    "R_i = −c_i + p_i · R_{i+1}": ("paper",),
    "reach_i = Π_{j<i} p_j": ("paper",),
    "docked = R_0 refolded with R_n = 0": ("paper",),
    "series: C = Σ_i (Π_{j<i} P_j)·C_i": ("paper",),
    "R = −C + P · R(next) (spine)": ("paper",),
    "w = w(parent) · Π P of the earlier items (series item)": ("paper",),
    "x = −C_next + P_next · x_next (series item)": ("paper",),
    "x = (Π P of the other branches) · x(parent) (parallel branch)": ("paper",),
    "reach = (Π P of the earlier spine items) · w": ("paper",),
    "D_i = reach_i · max(R_{i+1}, 0)": ("paper", "discount"),
    DISCOUNT_RULE: _EXTENSION,
    "reach_i = Π_{j<i} p_j · d_j": _EXTENSION,
    "series: D = Π D_i": _EXTENSION,
    "parallel: D = min D_b (the join waits for the slowest branch)": _EXTENSION,
    "series: C = Σ_i (Π_{j<i} P_j · D_j)·C_i": _EXTENSION,
    "w = w(parent) · Π P · D of the earlier items (series item)": _EXTENSION,
    "x = −C_next + P_next · D_next · x_next (series item)": _EXTENSION,
    "x = (Π P of the other branches) · (D / D_b) · x(parent) (parallel branch)": _EXTENSION,
    "reach = (Π P · D of the earlier spine items) · w": _EXTENSION,
    "R_i = −c_i + p_i · d_i · R_{i+1}": ("discount",),
    "docked = R_0 refolded with R_n = 0: R_i = −c_i + p_i · d_i · R_{i+1}": ("discount",),
    "R = −C + P · D · R(next) (spine)": ("discount",),
    "R_i = max(0, −c_i + p_i · d_i · R_{i+1})": ("stop",),
    "docked = R_0 refolded with R_n = 0: R_i = max(0, −c_i + p_i · d_i · R_{i+1})": ("stop",),
    "R = max(0, −C + P · D · R(next)) (spine)": ("stop",),
    STOPS_RULE: ("stop",),
    WALKING_RULE: ("stop",),
    "D_i = reach_i · max(R_{i+1}, 0) while walking, else 0": ("stop",),
    PAYOFF_R[0]: ("paper",),
    PAYOFF_R[1]: ("discount",),
    PAYOFF_R[2]: ("stop",),
    PAYOFF_DOCKED[0]: ("paper",),
    PAYOFF_DOCKED[1]: ("discount",),
    PAYOFF_DOCKED[2]: ("stop",),
    PAYOFF_STOPS: ("stop",),
    PAYOFF_D[0]: ("paper", "discount"),
    PAYOFF_D[1]: ("stop",),
    GRAPH_PAYOFF_SERIES_C[0]: ("paper",),
    GRAPH_PAYOFF_SERIES_C[1]: _EXTENSION,
    GRAPH_PAYOFF_SPINE[0]: ("paper",),
    GRAPH_PAYOFF_SPINE[1]: ("discount",),
    GRAPH_PAYOFF_SPINE[2]: ("stop",),
    GRAPH_PAYOFF_STOPS: ("stop",),
    GRAPH_PAYOFF_SERIES_X[0]: ("paper",),
    GRAPH_PAYOFF_SERIES_X[1]: _EXTENSION,
    GRAPH_PAYOFF_DOCKED[0]: ("paper",),
    GRAPH_PAYOFF_DOCKED[1]: ("discount",),
    GRAPH_PAYOFF_DOCKED[2]: ("stop",),
}
_U_RANGE, _U_DEFAULT = "U = max − min of the estimates", "U = uncertainty.default"


def _layout(c: RouteCheck) -> Layout:
    if c.layout is None:
        c.layout = layout_of(c.route_file.text.replace("\r\n", "\n").replace("\r", "\n"))
    return c.layout


def _place(c: RouteCheck, b: Any, what: str) -> tuple[str, int, int, int]:
    """A recorded `written`: where it says (`line N of FILE`), the index of its first
    token, the index after its last, and its line. Its text must be the file's there."""
    if not isinstance(b, Mapping) or not isinstance(b.get("text"), str):
        raise c.fail(what, f"is not bound to its place in {c.route['file']} (no `written`)")
    line, column, end_line, end_column = (int(b[k]) for k in ("line", "column", "end_line", "end_column"))
    at = f"line {line} of {c.route['file']}"
    layout = _layout(c)
    found = layout.text_at(line, column, end_line, end_column)
    if found != b["text"]:
        shown = "nothing" if found is None else f"`{found}`"
        raise c.fail(f"{what} ({at})", f"the certificate says `{b['text']}` is written there; the file has {shown}")
    first = layout.index.get((line, column))
    if first is None:
        raise c.fail(f"{what} ({at})", f"no statement starts at column {column}")
    end = first
    while end < len(layout.toks) and (layout.toks[end][2], layout.toks[end][3]) < (end_line, end_column):
        end += 1
    last = layout.toks[end - 1]
    if (last[2], last[3] + len(last[1])) != (end_line, end_column):
        raise c.fail(f"{what} ({at})", f"`{b['text']}` does not end where a token of the file ends")
    return at, first, end, line


def _statement(c: RouteCheck, b: Any, blocks: tuple[str, ...], first: str, what: str) -> tuple[str, list[Place]]:
    """The tokens of the statement recorded at ``b``: it must start with ``first``,
    directly in ``blocks``, and be whole (no number, unit or `*` of it after the end)."""
    at, i, end, _ = _place(c, b, what)
    toks = _layout(c).toks
    head = toks[i]
    if head[1] != first or head[4] != blocks or (i > 0 and toks[i - 1][1] in _LIST_WORDS):
        raise c.fail(f"{what} ({at})", f"`{b['text']}` is not the `{first}` statement of "
                                       f"{' > '.join(blocks)}")
    if end < len(toks) and (toks[end][0] in ("number", "unit") or toks[end][1] in ("*", "-")):
        raise c.fail(f"{what} ({at})", f"`{b['text']}` leaves out the rest of its statement")
    return at, toks[i + 1 : end]


def _quantities(c: RouteCheck, toks: Sequence[Place], what: str) -> list[Fraction]:
    """The numbers of `-`? NUMBER UNIT? quantities, as the route language reads them."""
    out, i = [], 0
    while i < len(toks):
        minus = toks[i][1] == "-"
        i += minus
        if i >= len(toks) or toks[i][0] != "number":
            raise c.fail(what, "is not written as a number")
        value = literal_number(toks[i][1])
        out.append(-value if minus else value)
        i += 1 + (i + 1 < len(toks) and toks[i + 1][0] == "unit")
    return out


def _single(c: RouteCheck, toks: Sequence[Place], what: str) -> Fraction:
    values = _quantities(c, toks, what)
    if len(values) != 1:
        raise c.fail(what, "is not written as one number")
    return values[0]


def check_written(c: RouteCheck, overrides: Sequence[Mapping[str, Any]]) -> None:
    """Every authored number of the route's steps against the route file."""
    route = f"route {c.name}"
    layout = _layout(c)
    stated = sorted({p[4][1].removeprefix("transition ") for p in layout.toks
                     if len(p[4]) >= 2 and p[4][0] == route and p[4][1].startswith("transition ")})
    if stated != sorted(c.transitions()):
        raise c.fail("transitions", f"are {', '.join(c.transitions()) or 'none'} in the certificate, "
                                    f"{', '.join(stated) or 'none'} in {c.route['file']}")
    route_set = {tuple(o["path"]): o["value"] for o in overrides if o["applies_to"] == "route"}
    steps = {s["symbol"]: s for s in c.route["steps"]}

    def step(symbol: str, *rules: str) -> Mapping[str, Any]:
        s: Mapping[str, Any] | None = steps.get(symbol)
        if s is None or s["rule"] not in rules:
            raise c.fail(symbol, f"the certificate does not compute it by {' or '.join(rules)}")
        return s

    def same(x: Fraction, literal: Fraction, key: tuple[str, ...] | None, what: str, at: str) -> None:
        if key is not None and key in route_set:
            want, why = rnd(Fraction(float(route_set[key]))), f"the override {'.'.join(key)} sets"
        else:
            want, why = literal, "the file writes"
        if x != want:
            raise c.fail(f"{what} ({at})", f"is {show(x)}, but {why} {show(want)}")

    def tagged(o: Any, tag: str, what: str) -> None:
        """An authored operand names where the route states it (`route`)."""
        if not isinstance(o, Mapping) or o.get("route") != tag:
            raise c.fail(what, f"is not tagged `route: {tag}`")

    v = step("V", "V = tam × capture × defensibility", VISION_RULE)
    v_ops = v["operands"]["fields"] if v["rule"] == VISION_RULE else v["operands"]
    for key in (v_ops if v["rule"] == VISION_RULE else ("tam", "capture", "defensibility")):
        o, what = v_ops[key], f"V: vision `{key}`"
        tagged(o, f"vision.{key}", what)
        at, i, _, _ = _place(c, o.get("written"), what)
        vision = layout.toks[i][4]
        if len(vision) != 2 or vision[0] != route or not vision[1].startswith("vision "):
            raise c.fail(f"{what} ({at})", "is not written in the route's vision")
        at, toks = _statement(c, o["written"], vision, key, what)
        same(c.number(o, what), _single(c, toks, f"{what} ({at})"), ("vision", key), what, at)
    for t in c.transitions():
        block = (route, f"transition {t}")
        for side, listing in (("C", "supports"), ("K", "contradicts")):
            s = step(f"{t}.sat({side})", "sat = S/(1+S), S = Σ x_(i)·decay^i over x sorted descending")
            for row in s["operands"]["items"]:
                e, what = row["evidence"], f"{t}.sat({side}): evidence `{row['evidence']}`"
                where = row.get("written") if isinstance(row.get("written"), Mapping) else {}
                at, toks = _statement(c, where.get("tier"), (route, f"evidence {e}"), "tier", f"{what} tier")
                if Fraction(row["tier"]) != _single(c, toks, f"{what} tier ({at})"):
                    raise c.fail(f"{what} tier ({at})", f"is {row['tier']}, but the file writes "
                                                        f"`{where['tier']['text']}`")
                tagged(row["weight"], f"evidence {e} weight", f"{what} weight")
                at, toks = _statement(c, where.get("weight"), (route, f"evidence {e}"), "weight", f"{what} weight")
                same(c.number(row["weight"], what), _single(c, toks, f"{what} weight ({at})"),
                     ("route", "evidence", e, "weight"), f"{what} weight", at)
                if t not in layout.listed((route, f"evidence {e}"), listing):
                    raise c.fail(what, f"`{e}` does not list `{t}` in its `{listing}` in {c.route['file']}")
        s = step(f"{t}.budget", "budget = Σ count × unit cost", BUDGET_AT_RATE_RULE)
        items = s["operands"]["items"]
        names = layout.names((*block, "cost"))
        if [row["name"] for row in items] != names:
            raise c.fail(f"{t}.budget", f"its cost items are {', '.join(r['name'] for r in items) or 'none'}; "
                                        f"`{t}` in {c.route['file']} writes {', '.join(names) or 'none'}")
        for row in items:
            what = f"{t}.budget: cost item `{row['name']}`"
            tagged(row["count"], f"cost {row['name']}", f"{what} count")
            tagged(row["unit_cost"], f"cost {row['name']}", f"{what} unit cost")
            at, toks = _statement(c, row.get("written"), (*block, "cost"), row["name"], what)
            times = [j for j, p in enumerate(toks) if p[1] == "*"]
            count = _single(c, toks[: times[0]], f"{what} ({at})") if times else Fraction(1)
            unit = _single(c, toks[times[0] + 1 :] if times else toks, f"{what} ({at})")
            same(c.number(row["count"], what), count, None, f"{what} count", at)
            same(c.number(row["unit_cost"], what), unit, ("route", "transitions", t, "cost", row["name"]),
                 f"{what} unit cost", at)
        s = step(f"{t}.U", _U_RANGE, _U_DEFAULT)
        where, what = s["operands"].get("written"), f"{t}.U: estimates"
        written_at = layout.statements(block, "estimates")
        if (where is None) != (not written_at):
            raise c.fail(what, f"`{t}` in {c.route['file']} writes {'no' if not written_at else 'an'} `estimates`, "
                               "the certificate says otherwise")
        estimates: list[Fraction] = []
        at = c.route["file"]
        if where is not None:
            at, toks = _statement(c, where, block, "estimates", what)
            estimates = _quantities(c, toks, f"{what} ({at})")
        if s["rule"] == _U_DEFAULT and len(estimates) >= 2:
            raise c.fail(what, f"`{t}` writes {len(estimates)} estimates, yet U is the policy's default")
        if s["rule"] == _U_RANGE:
            for x in s["operands"]["estimates"]:
                tagged(x, f"{t} estimates", what)
            recorded = [c.number(x, what) for x in s["operands"]["estimates"]]
            if recorded != estimates:
                raise c.fail(f"{what} ({at})", f"are {', '.join(show(x) for x in recorded)}, but the file writes "
                                               f"{', '.join(show(x) for x in estimates)}")
    rows = step("T", "T = Σ w·clip(s, 0, 100) / Σ w")["operands"]["rows"]
    weighed = lookup(c.policy, ["criteria"]) or {}
    scored = [n for n in layout.names((route, "criteria")) if n in weighed and n != "total"]
    if [r["criterion"] for r in rows] != scored:
        raise c.fail("T", f"its criteria are {', '.join(r['criterion'] for r in rows) or 'none'}; the route scores "
                          f"{', '.join(scored) or 'none'} that the policy weighs")
    for row in rows:
        what = f"T: criterion `{row['criterion']}`"
        tagged(row["score"], f"criteria {row['criterion']}", what)
        if not isinstance(row["weight"], Mapping) or row["weight"].get("policy") != ["criteria", row["criterion"]]:
            raise c.fail(what, f"its weight is not read from the policy's criteria.{row['criterion']}")
        at, toks = _statement(c, row.get("written"), (route, "criteria"), row["criterion"], what)
        same(c.number(row["score"], what), _single(c, toks, f"{what} ({at})"), None, what, at)


def _ends(c: RouteCheck, t: str) -> tuple[str, str]:
    """The source and target states `transition t: A -> B` names in the route file."""
    toks, route = _layout(c).toks, f"route {c.name}"
    for i, p in enumerate(toks):
        if p[1] != "transition" or p[4] != (route,):
            continue
        w = [q[1] for q in toks[i : i + 7]]
        if len(w) == 7 and w[:3] == ["transition", t, ":"] and w[4:6] == ["-", ">"]:
            return w[3], w[6]
    raise c.fail(f"transition {t}", f"{c.route['file']} writes no `transition {t}: A -> B`")


def check_written_states(c: RouteCheck) -> None:
    """Each coverage row's `source` and `target` against the `field value` statement of
    the transition's source and target state in the route file: a value the state
    writes must be bound (`written`) and be that number (or `true`/`false`); a value
    not bound must not be written in that state's block (it is carried forward, or on
    a graph merged at a join, from other states)."""
    layout, route = _layout(c), f"route {c.name}"
    for row in c.route["coverage"]:
        t, field = row["transition"], row["field"]
        sides = row.get("written")
        if not isinstance(sides, Mapping):
            raise c.fail(f"coverage {t}/{field}", "records no `written` for its source and target")
        for side, state in zip(("source", "target"), _ends(c, t), strict=True):
            what, block = f"coverage {t}/{field}: {side} (state `{state}`)", (route, f"state {state}")
            where = sides.get(side)
            if where is None:
                if layout.statements(block, field):
                    raise c.fail(what, f"is not bound, but `state {state}` in {c.route['file']} writes `{field}`")
                continue
            at, toks = _statement(c, where, block, field, what)
            recorded = row[side]
            if len(toks) == 1 and toks[0][1] in ("true", "false"):
                literal: Any = toks[0][1] == "true"
                ok = isinstance(recorded, bool) and recorded == literal
            else:
                literal = rnd(_single(c, toks, f"{what} ({at})"))
                ok = not isinstance(recorded, bool) and isinstance(recorded, (int, float)) and \
                    Fraction(recorded) == literal
                literal = float(literal)
            if not ok:
                raise c.fail(f"{what} ({at})", f"is {recorded!r}, but the file writes {literal!r}")


# ---------------------------------------------------------------------- the route's structure
# The checker reads the route's states and transitions from the hashed file (by
# counting braces, as above), orders the transitions as the compiler does (of those
# whose source every earlier one has reached, the one written first), finds the
# series-parallel tree of a route that forks and joins by its own method (the states
# every path passes through split a series; the pieces left between two states when
# they are removed are the branches of a parallel block), and carries the field values
# forward along it: a state's values are those arriving with what it writes; a join
# takes, for a field it does not write, the value a branch changed it to (the fork's
# value when none did). The coverage rows are then every transition × every field of
# the route, with the source state's values and the values the transition arrives with.
Shape = tuple[Any, ...]  # ("edge", name) | ("series", [shape…]) | ("parallel", [shape…])


class Structure:
    """A route's transitions (in the compiler's order), their shape and state values."""

    def __init__(self, c: RouteCheck, fields: Sequence[str]) -> None:
        layout, route = _layout(c), f"route {c.name}"
        toks = layout.toks
        written = [toks[i + 1][1] for i, p in enumerate(toks)
                   if p[4] == (route,) and p[1] == "transition" and i + 1 < len(toks) and toks[i + 1][0] == "name"]
        self.ends = {t: _ends(c, t) for t in written}
        self.order = self._topological(written)
        if len(self.order) != len(written):
            raise c.fail("transitions", f"the transitions of {c.route['file']} form a cycle")
        entered = {b for _, b in self.ends.values()}
        starts = list(dict.fromkeys(a for a, _ in (self.ends[t] for t in written) if a not in entered))
        left = {a for a, _ in self.ends.values()}
        finals = list(dict.fromkeys(b for _, b in (self.ends[t] for t in self.order) if b not in left))
        if len(starts) != 1 or len(finals) != 1:
            raise c.fail("transitions", f"{c.route['file']} has {len(starts)} start and {len(finals)} end states "
                                        "(a route has one of each)")
        self.start, self.end = starts[0], finals[0]
        shape = self._decompose(self.start, self.end, list(self.order))
        if shape is None:
            raise c.fail("transitions", f"the forks and joins of {c.route['file']} do not nest")
        self.shape = shape
        self.fields = list(fields)
        self.listed = {name: state_values(c, name, fields) for name in
                       dict.fromkeys(x for t in self.order for x in self.ends[t])}
        self.values: dict[str, dict[str, Any]] = {}
        self._arrive(self.end, self._flow(shape, self._arrive(self.start, {})))

    def _topological(self, written: Sequence[str]) -> list[str]:
        """Kahn's order, the transition written first among the ready ones first."""
        index = {t: i for i, t in enumerate(written)}
        into: dict[str, int] = {}
        for t in written:
            a, b = self.ends[t]
            into.setdefault(a, 0)
            into[b] = into.get(b, 0) + 1
        ready = sorted(index[t] for t in written if into[self.ends[t][0]] == 0)
        out: list[str] = []
        while ready:
            t = written[ready.pop(0)]
            out.append(t)
            b = self.ends[t][1]
            into[b] -= 1
            if into[b] == 0:
                ready = sorted(ready + [index[x] for x in written if self.ends[x][0] == b])
        return out

    def _decompose(self, s: str, t: str, edges: list[str]) -> Shape | None:
        """The series-parallel tree of ``edges`` (in the compiler's order) from s to t:
        a series at the states every path passes through, else the branches left
        between s and t (each of them a piece connected without s and t)."""
        if len(edges) == 1:
            return ("edge", edges[0]) if self.ends[edges[0]] == (s, t) else None
        cuts = [v for v in self._states_in_order(s, edges) if v not in (s, t) and self._cuts(s, t, v, edges)]
        if cuts:
            items: list[Shape] = []
            at = s
            for stop in [*cuts, t]:
                part = self._between(at, stop, edges)
                shape = self._decompose(at, stop, part)
                if shape is None:
                    return None
                items.extend(shape[1] if shape[0] == "series" else [shape])
                at = stop
            return ("series", items)
        branches: list[list[str]] = []
        for e in edges:
            a, b = self.ends[e]
            touching = [br for br in branches if any({a, b} - {s, t} & set(self.ends[x]) - {s, t} for x in br)]
            merged = [e] + [x for br in touching for x in br]
            branches = [br for br in branches if br not in touching] + [merged]
        if len(branches) < 2:
            return None
        shapes: list[Shape] = []
        for br in sorted(branches, key=lambda br: min(edges.index(x) for x in br)):
            shape = self._decompose(s, t, [x for x in edges if x in br])
            if shape is None:
                return None
            shapes.extend(shape[1] if shape[0] == "parallel" else [shape])
        return ("parallel", sorted(shapes, key=lambda sh: min(edges.index(x) for x in _edges_of(sh))))

    def _states_in_order(self, s: str, edges: Sequence[str]) -> list[str]:
        return list(dict.fromkeys([s, *(self.ends[e][1] for e in edges)]))

    def _cuts(self, s: str, t: str, v: str, edges: Sequence[str]) -> bool:
        """Every path from s to t passes through v: t is not reachable from s without v."""
        seen, todo = {s}, [s]
        while todo:
            x = todo.pop()
            for e in edges:
                a, b = self.ends[e]
                if a == x and b != v and b not in seen:
                    seen.add(b)
                    todo.append(b)
        return t not in seen

    def _between(self, a: str, b: str, edges: Sequence[str]) -> list[str]:
        """The edges on some path from a to b."""
        def reach(start: str, forward: bool) -> set[str]:
            seen, todo = {start}, [start]
            while todo:
                x = todo.pop()
                for e in edges:
                    u, w = self.ends[e] if forward else self.ends[e][::-1]
                    if u == x and w not in seen:
                        seen.add(w)
                        todo.append(w)
            return seen
        after, before = reach(a, True), reach(b, False)
        return [e for e in edges if self.ends[e][0] in after and self.ends[e][1] in before
                and self.ends[e][0] in before and self.ends[e][1] in after]

    def exit_of(self, shape: Shape) -> str:
        while shape[0] != "edge":
            shape = shape[1][-1] if shape[0] == "series" else shape[1][0]
        return self.ends[shape[1]][1]

    def _arrive(self, state: str, arriving: Mapping[str, Any]) -> dict[str, Any]:
        self.values[state] = {**arriving, **self.listed[state]}
        return self.values[state]

    def _flow(self, shape: Shape, at: dict[str, Any]) -> dict[str, Any]:
        if shape[0] == "edge":
            return at
        if shape[0] == "series":
            current = arriving = at
            for i, item in enumerate(shape[1]):
                arriving = self._flow(item, current)
                if i < len(shape[1]) - 1:
                    current = self._arrive(self.exit_of(item), arriving)
            return arriving
        ends = [self._flow(b, at) for b in shape[1]]
        merged = dict(at)
        for f in self.fields:
            changed = [end[f] for end in ends if f in end and (f not in at or not same_value(end[f], at[f]))]
            if changed:
                merged[f] = changed[0]
        return merged

    def rows(self) -> list[tuple[str, str, Any, Any]]:
        """(transition, field, source, target) of every coverage row, in order."""
        out: list[tuple[str, str, Any, Any]] = []
        for t in self.order:
            a, b = self.ends[t]
            source = self.values[a]
            target = {**source, **self.listed[b]}
            out.extend((t, f, source.get(f), target.get(f)) for f in self.fields)
        return out


def registry_findings(c: RouteCheck) -> list[list[Any]]:
    """How the route departs from its gold registry, as [kind, state, field]: `no-entry`
    (no table for the route), `skip` (a registry state the route does not pass), `order`
    (passed before a registry state it must follow), `restate` (a listed field the state,
    after carry-forward, lacks or has with another value). The route's states come in the
    compiler's order: the start, then each state when its last incoming transition does."""
    entry = c.registry.get(c.name)
    if not isinstance(entry, Mapping):
        return [["no-entry", None, None]]
    structure = Structure(c, route_fields(c, library_fields(c)))
    last_in = {structure.ends[t][1]: t for t in structure.order}
    states = [structure.start] + [structure.ends[t][1] for t in structure.order if last_in[structure.ends[t][1]] == t]
    position = {name: i for i, name in enumerate(states)}
    out: list[list[Any]] = []
    last = -1
    for gold in entry.get("states") or ():
        name = gold.get("name")
        if name not in position:
            out.append(["skip", name, None])
            continue
        if position[name] < last:
            out.append(["order", name, None])
        last = max(last, position[name])
        values = structure.values[name]
        for field, value in (gold.get("fields") or {}).items():
            have = values.get(field)
            if have is None or Fraction(have) != Fraction(value):
                out.append(["restate", name, field])
    return out


def transition_text(c: RouteCheck, t: str, key: str) -> str | None:
    """The text a transition's `actor`, `mechanism` or `asset` statement quotes, or None."""
    layout = _layout(c)
    for i in layout.statements((f"route {c.name}", f"transition {t}"), key):
        if i + 1 < len(layout.toks) and layout.toks[i + 1][0] == "string":
            return unquote(layout.toks[i + 1][1])
    return None


def route_evidence(c: RouteCheck) -> list[dict[str, Any]]:
    """The route's evidence items in the order written, each as its block writes it:
    `source`, `captured`, `tier`, `weight`, `supports`, `contradicts`, `excerpt` (absent:
    empty, as the language reads it) and `unverified` (bare: true)."""
    if c.evidence is not None:
        return c.evidence
    toks, route = _layout(c).toks, f"route {c.name}"
    out = []
    for i, p in enumerate(toks):
        if p[4] != (route,) or p[1] != "evidence" or i + 1 >= len(toks) or toks[i + 1][0] != "name":
            continue
        name = toks[i + 1][1]
        block = [q for q in toks if q[4] == (route, f"evidence {name}")]
        item: dict[str, Any] = {"name": name, "source": None, "captured": None, "tier": None, "weight": None,
                                "supports": [], "contradicts": [], "excerpt": "", "unverified": False}
        j = 0
        while j < len(block):
            kw, nxt = block[j][1], block[j + 1] if j + 1 < len(block) else ("", "", 0, 0, ())
            j += 1
            if kw in ("source", "excerpt") and nxt[0] == "string":
                item[kw], j = unquote(nxt[1]), j + 1
            elif kw == "captured" and nxt[0] == "date":
                item[kw], j = dt.date.fromisoformat(nxt[1]), j + 1
            elif kw in ("tier", "weight"):
                end = j + (nxt[1] == "-") + 1
                end += end < len(block) and block[end][0] == "unit"
                item[kw], j = _single(c, block[j:end], f"evidence {name}: `{kw}`"), end
            elif kw in ("supports", "contradicts"):
                while j < len(block) and block[j][0] == "name":
                    item[kw].append(block[j][1])
                    j += 1
                    if j < len(block) and block[j][1] == ",":
                        j += 1
                    else:
                        break
            elif kw == "unverified":
                item[kw] = nxt[1] != "false"
                j += nxt[1] in ("true", "false")
        out.append(item)
    c.evidence = out
    return out


def _same_text(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def check_evidence(c: RouteCheck) -> None:
    """Which evidence counts, decided again from the route file and the policy: an
    item is admissible when it is captured on or before `as_of`, of a tier at least
    the policy's `evidence.min_tier` (1 without one) and not `unverified`; it is
    admitted unless it bears on a transition an earlier admitted item bears on and
    repeats that item's source or excerpt (without case and extra spaces). The route's
    `admissible_evidence` must be the admissible items, and each transition's `sat(C)`
    and `sat(K)` must weigh exactly its admitted supporting and contradicting items,
    in the order written."""
    items = route_evidence(c)
    as_of = route_statement(c.route_file.text, c.name, "as_of") or []
    day = dt.date.fromisoformat(as_of[0][1]) if as_of and as_of[0][0] == "date" else None
    min_tier = lookup(c.policy, ["evidence", "min_tier"])
    min_tier = Fraction(1) if min_tier is None else Fraction(min_tier)
    admissible = [e for e in items if e["captured"] is not None and day is not None and e["captured"] <= day
                  and e["tier"] is not None and e["tier"] >= min_tier and not e["unverified"]]
    names = [e["name"] for e in admissible]
    if c.route["admissible_evidence"] != names:
        raise c.fail("admissible_evidence", f"is {', '.join(c.route['admissible_evidence']) or 'none'}, but the "
                                            f"admissible items of {c.route['file']} are {', '.join(names) or 'none'}")
    kept: list[tuple[set[str], str, str]] = []
    admitted = []
    for e in admissible:
        bears, source, excerpt = set(e["supports"]) | set(e["contradicts"]), _same_text(e["source"]), \
            _same_text(e["excerpt"])
        if not any(bears & b and ((e["source"] and source == s_) or (excerpt and excerpt == x_)) for b, s_, x_ in kept):
            kept.append((bears, source, excerpt))
            admitted.append(e)
    steps = {s["symbol"]: s for s in c.route["steps"]}
    for t in c.transitions():
        for side, key in (("C", "supports"), ("K", "contradicts")):
            want = [e["name"] for e in admitted if t in e[key]]
            rows = steps[f"{t}.sat({side})"]["operands"]["items"]
            got = [i["evidence"] for i in rows]
            if sorted(got) != sorted(want):
                raise c.fail(f"{t}.sat({side})", f"weighs {', '.join(got) or 'nothing'}, but the admitted items that "
                                                 f"{key[:-1]} `{t}` are {', '.join(want) or 'none'}")
            ordered = sorted(rows, key=lambda i: (-Fraction(i["x"]["f"]), i["evidence"]))
            if rows != ordered:
                raise c.fail(f"{t}.sat({side})", "its items are not in the order weighed: the largest effective "
                                                 "weight first, then by name")


def expected_steps(c: RouteCheck, structure: Structure) -> tuple[set[str], dict[str, Shape]]:
    """The symbols of the steps the route's certificate must compute (a delta floor's
    prices aside, which the coverage rows decide), and the label of each block of a
    route that forks and joins (`[i.j]`, as docs/graphs.md names them)."""
    paper, stop = c.fold_kind == "paper", c.fold_kind == "stop"
    calibrated = lookup(c.policy, ["calibration"]) is not None
    out = {"V", "score", "flat_product", "binding", "docked_score", "T", "bucket", "eligible"}
    per = ["p_prior", "sat(C)", "sat(K)", "W", "p", "budget", "floor_class", "floor_delta", "c", "U", "reach", "D"]
    per += [] if paper else ["d"]
    per += ["p_raw"] if calibrated else []
    for t in structure.order:
        out.update(f"{t}.{x}" for x in per)
    blocks: dict[str, Shape] = {}
    shape = structure.shape
    if not _forks(shape):  # a chain
        n = len(structure.order)
        out.update(f"R_{i}" for i in range(n + 1))
        out.update(f"{t}.v" for t in paid_transitions(c))
        if stop:
            out.update(f"{t}.{x}" for t in structure.order for x in ("stops", "walking"))
        return out, blocks

    def label(node: Shape, path: str) -> None:
        name = node[1] if node[0] == "edge" else f"[{path}]"
        blocks[name] = node
        if node[0] != "edge":
            out.update(f"{name}.{x}" for x in (("P", "C") if paper else ("P", "C", "D")))
            for i, part in enumerate(node[1]):
                label(part, f"{path}.{i}".lstrip("."))

    label(shape, "")
    items = shape[1] if shape[0] == "series" else [shape]
    for name, node in blocks.items():
        if node is not shape or shape[0] == "parallel":  # a route that is one parallel block: its one spine item
            out.update((f"{name}.w", f"{name}.x"))
    states = [structure.ends[_edges_of(x)[0]][0] for x in items] + [structure.exit_of(items[-1])]
    out.update(f"R({x})" for x in states)
    paid = paid_transitions(c)
    out.update(f"{t}.v" for t in paid)
    if not paid:  # with payoffs the docked score is one refold (`docked_score`)
        out.update(f"docked R({x})" for x in states)
    if stop:
        for name, node in blocks.items():
            if any(node is x for x in items):
                out.update((f"{name}.stops", f"{name}.walking"))
    return out, blocks


Reads = dict[str, Any]  # operand -> the step it reads, a list of steps, or None (the constant true)
_BY_FOLD = ("paper", "discount", "stop")


def _of_fold(c: RouteCheck, *rules: str) -> str:
    """The rule of the policy's fold among the paper's, the discounted and the option to stop's."""
    return rules[_BY_FOLD.index(c.fold_kind)] if len(rules) == 3 else rules[c.fold_kind != "paper"]


def expected_fold(c: RouteCheck, structure: Structure) -> dict[str, tuple[str, Reads]]:
    """The rule of each step of the fold and the steps it reads, by operand, from the
    route's shape and the policy's fold. A chain: R_i, reach, D, the docked score
    (with the option to stop: where the planner stops and whether it walks each
    stage). A route that forks and joins: each block's P, D and C from its parts, R
    along the spine (and where the planner stops), each block's w and x from its
    parent and its neighbours, each transition's reach from the earlier spine items
    and its D from its own w and x and its spine item's walking."""
    paper, stop = c.fold_kind == "paper", c.fold_kind == "stop"
    out: dict[str, tuple[str, Reads]] = {"flat_product": ("flat product = Π p_i", {})}
    shape, order = structure.shape, structure.order
    if not _forks(shape):
        out[f"R_{len(order)}"] = ("R_n = V", {"V": "V"})
        out["score"] = ("score = R_0", {"R_0": "R_0"})
        out["docked_score"] = (_of_fold(c, "docked = R_0 refolded with R_n = 0",
                                        "docked = R_0 refolded with R_n = 0: R_i = −c_i + p_i · d_i · R_{i+1}",
                                        "docked = R_0 refolded with R_n = 0: R_i = max(0, −c_i + p_i · d_i · R_{i+1})"),
                               {})
        paid = paid_transitions(c)
        if paid:
            out["docked_score"] = (_of_fold(c, *PAYOFF_DOCKED), {"v": [f"{t}.v" if t in paid else None for t in order]})
        for i, t in enumerate(order):
            if t in paid:  # a stage that reaches a paying state: R, D and where the planner stops read its v
                reads = {"c": f"{t}.c", "p": f"{t}.p", **({} if paper else {"d": f"{t}.d"}), "v": f"{t}.v",
                         "R_next": f"R_{i + 1}"}
                out[f"R_{i}"] = (_of_fold(c, *PAYOFF_R), reads)
                out[f"{t}.reach"] = (_of_fold(c, *_CHAIN_REACH), {})
                out[f"{t}.D"] = (PAYOFF_D[stop], {"reach": f"{t}.reach", "v": f"{t}.v", "R_next": f"R_{i + 1}",
                                                  **({"walking": f"{t}.walking"} if stop else {})})
                if stop:
                    out[f"{t}.stops"] = (PAYOFF_STOPS, reads)
                    out[f"{t}.walking"] = (WALKING_RULE, {"before": f"{order[i - 1]}.walking" if i else None,
                                                          "stops": f"{t}.stops"})
                continue
            out[f"R_{i}"] = (_of_fold(c, *_CHAIN_FOLDS), {})
            out[f"{t}.reach"] = (_of_fold(c, *_CHAIN_REACH), {})
            out[f"{t}.D"] = (_of_fold(c, *_CHAIN_D[:1] * 2, _CHAIN_D[1]), {"walking": f"{t}.walking"} if stop else {})
            if stop:
                out[f"{t}.stops"] = (STOPS_RULE, {"c": f"{t}.c", "p": f"{t}.p", "d": f"{t}.d", "R_next": f"R_{i + 1}"})
                out[f"{t}.walking"] = (WALKING_RULE, {"before": f"{order[i - 1]}.walking" if i else None,
                                                      "stops": f"{t}.stops"})
        return out
    _, blocks = expected_steps(c, structure)
    label = {id(node): name for name, node in blocks.items()}
    paying = set(paid_transitions(c))

    def exit_edge(node: Shape) -> str:
        while node[0] != "edge":
            node = node[1][-1] if node[0] == "series" else node[1][0]
        return str(node[1])

    def v_of(node: Shape) -> str | None:
        """The `v` step of the state ``node`` exits to (None: it writes no payoff)."""
        t = exit_edge(node)
        return f"{t}.v" if t in paying else None

    def of(node: Shape, quantity: str) -> str:
        """A part's P, C or D: a transition's p, c, d."""
        return f"{label[id(node)]}.{quantity.lower() if node[0] == 'edge' else quantity}"

    def pcd(node: Shape) -> Reads:
        return {"c": of(node, "C"), "p": of(node, "P"), **({} if paper else {"d": of(node, "D")})}

    def products(parts: Sequence[Shape]) -> Reads:
        return {"p": [of(x, "P") for x in parts], **({} if paper else {"d": [of(x, "D") for x in parts]})}

    def up(node: Shape) -> None:
        if node[0] == "edge":
            return
        for part in node[1]:
            up(part)
        k, kind, parts = label[id(node)], node[0], node[1]
        out[f"{k}.P"] = (f"{kind}: P = Π P_i", {"p": [of(x, "P") for x in parts]})
        if not paper:
            out[f"{k}.D"] = ("series: D = Π D_i" if kind == "series" else
                             "parallel: D = min D_b (the join waits for the slowest branch)",
                             {"d": [of(x, "D") for x in parts]})
        out[f"{k}.C"] = (_of_fold(c, "series: C = Σ_i (Π_{j<i} P_j)·C_i", "series: C = Σ_i (Π_{j<i} P_j · D_j)·C_i"),
                         {"c": [of(x, "C") for x in parts], **products(parts)}) if kind == "series" else \
            ("parallel: C = Σ C_b", {"c": [of(x, "C") for x in parts]})
        inner = [v_of(x) for x in parts[:-1]] if kind == "series" else []
        if any(x is not None for x in inner):
            out[f"{k}.C"] = (_of_fold(c, *GRAPH_PAYOFF_SERIES_C), {**out[f"{k}.C"][1], "v": inner})

    def down(node: Shape) -> None:
        k = label[id(node)]
        parts = node[1] if node[0] != "edge" else []
        for i, part in enumerate(parts):
            kp = label[id(part)]
            if node[0] == "series":
                out[f"{kp}.w"] = (_of_fold(c, "w = w(parent) · Π P of the earlier items (series item)",
                                           "w = w(parent) · Π P · D of the earlier items (series item)"),
                                  {"w": f"{k}.w", **products(parts[:i])})
                out[f"{kp}.x"] = ("x = x(parent) (the last item of a series)", {"x": f"{k}.x"}) \
                    if i == len(parts) - 1 else \
                    (_of_fold(c, "x = −C_next + P_next · x_next (series item)",
                              "x = −C_next + P_next · D_next · x_next (series item)"),
                     {**pcd(parts[i + 1]), "R_next": f"{label[id(parts[i + 1])]}.x"})
                if i < len(parts) - 1 and v_of(part) is not None:
                    out[f"{kp}.x"] = (_of_fold(c, *GRAPH_PAYOFF_SERIES_X), {**out[f"{kp}.x"][1], "v": v_of(part)})
            else:
                out[f"{kp}.w"] = ("w = w(parent) (parallel branch)", {"w": f"{k}.w"})
                out[f"{kp}.x"] = (_of_fold(c, "x = (Π P of the other branches) · x(parent) (parallel branch)",
                                           "x = (Π P of the other branches) · (D / D_b) · x(parent) (parallel branch)"),
                                  {"p": [of(y, "P") for y in parts if y is not part], "x": f"{k}.x",
                                   **({} if paper else {"D": of(node, "D"), "D_b": of(part, "D")})})
            down(part)

    up(shape)
    items = shape[1] if shape[0] == "series" else [shape]
    states = [structure.ends[_edges_of(x)[0]][0] for x in items] + [structure.exit_of(items[-1])]
    spine = _of_fold(c, "R = −C + P · R(next) (spine)", "R = −C + P · D · R(next) (spine)",
                     "R = max(0, −C + P · D · R(next)) (spine)")
    out[f"R({states[-1]})"] = ("R(end) = V", {"V": "V"})
    out[f"docked R({states[-1]})"] = ("docked R(end) = 0", {})
    for prefix in ("", "docked "):
        for i, item in enumerate(items):
            out[f"{prefix}R({states[i]})"] = (spine, {**pcd(item), "R_next": f"{prefix}R({states[i + 1]})"})
    out["score"] = ("score = R(start)", {"R": f"R({states[0]})"})
    out["docked_score"] = ("docked = R(start) refolded with V = 0", {"R": f"docked R({states[0]})"})
    if paying:
        for x in states:
            out.pop(f"docked R({x})")
        out["docked_score"] = (_of_fold(c, *GRAPH_PAYOFF_DOCKED), {
            "p": [f"{t}.p" for t in order], "c": [f"{t}.c" for t in order],
            **({} if paper else {"d": [f"{t}.d" for t in order]}),
            "v": [f"{t}.v" if t in paying else None for t in order]})
    for i, item in enumerate(items):
        k = label[id(item)]
        v = v_of(item)
        if v is not None:  # the spine item's success also earns the payoff at its exit
            out[f"R({states[i]})"] = (_of_fold(c, *GRAPH_PAYOFF_SPINE), {**out[f"R({states[i]})"][1], "v": v})
        out[f"{k}.w"], out[f"{k}.x"] = ("w = 1 (a spine item)", {}), \
            ("x = R(exit) (a spine item)", {"R": f"R({states[i + 1]})"}) if v is None else \
            (GRAPH_PAYOFF_SPINE_X, {"v": v, "R": f"R({states[i + 1]})"})
        down(item)
        if stop:
            out[f"{k}.stops"] = (STOPS_RULE if v is None else GRAPH_PAYOFF_STOPS, out[f"R({states[i]})"][1])
            out[f"{k}.walking"] = (WALKING_RULE, {"before": f"{label[id(items[i - 1])]}.walking" if i else None,
                                                  "stops": f"{k}.stops"})
    for i, item in enumerate(items):
        for t in _edges_of(item):
            out[f"{t}.reach"] = (_of_fold(c, "reach = (Π P of the earlier spine items) · w",
                                          "reach = (Π P · D of the earlier spine items) · w"),
                                 {**products(items[:i]), "w": f"{t}.w"})
            out[f"{t}.D"] = (_CHAIN_D[1] if stop else _CHAIN_D[0],
                             {"reach": f"{t}.reach", "R_next": f"{t}.x",
                              **({"walking": f"{label[id(item)]}.walking"} if stop else {})})
    return out


def _steps_read(o: Any) -> Any:
    if isinstance(o, list):
        return [x.get("step") if isinstance(x, Mapping) else None for x in o]
    return o.get("step") if isinstance(o, Mapping) else None


def check_fold_steps(c: RouteCheck, structure: Structure) -> None:
    """Each step of the fold is computed by its rule (another rule of the same
    arithmetic does not pass), and each operand names the step the rule reads there
    (its value is that step's, as `run` checked): a same-valued or same-kind other
    step does not pass, nor a constant where a step is read, nor anything but true
    where the first stage's `before` is."""
    want = expected_fold(c, structure)
    for s in c.route["steps"]:
        rule, reads = want.get(s["symbol"], (s["rule"], {}))
        if s["rule"] != rule:
            raise c.fail(f"{s['symbol']} ({s['rule']})", f"is not the rule of `{s['symbol']}`: the route's fold "
                                                          f"computes it by `{rule}`")
        for name, expected in reads.items():
            o = s["operands"].get(name)
            got = _steps_read(o)
            if got != expected or (expected is None and not (isinstance(o, Mapping) and o.get("v") is True)):
                shown = "the constant true" if expected is None else f"`{expected}`" if isinstance(expected, str) \
                    else ", ".join(expected) or "no step"
                raise c.fail(f"{s['symbol']} ({s['rule']})", f"operand `{name}` is {canonical(o)}, but the rule "
                                                              f"reads {shown}")


def check_step_symbols(c: RouteCheck, structure: Structure) -> None:
    """Every step the route needs is computed, once, and no other: a step left out,
    repeated or added is a difference."""
    symbols = [s["symbol"] for s in c.route["steps"]]
    for i, x in enumerate(symbols):
        if x in symbols[:i]:
            raise c.fail(f"steps[{i}]", f"computes `{x}` again")
    want, _ = expected_steps(c, structure)
    got = {x for x in symbols if ".price[" not in x}
    for x in sorted(want - got):
        raise c.fail("steps", f"compute no `{x}`, which the route's fold needs")
    for x in sorted(got - want):
        raise c.fail("steps", f"compute `{x}`, which the route's fold does not have")


def _forks(shape: Shape) -> bool:
    return shape[0] == "parallel" or (shape[0] == "series" and any(_forks(x) for x in shape[1]))


def _edges_of(shape: Shape) -> list[str]:
    return [shape[1]] if shape[0] == "edge" else [e for part in shape[1] for e in _edges_of(part)]


def same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def state_values(c: RouteCheck, state: str, fields: Sequence[str]) -> dict[str, Any]:
    """The values `state NAME { field value … }` writes for the route's fields: a number
    (read as the route language reads it, rounded to a float) or `true`/`false`."""
    block = (f"route {c.name}", f"state {state}")
    toks = [p for p in _layout(c).toks if p[4] == block]
    out: dict[str, Any] = {}
    i = 0
    while i < len(toks):  # NAME, then `-`? NUMBER UNIT?, or true, false, a text, a date
        name, j = toks[i][1], i + 1 + (i + 1 < len(toks) and toks[i + 1][1] == "-")
        j += 1 + (j + 1 < len(toks) and toks[j + 1][0] == "unit")
        value = toks[i + 1 : j]
        if name in fields and name not in out:  # a field written twice is the compiler's error
            if len(value) == 1 and value[0][1] in ("true", "false"):
                out[name] = value[0][1] == "true"
            else:
                out[name] = rnd(_single(c, value, f"state {state}: `{name}`"))
        i = j
    return out


def route_fields(c: RouteCheck, declared: Mapping[str, Any]) -> list[str]:
    """The library fields the route's states mention, in order of first mention."""
    layout, route = _layout(c), f"route {c.name}"
    out: list[str] = []
    for p in layout.toks:
        if len(p[4]) == 2 and p[4][0] == route and p[4][1].startswith("state ") and p[0] == "name" \
                and p[1] in declared and p[1] not in out:
            out.append(p[1])
    return out


def check_coverage_rows(c: RouteCheck, declared: Mapping[str, Any]) -> None:
    """The coverage rows must be exactly the recomputed ones: every transition (in the
    compiler's order) × every field of the route, each with its source and target
    value; none left out, none added, none moved. And the transitions of the steps
    must be in that order."""
    structure = Structure(c, route_fields(c, declared))
    check_step_symbols(c, structure)
    check_fold_steps(c, structure)
    if c.transitions() != structure.order:
        raise c.fail("transitions", f"are {', '.join(c.transitions())} in the certificate, but in the order the "
                                    f"compiler folds them {', '.join(structure.order)}")
    want = structure.rows()
    got = [(r["transition"], r["field"], r["source"], r["target"]) for r in c.route["coverage"]]
    keys, recorded = [w[:2] for w in want], [g[:2] for g in got]
    missing = [k for k in keys if k not in recorded]
    if missing:
        raise c.fail("coverage", f"leaves out the row of {', '.join(f'{t}/{f}' for t, f in missing)} (missing: "
                                 "the rows are every transition × every field of the route)")
    extra = [k for k in recorded if k not in keys]
    if extra or len(recorded) != len(keys):
        named = extra or [k for k in recorded if recorded.count(k) > 1]
        raise c.fail("coverage", f"has rows the route does not: {', '.join(f'{t}/{f}' for t, f in named)}")
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        wv = (w[0], w[1], *(as_value(x) for x in w[2:]))
        gv = (g[0], g[1], *(as_value(x) for x in g[2:]))
        if wv[:2] != gv[:2]:
            raise c.fail(f"coverage[{i}]", f"is {g[0]}/{g[1]}, but the route's row {i} is {w[0]}/{w[1]} (every "
                                           "transition × every field of the route, in order)")
        if not all(same_value(a, b) for a, b in zip(wv[2:], gv[2:], strict=True)):
            raise c.fail(f"coverage {g[0]}/{g[1]}", f"takes {g[1]} from {g[2]!r} to {g[3]!r}, but the route's states "
                                                    f"take it from {_shown(w[2])!r} to {_shown(w[3])!r}")


def _shown(x: Any) -> Any:
    return float(x) if isinstance(x, Fraction) else x


def library_fields(c: RouteCheck) -> dict[str, tuple[str, Any, str]]:
    """The fields the route's libraries declare (the first declaration of a name wins):
    name -> (the library, its `material` rule (amount, relative) or None, its type)."""
    declared: dict[str, tuple[str, Any, str]] = {}
    for lib in c.route["libraries"]:
        toks = layout_of(c.source("library", lib).text).toks
        for i, p in enumerate(toks):
            if p[1] != "field" or p[4] != () or i + 2 >= len(toks) or toks[i + 1][0] != "name":
                continue
            name, line = toks[i + 1][1], p[2]
            rule: Any = None
            j = i + 3
            if j < len(toks) and toks[j][1] == "material" and toks[j][2] == line:
                minus = j + 1 < len(toks) and toks[j + 1][1] == "-"
                k = j + 1 + minus
                if k >= len(toks) or toks[k][0] != "number":
                    raise c.fail(f"library {lib}", f"field `{name}`: its `material` amount is not a number")
                x = rnd(literal_number(toks[k][1]))
                rule = (-x if minus else x, toks[k][1].endswith("%"))
            declared.setdefault(name, (lib, rule, toks[i + 2][1]))
    return declared


def check_material(c: RouteCheck) -> None:
    """Each coverage row's `material_rule` against the `field NAME TYPE material AMOUNT`
    statement of the hashed library that declares the field: the amount, read by the
    checker's own reader of numbers, and whether it is relative (written with `%`);
    a bool's rule exactly for a field of type `bool`; none exactly when the library
    writes no `material` clause."""
    declared = library_fields(c)
    for row in c.route["coverage"]:
        what = f"coverage {row['transition']}/{row['field']}: material"
        if row["field"] not in declared:
            raise c.fail(what, f"no library of the route ({', '.join(c.route['libraries']) or 'none'}) declares "
                               f"`{row['field']}`")
        lib, want, kind = declared[row["field"]]
        got = row["material_rule"]
        if isinstance(got, Mapping) and "bool" in got:  # any change of a bool is material
            if got["bool"] is not True or kind != "bool" or want is not None:
                raise c.fail(what, f"is a bool's, but library {lib} declares `{row['field']}` {kind}")
            continue
        if got is None or want is None:
            if got is not want:
                raise c.fail(what, f"is {'none' if got is None else 'recorded'}, but library {lib} writes "
                                   f"{'no' if want is None else 'a'} `material` clause for `{row['field']}`")
            continue
        amount, relative = c.number(got["amount"], what), got["relative"]
        if (amount, relative) != want:
            raise c.fail(what, f"is {show(amount)}{' relative' if relative else ''}, but library {lib} writes "
                               f"{show(want[0])}{' relative' if want[1] else ''} for `{row['field']}`")


def check_written_conditions(c: RouteCheck, t: str, operands: Mapping[str, Any], what: str) -> None:
    """The `threshold` and `kill` texts a `require` line reads, against the transition's
    statements in the route file."""
    layout = _layout(c)
    block = (f"route {c.name}", f"transition {t}")
    for key in ("threshold", "kill"):
        o = operands.get(key)
        if not isinstance(o, Mapping):
            continue
        keyword = layout.statements(block, key)
        where = f"{what}: `{key}`"
        if o.get("v") is None:
            if keyword:
                raise c.fail(where, f"is none, but `{t}` in {c.route['file']} writes a {key}")
            continue
        at, i, end, _ = _place(c, o.get("written"), where)
        opened = 0
        while i - opened - 1 >= 0 and layout.toks[i - opened - 1][1] == "(":
            opened += 1
        closed = all(j < len(layout.toks) and layout.toks[j][1] == ")" for j in range(end, end + opened))
        after = layout.toks[end + opened][1] if end + opened < len(layout.toks) else "}"
        ends = _CONDITION_ENDS | {"by"} if key == "kill" else _CONDITION_ENDS  # `kill … by DATE`: its time bound
        if i - opened - 1 not in keyword or not closed or after not in ends:
            raise c.fail(f"{where} ({at})", f"`{o['written']['text']}` is not the whole {key} of `{t}`")
        if o["written"]["text"] != o["v"]:
            raise c.fail(f"{where} ({at})", f"is `{o['v']}`, but the file writes `{o['written']['text']}`")
