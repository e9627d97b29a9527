"""Compile-speed benchmark for PCSC (a script, not a test).

    python3 benchmarks/bench_compile.py [--quick]

Prints, for routes generated here and valid under the shipped policy venture@1.0.0:

(a) parse throughput: a large generated .route file (many competing 12-transition
    routes) through ``pcsc.lang.syntax.parse_source``, in lines per second;
(b) lowering + policy binding + scoring throughput, in routes per second, on the
    trees parsed in (a);
(c) a full in-process compile of one 12-transition route (read text -> parse -> lower
    -> bind policy -> score, a fresh ``pcsc.compiler.session.Session`` per iteration) against
    the raw float fold of the same 12 (p, c) pairs (``pcsc.score.fold.chain_fold``).

Every timing is the best of several repeats after a warm-up, with time.perf_counter.
See benchmarks/README.md for what each number means and one recorded run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import math
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.lang.ir import Library
from pcsc.lang.lower.route import lower_route
from pcsc.lang.syntax import nodes as syn
from pcsc.lang.syntax import parse_source
from pcsc.lang.syntax.parser import get_parser
from pcsc.policy.load import PolicyStore
from pcsc.score.cost import piecewise_floor
from pcsc.score.fold import chain_fold

POLICY = "venture@1.0.0"
CLASSES = ("devtools/first-users", "devtools/first-revenue", "devtools/scale")


# ---------------------------------------------------------------------- route generator
def _states(n: int) -> list[tuple[int, int, int]]:
    """(developers, paying_teams, arr) for states 0..n: developers grow from the first
    transition on, revenue from the fourth."""
    out = [(0, 0, 0)]
    for i in range(1, n + 1):
        developers = int(500 * 1.8 ** (i - 1))
        paying = 0 if i < 4 else 10 * 2 ** (i - 4)
        out.append((developers, paying, paying * 6_000))
    return out


def _ref_class(i: int, n: int) -> str:
    """The first quarter of the transitions find users, the last third scale, revenue between."""
    if i < max(1, n // 4):
        return CLASSES[0]
    if i >= n - max(1, n // 3):
        return CLASSES[2]
    return CLASSES[1]


def generate_route(name: str, n: int = 12) -> str:
    """A route of ``n`` transitions that compiles without a diagnostic under venture@1.0.0
    and whose every material delta is covered (threshold bounds it, evidence supports it,
    the authored budget pays the delta-indexed floor)."""
    policy = PolicyStore().load_ref(POLICY).policy
    states = _states(n)
    fields = ("developers", "paying_teams", "arr")
    lines = [
        f'route {name} "generated: {n} transitions" {{',
        "    as_of   2012-06-01",
        f'    policy  "{POLICY}"',
        "    uses    venture",
        "",
    ]
    for i, (dev, paying, arr) in enumerate(states):
        lines.append(f"    state s{i:02d} {{ developers {dev}  paying_teams {paying}  arr {arr} usd }}")
    lines += [
        "",
        f"    vision s{n:02d} {{",
        "        tam            1000B usd",
        "        capture        10%",
        "        defensibility  0.6",
        "    }",
    ]
    for i in range(n):
        src, dst = states[i], states[i + 1]
        changed = [f for f, a, b in zip(fields, src, dst, strict=True) if a != b]
        bounds = {"developers": f"developers >= {dst[0]}", "paying_teams": f"paying_teams >= {dst[1]}"}
        bounds["arr"] = f"arr >= {dst[2]} usd"
        threshold = " and ".join(bounds[f] for f in changed)
        ref_class = _ref_class(i, n)
        floor = policy.priors[ref_class].floor_usd
        for f, a, b in zip(fields, src, dst, strict=True):
            table = policy.floors.delta.get(f)
            if table is not None and a != b:
                floor += piecewise_floor(table.points, abs(b - a))
        engineers = 2 + i
        unit = int(floor / engineers / 1000 + 1) * 1000  # authored budget >= every floor
        discharges = "adoption" + (", monetization" if "paying_teams" in changed else "")
        kill = f"developers < {max(1, dst[0] // 5)}"
        lines += [
            "",
            f"    transition t{i + 1:02d}: s{i:02d} -> s{i + 1:02d} {{",
            f'        actor      "team of stage {i + 1}"',
            f'        mechanism  "mechanism of stage {i + 1}"',
            f'        asset      "asset of stage {i + 1}"',
            f'        class      "{ref_class}"',
            f"        threshold  {threshold}",
            f"        kill       {kill}",
            "        horizon    6 months",
            "        cost {",
            f"            engineers  {engineers} * {unit} usd",
            "            hosting    12 * 1.5k usd",
            "        }",
            f"        learning_cost  {5 + i}k usd",
            f"        estimates  0.{30 + i} 0.{45 + i}",
            f"        discharges {discharges}",
            "    }",
        ]
    for i in range(n):
        lines += [
            "",
            f"    evidence e{i + 1:02d} {{",
            f'        source    "generated source {i + 1}"',
            "        captured  2012-05-20",
            "        tier      2",
            f"        weight    0.{5 + i % 4}",
            f"        supports  t{i + 1:02d}",
            f'        excerpt   "The team has the asset of stage {i + 1} working."',
            "    }",
        ]
    lines += [
        "",
        "    evidence headwind {",
        '        source    "generated contradicting source"',
        "        captured  2012-05-02",
        "        tier      3",
        "        weight    0.6",
        f"        contradicts t{n // 2:02d}",
        '        excerpt   "An incumbent cut prices by half."',
        "    }",
        "",
        "    criteria {",
        "        team     70",
        "        market   60",
        "        wedge    55",
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)


FOLD_POLICY = "venture-plan@1.0.0"  # venture@1.0.0 under a [fold] policy: written by `write_fold_policy`


def write_fold_policy(folder: Path) -> Path:
    """``folder/policies/venture-plan/1.0.0.toml``: venture@1.0.0 with a discount (8% a
    year along each horizon) and the option to stop; returns the policies folder."""
    where = folder / "policies" / "venture-plan"
    where.mkdir(parents=True, exist_ok=True)
    (where / "1.0.0.toml").write_text(
        '[policy]\nid = "venture-plan"\nversion = "1.0.0"\nextends = "venture@1.0.0"\n\n'
        "[fold]\ndiscount = 0.08\nabandonment = true\n",
        encoding="utf-8",
    )
    return folder / "policies"


def under_fold_policy(text: str) -> str:
    """The same route text under `FOLD_POLICY`."""
    return text.replace(f'policy  "{POLICY}"', f'policy  "{FOLD_POLICY}"')


def generate_graph_route(name: str, forks: int = 2) -> str:
    """A series-parallel route of ``5·forks + 2`` transitions (12 for two forks) that compiles
    without a diagnostic under venture@1.0.0, every material delta covered: a spine step
    into each fork, two branches of two transitions each (one grows developers, the other
    paying teams and revenue; the second step of each runs into the join, which lists
    nothing, so it claims nothing), a first step before all that and a last one from the
    last join to the vision."""
    policy = PolicyStore().load_ref(POLICY).policy
    fields = ("developers", "paying_teams", "arr")
    states: list[tuple[str, dict[str, int]]] = [("s00", {"developers": 0, "paying_teams": 0, "arr": 0})]
    edges: list[tuple[str, str, dict[str, int], dict[str, int], str]] = []  # src, dst, src values, arrival, class
    current = dict(states[0][1])
    dev, paying = 500, 10

    def step(src: str, dst: str, before: dict[str, int], after: dict[str, int], ref_class: str) -> None:
        edges.append((src, dst, before, after, ref_class))

    first = {"developers": 100, "paying_teams": 0, "arr": 0}
    states.append(("s01", first))
    step("s00", "s01", current, first, CLASSES[0])
    current, spine = first, "s01"
    for f in range(forks):
        fork = f"f{f}"
        before, current = current, {"developers": dev, "paying_teams": paying, "arr": paying * 6_000}
        states.append((fork, dict(current)))
        step(spine, fork, before, current, CLASSES[0] if f == 0 else CLASSES[1])
        dev, paying = int(dev * 3.2), paying * 4
        a_vals = {"developers": dev}
        b_vals = {"paying_teams": paying, "arr": paying * 6_000}
        states.append((f"a{f}", a_vals))
        states.append((f"b{f}", b_vals))
        join = f"j{f}"
        states.append((join, {}))
        step(fork, f"a{f}", current, {**current, **a_vals}, CLASSES[0])
        step(f"a{f}", join, {**current, **a_vals}, {**current, **a_vals}, CLASSES[1])
        step(fork, f"b{f}", current, {**current, **b_vals}, CLASSES[1])
        step(f"b{f}", join, {**current, **b_vals}, {**current, **b_vals}, CLASSES[1])
        current = {**current, **a_vals, **b_vals}
        spine = join
    dev, paying = int(dev * 3.2), paying * 4
    end = {"developers": dev, "paying_teams": paying, "arr": paying * 6_000}
    states.append(("top", end))
    step(spine, "top", current, end, CLASSES[2])
    lines = [
        f'route {name} "generated: a graph of {len(edges)} transitions" {{',
        "    as_of   2012-06-01",
        f'    policy  "{POLICY}"',
        "    uses    venture",
        "",
    ]
    for sname, vals in states:
        shown = "  ".join(f"{k} {v}" + (" usd" if k == "arr" else "") for k, v in vals.items())
        lines.append(f"    state {sname} {{ {shown} }}" if shown else f"    state {sname} {{}}")
    lines += ["", "    vision top {", "        tam            1000B usd", "        capture        10%",
              "        defensibility  0.6", "    }"]
    for i, (src, dst, before, after, ref_class) in enumerate(edges):
        changed = [f for f in fields if before[f] != after[f]]
        floor = policy.priors[ref_class].floor_usd
        for f in changed:
            table = policy.floors.delta.get(f)
            if table is not None:
                floor += piecewise_floor(table.points, abs(after[f] - before[f]))
        engineers = 2 + i
        unit = int(floor / engineers / 1000 + 1) * 1000
        lines += ["", f"    transition t{i + 1:02d}: {src} -> {dst} {{",
                  f'        actor      "team of stage {i + 1}"',
                  f'        mechanism  "mechanism of stage {i + 1}"',
                  f'        asset      "asset of stage {i + 1}"',
                  f'        class      "{ref_class}"']
        if changed:
            lines.append("        threshold  " + " and ".join(
                f"{f} >= {after[f]}" + (" usd" if f == "arr" else "") for f in changed))
            lines.append(f"        kill       developers < {max(1, after['developers'] // 5)}")
        lines += ["        horizon    6 months", "        cost {",
                  f"            engineers  {engineers} * {unit} usd", "            hosting    12 * 1.5k usd",
                  "        }", f"        learning_cost  {5 + i}k usd", f"        estimates  0.{30 + i} 0.{45 + i}"]
        if changed:
            lines.append("        discharges adoption" + (", monetization" if "paying_teams" in changed else ""))
        lines.append("    }")
    for i in range(len(edges)):
        lines += ["", f"    evidence e{i + 1:02d} {{", f'        source    "generated source {i + 1}"',
                  "        captured  2012-05-20", "        tier      2", f"        weight    0.{5 + i % 4}",
                  f"        supports  t{i + 1:02d}",
                  f'        excerpt   "The team has the asset of stage {i + 1} working."', "    }"]
    lines += ["", "    criteria {", "        team     70", "        market   60", "        wedge    55", "    }"]
    lines += ["}", ""]
    return "\n".join(lines)


def generate_cohort(routes: int, n: int = 12) -> str:
    """One file of ``routes`` competing routes of ``n`` transitions each."""
    return "\n".join(generate_route(f"r{k:04d}", n) for k in range(routes))


# ---------------------------------------------------------------------- timing
def best_of(fn: Callable[[], object], repeats: int, number: int = 1, warmup: int = 1) -> float:
    """Seconds per call: the best of ``repeats`` samples of ``number`` calls each."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        gc.collect()  # start each sample from the same heap; the collector stays on while timing
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _fail(what: str, diags: Diagnostics) -> None:
    shown = "\n".join(f"  {d.code} {d.span.line}:{d.span.column} {d.message}" for d in diags.sorted()[:10])
    raise SystemExit(f"bench_compile: the generated input is not clean ({what}):\n{shown}")


