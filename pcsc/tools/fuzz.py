"""Two fuzzers: every input ends in a result or in diagnostics, never in an exception
or exit 70.

    python -m pcsc.tools.fuzz -n 100000 --seed 1 [--out fuzz-crashes]
    python -m pcsc.tools.fuzz --mutate -n 100000 --seed 1 --jobs 2 [--out fuzz-crashes]

The grammar fuzzer: `Generator` writes routes from the grammar (states, vision,
transitions with thresholds, kills and costs, evidence, criteria), the shipped
`venture` library, the shipped policy and outcomes files, then mutates them: token
edits (delete, repeat, swap, replace), byte edits (flips, invalid UTF-8, truncation),
extreme numbers (`1e308`, `1e1000000`, 400-digit integers, `nan`), deep nesting
(operators and brackets past the depth limit), bidi controls, NUL, CR-only and CRLF
line breaks. `run_input` puts one input through the whole pipeline in-process: read,
parse, lower, check the policy, score, coverage, the JSON packet and the text report,
`explain`, the formatter with its safety check, and, for short routes, the seams.

The mutation fuzzer (`--mutate`): `Mutator` starts from the routes PCSC ships
(`examples/`) and edits them at the byte level (bit flips; byte runs inserted,
deleted or duplicated; two routes spliced; edge numbers, control characters and
invalid UTF-8 inserted; truncation) and at the token level (tokens dropped,
duplicated, swapped, replaced by edge numbers such as `1e308`, `-0`, `nan`, `1e-400`,
`9999999999999999999999`, by keywords or by tokens of other routes), so it reaches
inputs the grammar never writes. `run_entry_points` runs each through the commands a
user runs, as `pcsc` runs them (`pcsc.cli.main`): `check`, `compile --format json`
and `fmt --check`, then, when it compiles, `explain`, `graph` and `seams --format
json`; each must exit 0, 1, 2 or 3, print no internal error and print strict JSON.

Both use only seeded `random.Random`s, so a seed gives the same inputs on every run
(the mutator's input i depends on the seed and i alone, in any process), and need no
test dependency (tests/ wraps the grammar fuzzer in hypothesis strategies). A crashing
input is written to ``--out`` with its traceback or output beside it (`pcsc check
FILE` on it reproduces it).
"""

from __future__ import annotations

import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


# ---------------------------------------------------------------------- the mutation fuzzer
# Numbers at the edges of the floats and of the language: the largest float and past it,
# negative zero, below the smallest subnormal, more digits than a 64-bit integer holds.
EDGE_NUMBERS = (
    "1e308", "1.7e308", "1.7976931348623157e308", "1e309", "-1e308", "-0", "-0.0", "nan", "inf", "1e-400",
    "4.9e-324", "1e-320", "9999999999999999999999", "9" * 40, "0", "-1", "0.0000001", "1e308k", "1e308%",
    "1e307", "1.5e308", "1_000_000_000_000", "100%", "1e400%",
)
CONTROL_BYTES = (b"\x00", b"\x07", b"\x08", b"\x0c", b"\x1b", b"\x1b[31m", b"\x1b]0;title\x07", b"\x7f", b"\r",
                 b"\x85", b"\xe2\x80\xae", b"\xef\xbb\xbf")
INVALID_UTF8 = (b"\xff", b"\xfe\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82",
                b"\x80", b"\xf8\x88\x80\x80\x80")
KEYWORDS = ("route", "state", "vision", "transition", "evidence", "criteria", "cost", "threshold", "kill", "uses",
            "policy", "as_of", "and", "or", "not", "true", "false", "usd", "days", "->", "{", "}", "(", ")", ":",
            ",", "*", "/", "-", "%", "k", "M", "B", '"', "#", ">=", "==")
TOKEN = re.compile(
    r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?[kMB%]?'
    r"|->|>=|<=|==|!=|."
)
MAX_INPUT_BYTES = 64_000  # a mutant is cut there: the limits (10 MB, lines of 10,000) have their own tests


