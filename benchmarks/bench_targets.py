"""The speed and scale targets, measured in one run (a script, not a test).

    python3 benchmarks/bench_targets.py [--quick] [--check-routes N]

Prints one table: measure, value, target, met or missed. Every in-process time is the
best of several samples of `time.process_time` (CPU time of this process: other jobs on
a shared machine slow it less than the wall clock), and every ratio divides two times
measured in this run, on the same clock, by the raw float fold of the same 12 (p, c)
pairs (`pcsc.score.fold.chain_fold`). Process-level rows (the cohort check, cold seams) are
wall-clock times of fresh `python3 -m pcsc` processes, with peak resident memory from
`resource.getrusage`. Caches (parser tables, lowered IR, proofs) live in a temporary
XDG_CACHE_HOME, so "cold" is really cold; the parser tables are built once before
anything is timed, as any installed pcsc has them.

See benchmarks/README.md for what each row means and a recorded run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import itertools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pcsc.compiler.session import Compiled, Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_compile import generate_route  # noqa: E402  (a sibling script, not a package)

ROOT = Path(__file__).resolve().parent.parent


def best(fn: Callable[[], object], repeats: int, number: int = 1, warmup: int = 1) -> float:
    """CPU seconds per call: the best of ``repeats`` samples of ``number`` calls."""
    for _ in range(warmup):
        fn()
    out = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        for _ in range(number):
            fn()
        out = min(out, (time.process_time() - start) / number)
    return out


def non_parse_step(text: str, folder: Path) -> tuple[Session, Callable[[], Compiled | None]]:
    """What a compile of ``text`` does after parsing (lower, bind, score, coverage), as a
    function to time: the parse is done once, here, and one Session (libraries and policy
    loaded once, looked up in ``folder``) serves every call."""
    from pcsc.compiler.session import Session
    from pcsc.diagnostics.model import Diagnostics, Span
    from pcsc.lang.ir import Library
    from pcsc.lang.lower.route import lower_route
    from pcsc.lang.syntax import nodes as syn
    from pcsc.lang.syntax import parse_source

    tree = parse_source(text, "twelve.route", Diagnostics())
    assert tree is not None
    item = next(i for i in tree.items if isinstance(i, syn.RouteBlock))
    shared = Session()

    def resolve(name: str, span: Span) -> Library | None:
        return shared.resolve_library(name, span, folder)

    def step() -> Compiled | None:
        rt = lower_route(item, "twelve.route", text, resolve, shared.diags)
        assert rt is not None
        return shared.compile_route(rt)

    return shared, step


def route_text(name: str, n: int = 12, _cache: dict[int, str] = {}) -> str:  # noqa: B006
    """`generate_route(name, n)` (made once per n, then renamed: generating loads the policy)."""
    if n not in _cache:
        _cache[n] = generate_route("r_template", n)
    return _cache[n].replace("r_template", name)


def run_pcsc(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pcsc", *args], capture_output=True, text=True, env=env, cwd=cwd)
    return time.perf_counter() - start, done


def run_measured(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float, int, str]:
    """Wall seconds, peak resident MB of the largest process of the run (the pcsc
    process or one of its workers: `RUSAGE_CHILDREN` of a wrapper), CPU seconds of all
    its processes, exit code, stderr."""
    code = (
        "import json, resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        f"done = subprocess.run([sys.executable, '-m', 'pcsc', *{args!r}], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps([wall, u.ru_maxrss, u.ru_utime + u.ru_stime, done.returncode, done.stderr[-3000:]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd)
    wall, rss, cpu, rc, err = json.loads(done.stdout)
    return wall, rss / 1024, cpu, rc, err


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check-routes", type=int, default=10_000, help="routes in the cohort check (default 10,000)")
    ap.add_argument("--big-file", type=int, default=1_000, help="routes in the one-file linearity row (default 1,000)")
    ap.add_argument("--quick", action="store_true", help="2 repeats, 1,000 cohort routes, a 200-route file")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.check_routes, args.big_file = 2, 1_000, 200

    with tempfile.TemporaryDirectory(prefix="pcsc-targets-") as tmp_name:
        tmp = Path(tmp_name)
        cache = tmp / "xdg"
        cache.mkdir(mode=0o700)
        os.environ["XDG_CACHE_HOME"] = str(cache)
        os.environ.pop("PCSC_NO_CACHE", None)
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        rows = measure(args, tmp, env)
    print_table(args, rows)
    return 0


Row = tuple[str, str, str, bool | None, str]  # measure, value, target, met, note


def measure(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> list[Row]:
    from pcsc.analysis.seams.analysis import analyse
    from pcsc.analysis.seams.identity import seam_identities
    from pcsc.analysis.seams.splice import seam_indices
    from pcsc.analysis.seams.symbolic import verify_shape
    from pcsc.compiler.ircache import IRCache
    from pcsc.compiler.session import Session
    from pcsc.diagnostics.model import Diagnostics
    from pcsc.lang.syntax import parse_source
    from pcsc.lang.syntax import parser as syntax_parser
    from pcsc.lang.syntax.parser import _typed_parser, get_parser
    from pcsc.score.fold import chain_fold

    get_parser()
    _typed_parser()
    r = args.repeats
    rows: list[Row] = []

    # ------------------------------------------------------------------ the fold
    single = tmp / "twelve.route"
    single.write_text(route_text("twelve"), encoding="utf-8")
    session = Session()
    (route,) = session.load_routes(single, single.name)
    compiled = session.compile_route(route)
    assert compiled is not None and not session.diags.items, [d.message for d in session.diags.items]
    ps = [t.p for t in compiled.numbers.transitions]
    cs = [t.cost.c for t in compiled.numbers.transitions]
    value = compiled.numbers.value
    t_fold = best(lambda: chain_fold(ps, cs, value), r, number=20_000, warmup=1_000)
    rows.append(("float fold, 12 transitions", f"{t_fold * 1e6:.2f} us", "(the unit)", None,
                 "pcsc.score.fold.chain_fold"))

    # ------------------------------------------------------------------ full compile
    def compile_once(ir_cache: IRCache | None = None) -> None:
        syntax_parser._PARSED.clear()  # the process remembers its last parses: each sample parses again
        s = Session(ir_cache=ir_cache)
        (rt,) = s.load_routes(single, single.name)
        if s.compile_route(rt) is None or s.diags.items:
            raise SystemExit("bench_targets: the 12-transition route did not compile cleanly")

    t_full = best(compile_once, r, number=10, warmup=3)
    rows.append(("full compile / fold", f"{t_full / t_fold:,.0f}x", "<= 4,000x", t_full / t_fold <= 4000,
                 f"{t_full * 1e3:.2f} ms: read, parse, lower, bind, score, coverage; a fresh Session each"))
    ir = IRCache.default()
    assert ir is not None
    compile_once(ir)
    t_warm = best(lambda: compile_once(ir), r, number=10, warmup=3)
    rows.append(("full compile, IR cached / fold", f"{t_warm / t_fold:,.0f}x", "<= 4,000x", t_warm / t_fold <= 4000,
                 f"{t_warm * 1e3:.2f} ms: the same with the file's lowered IR from the cache (unchanged file)"))

    text = single.read_text(encoding="utf-8")

    def parse_once() -> None:
        syntax_parser._PARSED.clear()
        parse_source(text, "twelve.route", Diagnostics())

    t_parse = best(parse_once, r, number=10, warmup=2)
    rows.append(("parse / fold", f"{t_parse / t_fold:,.0f}x", "", None,
                 f"{t_parse * 1e3:.2f} ms, {(text.count(chr(10)) + 1) / t_parse:,.0f} lines/s"))

    _, non_parse = non_parse_step(text, tmp)
    t_np = best(non_parse, r, number=20, warmup=3)
    rows.append(("non-parse (lower+bind+score+coverage) / fold", f"{t_np / t_fold:,.0f}x", "<= 600x",
                 t_np / t_fold <= 600, f"{t_np * 1e3:.2f} ms a route, one Session (libraries, policy loaded once)"))

    # ------------------------------------------------------------------ seams
    ks = list(seam_indices(compiled.route))
    all(verify_shape(len(ps), k) for k in ks)  # proofs cached before timing

    def identity_arm() -> None:
        for k, s in zip(ks, seam_identities(ps, cs, value, ks), strict=True):
            if not (s.identity_holds and verify_shape(len(ps), k)):
                raise SystemExit(f"bench_targets: seam {k} fails its identity")

    t_id = best(identity_arm, r, number=100, warmup=10)
    rows.append(("seams, identity arm, cached proofs / fold", f"{t_id / t_fold:,.0f}x", "<= 200x",
                 t_id / t_fold <= 200, f"{t_id * 1e6:,.0f} us for {len(ks)} seams (exact, linear in n)"))
    t_an = best(lambda: analyse(compiled, session), max(1, r // 2), number=1, warmup=1)
    rows.append(("seams, identity + pipeline arm / fold", f"{t_an / t_fold:,.0f}x", "", None,
                 f"{t_an * 1e3:,.0f} ms: every splice printed, parsed, lowered, bound, scored"))

    fifty = tmp / "fifty.route"
    fifty.write_text(route_text("fifty", 50), encoding="utf-8")
    cold_code = (
        "import time; t0 = time.perf_counter()\n"
        "from pcsc.compiler.session import Session\n"
        "from pcsc.analysis.seams.identity import seam_identities\n"
        "from pcsc.analysis.seams.symbolic import remember_proofs, verify_shape\n"
        "remember_proofs()\n"
        "from pathlib import Path\n"
        f"s = Session(); (rt,) = s.load_routes(Path({str(fifty)!r}), 'fifty.route'); c = s.compile_route(rt)\n"
        "n = c.numbers; ps = [t.p for t in n.transitions]; cs = [t.cost.c for t in n.transitions]\n"
        "ks = list(range(1, len(ps) - 1))\n"
        "t1 = time.perf_counter()\n"
        "ids = seam_identities(ps, cs, n.value, ks)\n"
        "ok = all(i.identity_holds and verify_shape(len(ps), k) for k, i in zip(ks, ids))\n"
        "import sys; print(ok, time.perf_counter() - t1, t1 - t0, 'sympy' in sys.modules)\n"
    )
    for label, fresh in (("cold seams n=50, identity arm + proofs", True),
                         ("seams n=50, identity arm, proofs on disk", False)):
        if fresh:
            for f in (Path(env["XDG_CACHE_HOME"]) / "pcsc").glob("proofs-*.json"):
                f.unlink()
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", cold_code], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0 or not done.stdout.startswith("True"):
            raise SystemExit(f"bench_targets: cold seams failed: {done.stdout}{done.stderr}")
        _, seams_s, compile_s, sympy_loaded = done.stdout.split()
        t_seams = float(seams_s)
        rows.append((label, f"{t_seams:.2f} s", "<= 0.5 s", t_seams <= 0.5,
                     f"48 seams in a fresh process, sympy imported: {sympy_loaded}; before them, imports + "
                     f"compile {float(compile_s):.2f} s; process wall {wall:.2f} s"))
    wall, done = run_pcsc(["seams", "--jobs", "2", "fifty.route"], env, tmp)
    rows.append(("pcsc seams n=50 --jobs 2 (with pipeline arm)", f"{wall:.2f} s", "", None,
                 f"exit {done.returncode}; 48 splices of a 50-transition route recompiled"))

    # ------------------------------------------------------------------ linear cost per file
    one = tmp / "one.route"
    one.write_text(route_text("r0"), encoding="utf-8")
    big = tmp / "big.route"
    big.write_text("\n".join(route_text(f"r{k:05d}") for k in range(args.big_file)), encoding="utf-8")

    def load(path: Path) -> None:
        s = Session()
        s.load_routes(path, path.name)

    t_one = best(lambda: load(one), r, number=5, warmup=1)
    t_big = best(lambda: load(big), 1, number=1, warmup=0)
    per = t_big / args.big_file / t_one
    rows.append((f"one file of {args.big_file:,} routes, per route / one route", f"{per:.2f}x", "~1x (linear)",
                 per <= 1.25, f"parse + lower: {t_one * 1e3:.1f} ms vs {t_big / args.big_file * 1e3:.1f} ms a route"))

    # ------------------------------------------------------------------ the cohort check
    files = 100
    per_file = args.check_routes // files
    cohort = tmp / "cohort"
    cohort.mkdir()
    for i in range(files):
        body = "\n".join(route_text(f"c{i:03d}_{k:03d}") for k in range(per_file))
        (cohort / f"f{i:03d}.route").write_text(body, encoding="utf-8")
    n_routes = files * per_file
    for f in (Path(env["XDG_CACHE_HOME"]) / "pcsc" / "ir").rglob("*.pickle"):
        f.unlink()
    results = {}
    for label, jobs in (("cold", "2"), ("warm", "2"), ("warm", "1")):
        wall, rss, cpu, rc, err = run_measured(["check", "--jobs", jobs, "cohort"], env, tmp)
        if rc != 0 or f"ok: {n_routes:,} routes checked" not in err:
            raise SystemExit(f"bench_targets: the cohort check failed: {err}")
        results[(label, jobs)] = wall, rss, cpu
    cold, rss, cpu = results[("cold", "2")]
    rows.append((f"pcsc check {n_routes:,} routes --jobs 2, cold", f"{cold:.1f} s", "< 20 s", cold < 20,
                 f"{files} files of {per_file} routes, every one parsed and lowered (empty IR cache); "
                 f"{cpu:.0f} CPU s in all, {cpu / n_routes * 1e3:.1f} ms a route"))
    warm = results[("warm", "2")][0]
    rows.append((f"pcsc check {n_routes:,} routes --jobs 2, unchanged", f"{warm:.1f} s", "< 20 s", warm < 20,
                 f"the IR from the cache; --jobs 1: {results[('warm', '1')][0]:.1f} s"))
    rows.append((f"peak memory, check {n_routes:,} routes", f"{rss:,.0f} MB", "< 300 MB", rss < 300,
                 "largest process of the cold --jobs 2 run (ru_maxrss)"))
    _, rss_big, _, _, _ = run_measured(["check", "big.route"], env, tmp)
    rows.append((f"peak memory, check one file of {args.big_file:,} routes", f"{rss_big:,.0f} MB", "", None,
                 "a file's text, tokens and IR are alive together while it is lowered"))

    # ------------------------------------------------------------------ bootstraps
    import numpy as np

    from pcsc.forecast import metrics

    rng = np.random.default_rng(7)
    y = rng.random(40) < 0.35
    y[:2] = [True, False]
    columns = [np.round(rng.random(40) + 0.3 * y * rng.random(40), 2) for _ in range(60)]
    start = time.process_time()
    metrics.bootstrap_many(columns, y, 10_000, 20260710)
    t_many = time.process_time() - start
    start = time.process_time()
    sample = list(itertools.islice(itertools.combinations(columns, 2), 20))
    for a, b in sample:
        metrics.paired_delta_auc(a, b, y, 10_000, 20260710)
    t_pair = (time.process_time() - start) / len(sample)
    old = t_pair * 60 * 59 / 2 + t_pair / 2 * 60
    rows.append(("60 scorers x 40 rows, all pairs, B=10,000", f"{t_many:.2f} s", "vectorized", None,
                 f"one pair at a time: {old:.0f} s (extrapolated from {len(sample)} pairs)"))
    return rows


def print_table(args: argparse.Namespace, rows: list[Row]) -> None:
    print(f"PCSC speed and scale targets  {dt.date.today().isoformat()}")
    print(f"Python {platform.python_version()} ({platform.python_implementation()}) on {platform.platform()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"best of {args.repeats} samples of process_time; ratios to the fold measured in this run")
    print()
    w = [max(len(str(row[i])) for row in rows) for i in range(3)]
    print(f"{'measure'.ljust(w[0])}  {'value'.rjust(w[1])}  {'target'.ljust(w[2])}  met     note")
    print(f"{'-' * w[0]}  {'-' * w[1]}  {'-' * w[2]}  ------  ----")
    for name, value, target, met, note in rows:
        verdict = "" if met is None else ("met" if met else "MISSED")
        print(f"{name.ljust(w[0])}  {value.rjust(w[1])}  {target.ljust(w[2])}  {verdict.ljust(6)}  {note}")


if __name__ == "__main__":
    sys.exit(main())
