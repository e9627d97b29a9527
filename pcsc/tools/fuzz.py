"""A grammar-aware fuzzer: every input ends in a result or in diagnostics, never in an
exception.

    python -m pcsc.tools.fuzz -n 100000 --seed 1 [--out fuzz-crashes]

`Generator` writes routes from the grammar (states, vision, transitions with
thresholds, kills and costs, evidence, criteria), the shipped `venture` library, the
shipped policy and outcomes files, then mutates them: token edits (delete, repeat,
swap, replace), byte edits (flips, invalid UTF-8, truncation), extreme numbers
(`1e308`, `1e1000000`, 400-digit integers, `nan`), deep nesting (operators and
brackets past the depth limit), bidi controls, NUL, CR-only and CRLF line breaks. It
uses only a seeded `random.Random`, so a seed gives the same inputs on every run and
the command needs no test dependency (tests/ wraps it in hypothesis strategies).

`run_input` puts one input through the whole pipeline in-process, as the commands do:
read, parse, lower, check the policy, score, coverage, the JSON packet and the text
report, `explain`, the formatter with its safety check, and, for short routes, the
seams. Diagnostics are fine; an exception that escapes is a crash, and its input is
written to ``--out`` for reproduction (`pcsc check FILE` on it).
"""

from __future__ import annotations

import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import attrs

from pcsc.base.resources import data_dir

KINDS = ("route", "route", "route", "route", "library", "policy", "outcomes")

FIELDS = {"developers": "count", "paying_teams": "count", "arr": "usd", "soc2": "bool"}
CLASSES = ("devtools/first-users", "devtools/first-revenue", "devtools/scale", "devtools/unknown")
NUMBERS = (
    "0", "1", "2", "10", "150", "500", "5k", "2k", "1.2M", "3B", "0.5", ".25", "1_000", "5%", "0.0001",
    "1e308", "1.7e308", "1e309", "1e1000000", "1e-400", "9" * 400, "nan", "inf", "1e999999k", "123456789012345678901",
)
SANE = ("0", "1", "2", "10", "150", "500", "5k", "2k", "40", "1.2M", "3B", "0.5", "1_000", "100k", "80M")
EXTREME = ("1e308", "1.7976931348623157e308", "1e309", "1e1000000", "9" * 400, "1e-1000000", "nan", "inf", "-1e308")
UNITS = ("", "", "", " usd", " days", " months", " years", " eur")
COMPARE = (">=", "<=", ">", "<", "==", "!=")
STRANGE = (
    "\x00", "\u202e", "\u2066", "\u200f", "\r", "\t", "\u0430", "{", "}", '"', "#", ";", ":", "->", "(", ")", "%",
    "\ufeff", "\u00a0", "🙂", "\\",
)


@attrs.define
class Input:
    """One fuzz input: its kind and its bytes."""

    kind: str  # route | library | policy | outcomes
    data: bytes
    note: str  # how it was made