def corpus() -> tuple[bytes, ...]:
    """The routes PCSC ships (`examples/`, sorted), each as written and lean (`lean`),
    or, in an installation without them, routes from the grammar."""
    examples = Path(__file__).resolve().parents[2] / "examples"  # the checkout's, beside the package
    found = [p.read_bytes() for p in sorted(examples.rglob("*.route"))] if examples.is_dir() else []
    if not found:
        return tuple(Generator(i).route().encode("utf-8") for i in range(20))
    return tuple(found + [lean(route) for route in found])


def lean(route: bytes) -> bytes:
    """``route`` without its comment lines and with one evidence block: a third smaller,
    so that the parser, which costs most of an input, costs less (every construct is
    still there)."""
    text = route.decode("utf-8")
    blocks = re.findall(r"^    evidence .*?^    }\n", text, re.M | re.S)
    for block in blocks[1:]:
        text = text.replace(block, "", 1)
    return "".join(line for line in text.splitlines(keepends=True) if not line.lstrip().startswith("#")).encode()


class Mutator:
    """The second generator: shipped routes mutated at the byte level (bit flips, byte
    runs inserted, deleted or duplicated, two routes spliced, edge numbers, control
    characters and invalid UTF-8 inserted, truncation) and at the token level (tokens
    dropped, duplicated, swapped, replaced by edge numbers, keywords or tokens of other
    routes). Input ``i`` is a function of (seed, i) alone, so any slice of a run, in any
    process, makes the same inputs."""

    def __init__(self, seed: int, routes: tuple[bytes, ...] | None = None) -> None:
        self.seed = seed
        self.routes = routes if routes is not None else corpus()
        self._tokens: dict[int, list[str]] = {}

    def tokens_of(self, which: int) -> list[str]:
        if which not in self._tokens:
            self._tokens[which] = TOKEN.findall(self.routes[which].decode("utf-8", "surrogateescape"))
        return self._tokens[which]

    def input(self, index: int) -> Input:
        r = random.Random(f"{self.seed}:{index}")
        half = len(self.routes) // 2  # the lean half (see `corpus`), three times in four
        data = self.routes[r.randrange(half, len(self.routes)) if r.random() < 0.75 else r.randrange(len(self.routes))]
        how = []
        for _ in range(r.choice((1, 1, 2, 2, 3, 4))):
            if r.random() < 0.5:
                data, what = self.token_edit(r, data)
            else:
                data, what = self.byte_edit(r, data)
            how.append(what)
        return Input("route", data[:MAX_INPUT_BYTES], "+".join(how))

    def token_edit(self, r: random.Random, data: bytes) -> tuple[bytes, str]:
        tokens = TOKEN.findall(data.decode("utf-8", "surrogateescape"))
        if not tokens:
            return data, "token:none"
        words = [i for i, t in enumerate(tokens) if not t.isspace()] or [0]
        i = r.choice(words)
        run = r.randint(1, 6)
        action = r.choice(("drop", "drop-run", "duplicate", "duplicate-run", "swap", "number", "number", "keyword",
                           "foreign"))
        if action == "drop":
            del tokens[i]
        elif action == "drop-run":
            del tokens[i : i + run]
        elif action == "duplicate":
            tokens.insert(r.randrange(len(tokens) + 1), tokens[i])
        elif action == "duplicate-run":
            tokens[i:i] = tokens[i : i + run]
        elif action == "swap":
            j = r.choice(words)
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif action == "number":
            numbers = [k for k, t in enumerate(tokens) if t[:1].isdigit()] or [i]
            tokens[r.choice(numbers)] = r.choice(EDGE_NUMBERS)
        elif action == "keyword":
            tokens[i] = r.choice(KEYWORDS)
        else:  # a token of another shipped route
            other = self.tokens_of(r.randrange(len(self.routes)))
            tokens[i] = r.choice(other) if other else tokens[i]
        return "".join(tokens).encode("utf-8", "surrogateescape"), f"token:{action}"

    def byte_edit(self, r: random.Random, data: bytes) -> tuple[bytes, str]:
        b = bytearray(data)
        at = r.randrange(len(b) + 1)
        run = r.randint(1, 64)
        action = r.choice(("flip", "insert", "delete", "duplicate", "splice", "number", "control", "utf8",
                           "truncate"))
        if action == "flip" and b:
            for _ in range(r.randint(1, 8)):
                k = r.randrange(len(b))
                b[k] ^= 1 << r.randrange(8)
        elif action == "insert":
            b[at:at] = bytes(r.randrange(256) for _ in range(r.randint(1, 16)))
        elif action == "delete":
            del b[at : at + run]
        elif action == "duplicate":
            b[r.randrange(len(b) + 1) : r.randrange(len(b) + 1)] = b[at : at + run * 4]
        elif action == "splice":
            other = self.routes[r.randrange(len(self.routes))]
            b = b[:at] + other[r.randrange(len(other) + 1) :]
        elif action == "number":
            b[at:at] = r.choice(EDGE_NUMBERS).encode()
        elif action == "control":
            b[at:at] = r.choice(CONTROL_BYTES)
        elif action == "utf8":
            b[at:at] = r.choice(INVALID_UTF8)
        else:
            del b[at:]
        return bytes(b), f"bytes:{action}"