# ---------------------------------------------------------------------- measurements
def bench_parse(text: str, repeats: int) -> float:
    """Seconds to parse ``text`` once."""
    diags = Diagnostics()
    if parse_source(text, "cohort.route", diags) is None or diags.items:
        _fail("parse", diags)
    return best_of(lambda: parse_source(text, "cohort.route", Diagnostics()), repeats)


def bench_lower_score(text: str, route_dir: Path, repeats: int) -> tuple[float, float, int]:
    """Seconds to lower, and to lower + bind + score, every route of the parsed ``text``."""
    tree = parse_source(text, "cohort.route", Diagnostics())
    assert tree is not None
    items = [item for item in tree.items if isinstance(item, syn.RouteBlock)]

    def lower_all(score: bool) -> Session:
        session = Session()

        def resolve(name: str, span: Span) -> Library | None:
            return session.resolve_library(name, span, route_dir)

        for item in items:
            route = lower_route(item, "cohort.route", text, resolve, session.diags)
            if score and route is not None:
                session.compile_route(route)
        return session

    check = lower_all(True)
    if check.diags.items:
        _fail("lower/score", check.diags)
    lower = best_of(lambda: lower_all(False), repeats)
    full = best_of(lambda: lower_all(True), repeats)
    return lower, full, len(items)