class Generator:
    """Seeded inputs: generated from the grammar, then (usually) mutated."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.wild = False  # a wild route draws from extreme numbers and ill-typed operands too
        self.library = (data_dir("obligations") / "venture.obl").read_text(encoding="utf-8")
        self.policy = (data_dir("policies") / "venture" / "1.0.0.toml").read_text(encoding="utf-8")

    # ------------------------------------------------------------------ from the grammar
    def number(self) -> str:
        r = self.rng
        if not self.wild:
            return r.choice(SANE) if r.random() < 0.92 else r.choice(("1e308", "1.7e308", "1e300"))
        return r.choice(EXTREME) if r.random() < 0.08 else r.choice(NUMBERS)

    def pick(self, sane: list[str], wild: list[str]) -> str:
        """One of ``sane`` in a clean route; of either in a wild one."""
        return self.rng.choice(sane + wild if self.wild else sane)

    def operand(self, field: str) -> str:
        """Something to compare ``field`` with: of its type in a clean route."""
        kind = FIELDS[field]
        if kind == "bool":
            sane = ["true", "false"]
        elif kind == "usd":
            sane = [f"{self.number()} usd", "arr", f"arr * {self.number()}"]
        else:
            sane = [self.number(), "developers", f"max(developers, {self.number()})", f"paying_teams / {self.number()}"]
        wild = [f"{self.number()}{self.rng.choice(UNITS)}", '"500"', "2012-01-01", "none", f"{field} / 0", "true"]
        return self.pick(sane, wild)

    def expr(self, depth: int = 0) -> str:
        r = self.rng
        field = r.choice(list(FIELDS))
        if depth > 2 or r.random() < 0.5:
            op = r.choice(["==", "!="]) if FIELDS[field] == "bool" and not self.wild else r.choice(COMPARE)
            return f"{field} {op} {self.operand(field)}"
        op = r.choice(["and", "or", "not", "()"])
        if op == "not":
            return f"not {self.expr(depth + 1)}"
        if op == "()":
            return f"({self.expr(depth + 1)})"
        return f"{self.expr(depth + 1)} {op} {self.expr(depth + 1)}"

    def route(self) -> str:
        r = self.rng
        self.wild = r.random() < 0.3
        n = r.choice([1, 1, 2, 3, 4])
        lines = [f'route r{r.randrange(3)} "fuzz" {{']
        lines.append(f"    as_of {self.pick(['2019-03-01'], ['2019-02-30', '0001-01-01', '9999-12-31'])}")
        lines.append(f'    policy "{self.pick(["venture@1.0.0", "venture@1.1.0"], ["venture@9"])}"')
        lines.append("    uses venture")
        for i in range(n + 1):
            values = []
            for name, kind in FIELDS.items():
                if i == 0 or r.random() < 0.5:
                    if kind == "bool":
                        values.append(f"{name} {r.choice(['true', 'false'])}")
                    elif kind == "usd":
                        values.append(f"{name} {self.number()} usd")
                    else:
                        values.append(f"{name} {self.number()}")
            lines.append(f"    state s{i} {{ {' '.join(values)} }}")
        lines.append(
            f"    vision s{n} {{ tam {self.number()} usd capture {self.pick(['5%', '0.5', '1'], ['1e308'])} "
            f"defensibility {self.pick(['0.5', '1'], ['2', '-1'])} }}"
        )
        for i in range(n):
            lines += [
                f"    transition t{i}: s{i} -> s{i + 1} {{",
                '        actor "a"',
                '        mechanism "m"',
                f'        asset "{r.choice(["cache", "vault", "x"])}"',
                f'        class "{self.pick(list(CLASSES[:3]), ["devtools/unknown"])}"',
                f"        threshold {self.expr()}",
                f"        kill {self.expr()}",
                f"        horizon {self.pick(['60 days', '6 months', '1 years'], ['0 days', '1e308 days'])}",
                "        cost {",
                f"            team {self.number()} * {self.number()} usd",
                f"            cloud {self.number()} usd",
                "        }",
                f"        estimates {self.pick(['0.5 0.65', '0.3', '1 0'], ['2'])}",
                f"        discharges {r.choice(['adoption', 'monetization', 'compliance', 'adoption, monetization'])}",
                "    }",
            ]
        for i in range(r.randrange(3)):
            lines += [
                f"    evidence e{i} {{",
                '        source "s"',
                f"        captured {r.choice(['2019-01-01', '2020-01-01'])}",
                f"        tier {self.pick(['1', '2', '3'], ['7'])}",
                f"        weight {self.pick(['0.5', '1', '0'], ['1e308'])}",
                f"        {r.choice(['supports', 'contradicts'])} t{r.randrange(n)}",
                '        excerpt "cache vault x"',
                "    }",
            ]
        if r.random() < 0.5:
            lines.append(f"    criteria {{ team {self.number()} market {self.number()} }}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def outcomes(self) -> str:
        r = self.rng
        value = r.choice(["150", "1e308", "9" * 400, "-1", "true", '"x"', "[" * 3000])
        return (
            "[[observation]]\n"
            f'route = "r0"\ndate = {r.choice(["2019-06-01", "2019-13-01"])}\n'
            f"fields = {{ developers = {value} }}\n"
            "\n[[label]]\n"
            f'route = "r0"\ndate = 2020-01-01\npositive = {r.choice(["true", "1", "nan"])}\n'
        )

    # ------------------------------------------------------------------ mutations
    def mutate_text(self, text: str) -> str:
        r = self.rng
        tokens = re.findall(r"\s+|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9_.eE+-]*[kMB%]?|\"[^\"\n]*\"|.", text)
        if not tokens:
            return text
        for _ in range(r.randint(1, 3)):
            i = r.randrange(len(tokens))
            action = r.randrange(8)
            if action == 0:
                del tokens[i]
                if not tokens:
                    return ""
            elif action == 1:
                tokens.insert(i, tokens[r.randrange(len(tokens))])
            elif action == 2:
                j = r.randrange(len(tokens))
                tokens[i], tokens[j] = tokens[j], tokens[i]
            elif action == 3:
                tokens[i] = r.choice(EXTREME)
            elif action == 4:
                tokens[i] = tokens[i][: len(tokens[i]) // 2] + r.choice(STRANGE) + tokens[i][len(tokens[i]) // 2 :]
            elif action == 5:
                tokens.insert(i, self.deep())
            elif action == 6:
                tokens[i] = r.choice(["usd", "eur", "days", "%", "k", "not", "and", "-", "/ 0", "route", "}", "{"])
            else:
                tokens[i] = tokens[i] * r.randint(2, 5)
        return "".join(tokens)

    def deep(self) -> str:
        r = self.rng
        n = r.choice([50, 99, 100, 101, 150, 1200])
        shape = r.randrange(4)
        if shape == 0:
            return "developers >= " + "1 + " * n + "1"
        if shape == 1:
            return "not " * n + "soc2"
        if shape == 2:
            return "(" * n + "developers" + ")" * n
        return "- " * n + "1"

    def mutate_bytes(self, data: bytes) -> bytes:
        r = self.rng
        b = bytearray(data)
        action = r.randrange(5)
        if action == 0 and b:
            i = r.randrange(len(b))
            b[i] ^= 1 << r.randrange(8)
        elif action == 1:
            i = r.randrange(len(b) + 1)
            b[i:i] = r.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xe2\x80\xae"])
        elif action == 2:
            del b[r.randrange(len(b) + 1) :]
        elif action == 3:
            b = bytearray(bytes(b).replace(b"\n", b"\r"))
        else:
            b = bytearray(bytes(b).replace(b"\n", b"\r\n"))
        return bytes(b)

    # ------------------------------------------------------------------ inputs
    def next(self) -> Input:
        r = self.rng
        kind = r.choice(KINDS)
        if kind == "route":
            text = self.route()
        elif kind == "library":
            text = self.library
        elif kind == "policy":
            text = self.policy
        else:
            text = self.outcomes()
        how = []
        if kind != "route" or r.random() < 0.5:
            for _ in range(r.randint(1, 2)):
                text = self.mutate_text(text)
            how.append("tokens")
        if r.random() < 0.2:
            how.append("deep")
            text = text.replace("developers >= 150", self.deep(), 1)
            if kind == "route":
                text = re.sub(r"threshold [^\n]*", lambda _: "threshold " + self.deep(), text, count=1)
        data = text.encode("utf-8", "surrogatepass")
        if r.random() < 0.25:
            data = self.mutate_bytes(data)
            how.append("bytes")
        return Input(kind, data, "+".join(how) or "generated")


# ---------------------------------------------------------------------- the property
def run_input(item: Input, folder: Path, index: int = 0) -> str:
    """Put one input through the pipeline; "ok" or "diagnostics" (an exception escapes:
    that is a crash)."""
    from pcsc.base import canonical
    from pcsc.compiler.session import Session
    from pcsc.forecast.outcomes import OutcomesError, parse_outcomes
    from pcsc.policy.load import PolicyError, PolicyStore

    if item.kind == "outcomes":
        try:
            parse_outcomes(item.data.decode("utf-8", "replace"), "outcomes.toml")
        except OutcomesError:
            return "diagnostics"
        return "ok"
    policies = folder / "policies"
    route = folder / "fuzz.route"
    library = folder / "venture.obl"
    for stale in (route, library, policies / "venture" / "1.0.0.toml"):
        stale.unlink(missing_ok=True)
    if item.kind == "policy":
        (policies / "venture").mkdir(parents=True, exist_ok=True)
        (policies / "venture" / "1.0.0.toml").write_bytes(item.data)
        route.write_text(Generator(index).route(), encoding="utf-8")
    elif item.kind == "library":
        library.write_bytes(item.data)
        route.write_text(Generator(index).route(), encoding="utf-8")
    else:
        route.write_bytes(item.data)
    session = Session(policies=PolicyStore([policies]))
    try:
        routes = session.load_routes(route, route.name)
        compiled = session.compile_routes(routes)
    except PolicyError:
        return "diagnostics"
    if compiled:
        from pcsc.analysis import explain
        from pcsc.render.packet import compile_packet
        from pcsc.render.text import compile_text, gate_text

        canonical.dumps(compile_packet(compiled, session.diags.sorted()), pretty=True)
        compile_text(compiled)
        gate_text(compiled)
        for c in compiled:
            canonical.dumps(explain.to_json(c))
            explain.to_text(c)
            if len(c.route.transitions) <= 2 and index % 20 == 0:
                _seams(c, session)
    text = session.sources.get(route.name)
    if text is not None and index % 2 == 0:
        _format(text, route.name, folder, policies)
    return "diagnostics" if session.diags.has_errors else "ok"


def _seams(c: object, session: object) -> None:
    from pcsc.analysis.seams.analysis import analyse
    from pcsc.analysis.seams.experiment import summarise
    from pcsc.base import canonical
    from pcsc.render.packet import seams_packet

    results = [analyse(c, session)]  # type: ignore[arg-type]
    canonical.dumps(seams_packet(results, summarise(results), None))


def _format(text: str, shown: str, folder: Path, policies: Path) -> None:
    from pcsc.compiler.meaning import semantics
    from pcsc.diagnostics.model import Diagnostics
    from pcsc.lang.fmt import check_format, format_source

    formatted = format_source(text, shown, Diagnostics())
    if formatted is not None and formatted != text:
        check_format(text, formatted, shown, lambda t: semantics(t, shown, False, folder, (), (policies,)))


# ---------------------------------------------------------------------- the command
@attrs.define
class Report:
    counts: Counter[str] = attrs.field(factory=Counter)
    crashes: list[Path] = attrs.field(factory=list)
    seconds: float = 0.0


def fuzz(n: int, seed: int, out: Path | None = None, progress: Callable[[int, Report], None] | None = None) -> Report:
    """Run ``n`` inputs from ``seed``; crashing inputs go to ``out`` (when given)."""
    report = Report()
    gen = Generator(seed)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pcsc-fuzz-") as tmp:
        folder = Path(tmp)
        for i in range(n):
            item = gen.next()
            try:
                outcome = run_input(item, folder, i)
            except BaseException as exc:  # noqa: B036 - RecursionError, SystemExit: every escape is a crash
                if isinstance(exc, KeyboardInterrupt):
                    raise
                outcome = "crash"
                if out is not None:
                    report.crashes.append(_save(out, seed, i, item, exc))
            report.counts[outcome] += 1
            if progress is not None and (i + 1) % 1000 == 0:
                report.seconds = time.monotonic() - start
                progress(i + 1, report)
    report.seconds = time.monotonic() - start
    return report


def _save(out: Path, seed: int, index: int, item: Input, exc: BaseException) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    suffix = {"route": ".route", "library": ".obl", "policy": ".toml", "outcomes": ".toml"}[item.kind]
    path = out / f"seed{seed}-{index}-{item.kind}{suffix}"
    path.write_bytes(item.data)
    trace = "".join(traceback.format_exception(exc))
    path.with_suffix(path.suffix + ".txt").write_text(f"{item.note}\n{trace}", encoding="utf-8")
    return path


USAGE = "usage: python -m pcsc.tools.fuzz [-n N] [--seed S] [--out FOLDER] [--progress]"


def _options(argv: list[str]) -> tuple[int, int, Path, bool]:
    """-n, --seed, --out and --progress (no argparse: the library leaves that to the CLI)."""
    n, seed, out, progress = 1000, 0, Path("fuzz-crashes"), False
    args = iter(argv)
    for arg in args:
        if arg == "--progress":
            progress = True
        elif arg in ("-n", "--seed", "--out"):
            value = next(args, None)
            if value is None:
                raise ValueError(f"{arg} needs a value")
            if arg == "--out":
                out = Path(value)
            elif arg == "-n":
                n = int(value)
            else:
                seed = int(value)
        else:
            raise ValueError(f"unknown argument {arg}")
    return n, seed, out, progress


def main(argv: list[str] | None = None) -> int:
    """`python -m pcsc.tools.fuzz`: print the counts by outcome; exit 1 when anything crashed."""
    try:
        n, seed, out, progress = _options(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        sys.stderr.write(f"{USAGE}\nerror: {exc}\n")
        return 2

    def show(i: int, r: Report) -> None:
        sys.stderr.write(f"{i} inputs, {dict(r.counts)}, {r.seconds:.0f} s\n")

    report = fuzz(n, seed, out, show if progress else None)
    total = sum(report.counts.values())
    print(f"{total} inputs (seed {seed}) in {report.seconds:.1f} s")
    for outcome in ("ok", "diagnostics", "crash"):
        print(f"  {outcome:<12}{report.counts[outcome]}")
    for path in report.crashes:
        print(f"  crash input: {path}")
    return 1 if report.counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