# Every command a user runs on a route file, in process, as `pcsc` runs it; the last three
# only on inputs that compile (on the others they stop at the same errors as compile).
ENTRY_POINTS = (("check",), ("compile", "--format", "json"), ("fmt", "--check"))
COMPILED_ENTRY_POINTS = (("explain",), ("graph",), ("seams", "--format", "json"))
DOCUMENTED_EXITS = frozenset({0, 1, 2, 3})  # pcsc.cli.exits: ok, input errors, usage, refused


class Crash(Exception):
    """An entry point that left the documented exits, printed an internal error or
    printed JSON that is not strict (NaN, Infinity)."""


def run_entry_points(item: Input, folder: Path) -> str:
    """Put one route file through every entry point (`ENTRY_POINTS`, then, when it
    compiles, `COMPILED_ENTRY_POINTS`); the outcome is compile's ("ok", "refused",
    "diagnostics", "usage"). Raises `Crash`."""
    path = folder / "fuzz.route"
    path.write_bytes(item.data)
    compiled = None
    for argv in ENTRY_POINTS:
        code = _entry_point(argv, path)
        if argv[0] == "compile":
            compiled = code
    if compiled in (0, 3):
        for argv in COMPILED_ENTRY_POINTS:
            _entry_point(argv, path)
    return {0: "ok", 3: "refused", 1: "diagnostics"}.get(compiled or 0, "usage") if compiled is not None else "usage"


def _entry_point(argv: tuple[str, ...], path: Path) -> int:
    import contextlib
    import io
    import json

    from pcsc.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([argv[0], str(path), *argv[1:]])
    errors = err.getvalue()
    if code not in DOCUMENTED_EXITS or "internal error" in errors:
        raise Crash(f"pcsc {' '.join(argv)}: exit {code}\n{errors[-2000:]}")
    if "--format" in argv and out.getvalue():
        def refuse(word: str) -> None:
            raise Crash(f"pcsc {' '.join(argv)}: {word} in the JSON output")

        json.loads(out.getvalue(), parse_constant=refuse)
    return code


def mutation_fuzz(
    n: int, seed: int, out: Path | None = None, jobs: int = 1, start: int = 0,
    progress: Callable[[int, Report], None] | None = None,
) -> Report:
    """Inputs ``start`` … ``start + n − 1`` of `Mutator(seed)` through every entry point,
    in ``jobs`` processes; crashing inputs go to ``out`` (when given)."""
    report = Report()
    begin = time.monotonic()
    chunk = 500
    slices = [(seed, i, min(chunk, start + n - i)) for i in range(start, start + n, chunk)]
    results: Iterator[tuple[Counter[str], list[tuple[int, Input, str]]]]
    if jobs == 1:
        results = map(_mutation_slice, slices)
    else:
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(jobs)
        results = pool.map(_mutation_slice, slices)
    done = 0
    for counts, crashes in results:
        report.counts.update(counts)
        for index, item, message in crashes:
            if out is not None:
                report.crashes.append(_save(out, seed, index, item, Crash(message)))
        done += sum(counts.values())
        if progress is not None:
            report.seconds = time.monotonic() - begin
            progress(done, report)
    if jobs != 1:
        pool.shutdown()
    report.seconds = time.monotonic() - begin
    return report