def bench_compile_vs_fold(path: Path, repeats: int) -> tuple[float, float, float]:
    """Seconds for one full in-process compile of ``path``, and for the fold alone."""

    def compile_once() -> Compiled:
        session = Session()
        (route,) = session.load_routes(path, path.name)
        compiled = session.compile_route(route)
        if compiled is None or session.diags.items:
            _fail("compile", session.diags)
        assert compiled is not None
        return compiled

    numbers = compile_once().numbers
    ps = [float(t.p) for t in numbers.transitions]
    cs = [float(t.cost.c) for t in numbers.transitions]
    value = float(numbers.value)
    if len(ps) != 12 or not math.isclose(chain_fold(ps, cs, value)[0], float(numbers.score), rel_tol=1e-9):
        raise SystemExit("bench_compile: the fold of the compiled (p, c) pairs does not reproduce the score")
    t_compile = best_of(compile_once, repeats, number=20, warmup=5)
    t_fold = best_of(lambda: chain_fold(ps, cs, value), repeats, number=20_000, warmup=1_000)
    return t_compile, t_fold, float(numbers.score)


CASES = (
    ("chain, paper's fold", "chain", False),
    ("chain, [fold] policy", "chain", True),
    ("graph, paper's fold", "graph", False),
    ("graph, [fold] policy", "graph", True),
)


def bench_case(label: str, path: Path, policies: Path, chain: bool, repeats: int) -> tuple[float, float, float]:
    """Seconds for one full compile of ``path`` (a fresh Session, as in (c)), for binding +
    scoring + coverage of its lowered route (`Session.compile_route`, one Session), and the score."""

    def fresh() -> tuple[Session, Compiled]:
        session = Session(policies=PolicyStore(search_path=[policies]))
        (route,) = session.load_routes(path, path.name)
        compiled = session.compile_route(route)
        if compiled is None or session.diags.items:
            _fail(f"compile {label}", session.diags)
        assert compiled is not None
        return session, compiled

    session, compiled = fresh()
    route = compiled.route
    if len(route.transitions) != 12 or (route.shape is None) != chain:
        raise SystemExit(f"bench_compile: the case {label} is not a 12-transition {'chain' if chain else 'graph'}")
    t_full = best_of(fresh, repeats, number=20, warmup=5)
    t_bind = best_of(lambda: session.compile_route(route), repeats, number=50, warmup=5)
    return t_full, t_bind, float(compiled.numbers.score)


def bench_cases(folder: Path, repeats: int) -> list[tuple[str, float, float, float]]:
    """`bench_case` for each of `CASES` (12 transitions each)."""
    policies = write_fold_policy(folder)
    out = []
    for label, shape, planned in CASES:
        text = generate_route("twelve") if shape == "chain" else generate_graph_route("twelve")
        path = folder / f"{shape}{'_fold' if planned else ''}.route"
        path.write_text(under_fold_policy(text) if planned else text, encoding="utf-8")
        out.append((label, *bench_case(label, path, policies, shape == "chain", repeats)))
    return out