def _mutation_slice(task: tuple[int, int, int]) -> tuple[Counter[str], list[tuple[int, Input, str]]]:
    """Run inputs ``first`` … ``first + count − 1`` in a folder of their own, with the
    IR cache in a folder of its own (never the user's) and the folder as the working one
    (no `pcsc.toml` of the caller applies)."""
    import contextlib
    import os

    seed, first, count = task
    mutator = Mutator(seed)
    counts: Counter[str] = Counter()
    crashes: list[tuple[int, Input, str]] = []
    saved = os.environ.get("XDG_CACHE_HOME")
    with tempfile.TemporaryDirectory(prefix="pcsc-mutate-") as tmp:
        folder = Path(tmp) / "routes"
        folder.mkdir()
        cache = Path(tmp) / "cache"
        cache.mkdir(mode=0o700)
        os.environ["XDG_CACHE_HOME"] = str(cache)
        try:
            with contextlib.chdir(folder):
                for index in range(first, first + count):
                    item = mutator.input(index)
                    try:
                        counts[run_entry_points(item, folder)] += 1
                    except Crash as exc:
                        counts["crash"] += 1
                        crashes.append((index, item, str(exc)))
        finally:
            if saved is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = saved
    return counts, crashes


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


USAGE = "usage: python -m pcsc.tools.fuzz [--mutate] [-n N] [--seed S] [--jobs J] [--out FOLDER] [--progress]"


@attrs.frozen
class Options:
    n: int = 1000
    seed: int = 0
    out: Path = Path("fuzz-crashes")
    progress: bool = False
    mutate: bool = False
    jobs: int = 1


def _options(argv: list[str]) -> Options:
    """-n, --seed, --jobs, --out, --mutate and --progress (no argparse: the library
    leaves that to the CLI)."""
    found: dict[str, Any] = {}
    args = iter(argv)
    for arg in args:
        if arg in ("--progress", "--mutate"):
            found[arg[2:]] = True
        elif arg in ("-n", "--seed", "--out", "--jobs"):
            value = next(args, None)
            if value is None:
                raise ValueError(f"{arg} needs a value")
            if arg == "--out":
                found["out"] = Path(value)
            elif not (value.isascii() and value.isdigit()):
                raise ValueError(f"{arg} takes a whole number, got {value!r}")
            else:
                found[arg.lstrip("-")] = int(value)
        else:
            raise ValueError(f"unknown argument {arg}")
    return Options(**found)


def main(argv: list[str] | None = None) -> int:
    """`python -m pcsc.tools.fuzz`: print the counts by outcome; exit 1 when anything crashed."""
    try:
        options = _options(sys.argv[1:] if argv is None else argv)
    except ValueError as exc:
        sys.stderr.write(f"{USAGE}\nerror: {exc}\n")
        return 2

    def show(i: int, r: Report) -> None:
        sys.stderr.write(f"{i} inputs, {dict(r.counts)}, {r.seconds:.0f} s\n")

    shown = show if options.progress else None
    if options.mutate:
        report = mutation_fuzz(options.n, options.seed, options.out, options.jobs, progress=shown)
        outcomes: tuple[str, ...] = ("ok", "refused", "diagnostics", "usage", "crash")
    else:
        report = fuzz(options.n, options.seed, options.out, shown)
        outcomes = ("ok", "diagnostics", "crash")
    total = sum(report.counts.values())
    kind = "mutated " if options.mutate else ""
    print(f"{total} {kind}inputs (seed {options.seed}) in {report.seconds:.1f} s")
    for outcome in outcomes:
        print(f"  {outcome:<12}{report.counts[outcome]}")
    for path in report.crashes:
        print(f"  crash input: {path}")
    return 1 if report.counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