# ---------------------------------------------------------------------- report
def _si(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--routes", type=int, default=100, help="competing routes in the parse file (default 100)")
    ap.add_argument("--repeats", type=int, default=5, help="samples per measurement; the best counts (default 5)")
    ap.add_argument("--quick", action="store_true", help="20 routes, 3 repeats (a smoke run)")
    args = ap.parse_args(argv)
    if args.quick:
        args.routes, args.repeats = 20, 3

    t0 = time.perf_counter()
    get_parser()  # build the LALR tables once, outside every timing (Lark's parser is cached process-wide)
    t_build = time.perf_counter() - t0

    cohort = generate_cohort(args.routes)
    n_lines = cohort.count("\n") + 1
    with tempfile.TemporaryDirectory(prefix="pcsc-bench-") as tmp:
        route_dir = Path(tmp)
        single = route_dir / "twelve.route"
        single.write_text(generate_route("twelve"), encoding="utf-8")

        t_parse = bench_parse(cohort, args.repeats)
        t_lower, t_full, n_routes = bench_lower_score(cohort, route_dir, args.repeats)
        t_compile, t_fold, score = bench_compile_vs_fold(single, args.repeats)
        cases = bench_cases(route_dir, args.repeats)

    rows = [
        (
            "(a) parse",
            f"{_si(n_lines / t_parse)} lines/s",
            f"{n_lines:,} lines, {n_routes} routes: {t_parse * 1e3:.0f} ms a parse",
        ),
        ("(b) lower", f"{_si(n_routes / t_lower)} routes/s", f"{t_lower / n_routes * 1e6:,.0f} us/route"),
        (
            "(b) lower+policy+score",
            f"{_si(n_routes / t_full)} routes/s",
            f"{t_full / n_routes * 1e6:,.0f} us/route",
        ),
        ("(c) full compile, 12 transitions", f"{t_compile * 1e6:,.0f} us", "read, parse, lower, bind, score"),
        ("(c) float fold, same 12 (p, c)", f"{t_fold * 1e6:,.3f} us", "pcsc.score.fold.chain_fold"),
        ("(c) ratio compile / fold", f"{t_compile / t_fold:,.0f}x", ""),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    impl = platform.python_implementation()
    print(f"PCSC compile benchmark  {dt.date.today().isoformat()}")
    print(f"Python {platform.python_version()} ({impl}) on {platform.platform()}, {platform.machine()}")
    print(f"best of {args.repeats} repeats after warm-up; time.perf_counter")
    print(f"Lark LALR parser built once in {t_build * 1e3:.0f} ms and cached process-wide (not timed below)")
    print()
    print(f"{'measurement'.ljust(w0)}  {'result'.rjust(w1)}  notes")
    print(f"{'-' * w0}  {'-' * w1}  {'-' * 5}")
    for name, value, note in rows:
        print(f"{name.ljust(w0)}  {value.rjust(w1)}  {note}")
    print()
    print(f"12-transition route score {score:,.2f}; a fresh Session per compile (policy TOML and venture.obl")
    print("re-read each time), but the Lark parser is shared, as in any long-lived process.")
    print()
    print("(d) the same 12 transitions as a graph, and under a [fold] policy (discount 8%/year, option to stop);")
    print("    ratios to the first row, measured in this run")
    _, base_full, base_bind, _ = cases[0]
    head = ("case", "full compile", "ratio", "bind+score+coverage", "ratio", "score")
    table = [
        (label, f"{t_full * 1e6:,.0f} us", f"{t_full / base_full:.2f}x", f"{t_bind * 1e6:,.0f} us",
         f"{t_bind / base_bind:.2f}x", f"{sc:,.2f}")
        for label, t_full, t_bind, sc in cases
    ]
    widths = [max(len(r[k]) for r in (head, *table)) for k in range(len(head))]
    for r in (head, tuple("-" * w for w in widths), *table):
        print("  ".join(r[0].ljust(widths[0]) if k == 0 else r[k].rjust(widths[k]) for k in range(len(r))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
