"""Every fenced block of README.md and docs/ that is not a `$ pcsc …` session (those run
in tests/test_readme.py, tests/test_doc_commands.py and tests/test_tutorial.py), not a
file a page writes (`<!-- file: -->`, `<!-- edit: -->`) and not a source text (a route,
a library, a policy, Python, YAML, SQL) is accounted for here: an output the program
prints, checked against it (here, or by the test named in `CHECKED`), a usage synopsis
whose options are the command's, or a list of commands to type, each of which parses.
A new block of any other kind fails `test_every_block_is_accounted_for` until it is
checked or classified. The generated pages and the marked blocks (`python -m
pcsc.tools.docs`) are checked whole in tests/test_docs.py and tests/test_docblocks.py."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sqlite3
import textwrap
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pcsc.tools import docblocks
from tests import docrun
from tests.conftest import ROOT, SPEC_ROUTE

DOCS = ROOT / "docs"
GENERATED = {"diagnostics.md", "json.md", "policy-reference.md"}
PAGES = [ROOT / "README.md", *(p for p in sorted(DOCS.glob("*.md")) if p.name not in GENERATED)]
#: Languages of source texts a page shows for the reader to write (not outputs).
SOURCES = {"route", "obl", "toml", "python", "yaml", "sql", "lua"}


@dataclass(frozen=True)
class Fence:
    page: str
    line: int  # of the opening fence, in the page without its generated blocks
    lang: str
    body: str  # less the fence's own indentation (a fence in a list item)
    marker: str  # the `<!-- … -->` line just above, or ""

    @property
    def key(self) -> tuple[str, str]:
        return self.page, self.body.splitlines()[0] if self.body else ""


def fences(page: Path) -> list[Fence]:
    lines = docblocks.without_blocks(page.read_text(encoding="utf-8")).splitlines()
    out, i = [], 0
    while i < len(lines):
        opening = re.match(r"^(\s*)```([\w-]*)\s*$", lines[i])
        if not opening:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            j += 1
        assert j < len(lines) and lines[j].strip() == "```", f"{page.name}:{j + 1}: a fence that does not close alone"
        marker = lines[i - 1].strip() if i and lines[i - 1].strip().startswith("<!-- ") else ""
        indent = len(opening[1])
        body = "\n".join(row[indent:] if row[:indent].isspace() else row for row in lines[i + 1:j])
        out.append(Fence(page.name, i + 1, opening[2], body, marker))
        i = j + 1
    return out


def _is_session(fence: Fence) -> bool:
    return any(row.startswith("$ ") for row in fence.body.splitlines())


def _is_command_list(fence: Fence) -> bool:
    """Lines to type: commands, each perhaps with a `#` comment, nothing printed (a
    `#` line may say what the list is for, above the first command, not below one,
    where it would be output no test checks)."""
    rows = [r for r in fence.body.splitlines() if r.strip()]
    while rows and rows[0].startswith("#"):
        rows.pop(0)
    return bool(rows) and all(re.match(r"(pcsc|python3?|\.ci/\w+|dask|lint-imports)\b", r) for r in rows)


def _is_synopsis(fence: Fence) -> bool:
    first = fence.body.splitlines()[0] if fence.body else ""
    return bool(re.match(r"pcsc [a-z -]+ ?(FILE|PATH|HONEST|OUTCOMES)", first) or re.match(r"pcsc\.\w+\(", first))


def candidates() -> list[Fence]:
    """The blocks this module accounts for."""
    return [f for page in PAGES for f in fences(page)
            if not _is_session(f) and not f.marker.startswith(("<!-- file:", "<!-- edit:"))
            and f.lang not in SOURCES and f.lang != "diff"]


# ---------------------------------------------------------------------- what each block is
#: Outputs another test compares with the page, by the block's first line.
CHECKED: dict[tuple[str, str], str] = {
    ("coverage.md", "devtools_api: ungated  (coverage off, from the command line: lowered from the policy's gate)  "
                    "[s.route]"):
        "tests/test_search_paths.py::test_only_the_command_line_lowers_the_mode_and_the_verdict_line_says_so",
    ("cli.md", "pcsc[report]: error: pcsc report needs Jinja2, which is not installed: python3 -m pip install "
               "'jinja2>=3.1' (the extra pcsc[report]) [PCSC-E115]"):
        "tests/test_extras.py::test_a_missing_extra_is_one_diagnostic_naming_it",
    ("folds.md", "# pcsc explain examples/domains/solid_electrolyte.route --route solid_electrolyte (excerpt)"):
        "tests/test_domains.py::test_the_docs_worked_examples_are_the_programs",
    ("folds.md", "# pcsc explain examples/domains/biochar_kilns.route --route biochar_kilns (excerpt)"):
        "tests/test_domains.py::test_the_docs_worked_examples_are_the_programs",
    ("folds.md", "# pcsc seams --symbolic examples/domains/solid_electrolyte.route (excerpt)"):
        "tests/test_domains.py::test_the_docs_worked_examples_are_the_programs",
    ("forecast.md", "ok: .pcsc/ledger.sqlite is intact: 4 forecasts, 2 outcomes"):
        "tests/test_ledger_tamper.py::test_the_docs_show_what_verify_says_it_checked",
    ("graph.md", "flowchart LR"): "tests/test_graph.py::test_the_documented_mermaid_is_what_the_command_prints",
    ("outcomes.md", "resolved as of 2016-06-01: 2 positive, 0 negative, 1 unresolved, 0 censored"):
        "tests/test_resolve.py::test_command_text_matches_the_documented_output",
    ("outcomes.md", "outcomes.toml: observation[2].date: expected a date; write it unquoted: date = 2012-09-15"):
        "tests/test_resolve.py::test_the_documented_validation_messages_are_the_real_ones",
}

#: Outputs and sketches this module checks: the block's first line -> the check.
Check = Callable[[Fence, Path], None]
HERE: dict[tuple[str, str], Check] = {}


def checks(page: str, first_line: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        HERE[(page, first_line)] = check
        return check
    return register


def test_every_block_is_accounted_for() -> None:
    unaccounted = [f"{f.page}:{f.line}: {f.key[1]}" for f in candidates()
                   if f.key not in CHECKED and f.key not in HERE and not _is_synopsis(f) and not _is_command_list(f)]
    assert unaccounted == [], "check each output against the program (or name its test in CHECKED)"


def test_every_entry_names_a_block_a_page_has() -> None:
    keys = {f.key for f in candidates()}
    assert sorted(set(CHECKED) - keys) == [] and sorted(set(HERE) - keys) == []


@pytest.mark.parametrize("key", sorted(CHECKED), ids=lambda k: f"{k[0]}: {k[1][:40]}")
def test_the_named_test_reads_that_page(key: tuple[str, str]) -> None:
    """The test CHECKED names exists, and reads the page it is said to check."""
    path, name = CHECKED[key].split("::")
    source = (ROOT / path).read_text(encoding="utf-8")
    match = re.search(rf"^def {name}\(.*?(?=^def |^@|\Z)", source, re.S | re.M)
    assert match, f"{path} has no test {name}"
    assert key[0] in match.group(0) or key[0].removesuffix(".md") in match.group(0), f"{name} does not read {key[0]}"


def _fence(key: tuple[str, str]) -> Fence:
    (found,) = [f for f in candidates() if f.key == key]
    return found


# ---------------------------------------------------------------------- comparing lines
def _line_pattern(shown: str) -> re.Pattern[str]:
    """A shown line as a pattern: a hex run cut short (`9f3c…`) stands for any hash, any
    other `…` for any text."""
    parts = re.split(r"([0-9a-f]{4,}…|…)", shown)
    body = "".join(r"[0-9a-f]+" if p.endswith("…") and len(p) > 1 else ".*" if p == "…" else re.escape(p)
                   for p in parts)
    return re.compile(body + r"\Z")


def assert_shown(shown: str, printed: str) -> None:
    """The shown lines are consecutive printed lines (each matching its pattern)."""
    want = [_line_pattern(line.rstrip()) for line in shown.splitlines()]
    have = [line.rstrip() for line in printed.splitlines()]
    for start in range(len(have) - len(want) + 1):
        if all(p.match(have[start + i]) for i, p in enumerate(want)):
            return
    raise AssertionError("printed\n" + "\n".join(have) + "\n\nbut the page shows\n" + shown)


def test_a_comment_below_a_command_is_no_command_list() -> None:
    def fence(body: str) -> Fence:
        return Fence("p.md", 1, "sh", body, "")

    assert _is_command_list(fence("# in CI\npcsc gate routes/ > gate.json"))
    assert not _is_command_list(fence("pcsc evaluate\n# graded as of 2019-01-01: 30 forecasts"))


def test_a_cut_hash_and_a_cut_sentence_match_only_their_kind() -> None:
    assert _line_pattern("head 4.2:9f3c… were deleted").match("head 4.2:0a1b2c3d were deleted")
    assert not _line_pattern("head 4.2:9f3c… were deleted").match("head 4.2:zz were deleted")
    assert _line_pattern("not checked: …").match("not checked: anything at all")
    with pytest.raises(AssertionError):
        assert_shown("a\nc", "a\nb\nc")


def _run(folder: Path, *argv: str) -> tuple[int, str]:
    done = docrun.run(shlex.join(["pcsc", *argv]), folder)
    return done.returncode, done.stdout + done.stderr


# ---------------------------------------------------------------------- docs/decisions.md
def _resign(cert: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit a certificate as a forger who knows the format: its digest made again."""
    doc = json.loads(cert.read_text(encoding="utf-8"))
    edit(doc)
    body = {k: v for k, v in doc.items() if k != "digest"}
    doc["digest"] = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False,
                                              separators=(",", ":")).encode("utf-8")).hexdigest()
    cert.write_text(json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")


def _step(doc: dict[str, Any], symbol: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in doc["routes"][0]["steps"] if s["symbol"] == symbol)
    return found


@checks("decisions.md", "c.json: error: c.json: route devtools_api: launch.budget: cost item `engineers` count (line "
                        "27 of devtools_api.route): is 3.0, but the file writes 2.0 [PCSC-E912]")
def _a_changed_count(fence: Fence, folder: Path) -> None:
    """The certificate of the route with 3 engineers, held against the file that writes
    2: the input's hash and the item's text made the file's, every step consistent."""
    route = folder / "devtools_api.route"
    written = SPEC_ROUTE.read_text(encoding="utf-8")
    assert written.count("engineers  2 * 45k usd") == 1
    route.write_text(written.replace("engineers  2 * 45k usd", "engineers  3 * 45k usd"), encoding="utf-8")
    assert _run(folder, "compile", "devtools_api.route", "--cert", "c.json")[0] == 0
    route.write_text(written, encoding="utf-8")

    def as_the_file(doc: dict[str, Any]) -> None:
        (entry,) = doc["inputs"]
        entry["sha256"] = hashlib.sha256(route.read_bytes()).hexdigest()
        item = _step(doc, "launch.budget")["operands"]["items"][0]
        assert item["count"]["f"] == 3.0
        item["written"]["text"] = "engineers  2 * 45k usd"

    _resign(folder / "c.json", as_the_file)
    code, printed = _run(folder, "verify-cert", "c.json")
    assert code == 1
    assert_shown(fence.body, printed)


@checks("decisions.md", "c.json: error: c.json: route devtools_api: launch.c (c = max(budget, floor_class, "
                        "floor_delta)): operand `floor_delta` names step `launch.budget`, but the rule reads "
                        "`launch.floor_delta` [PCSC-E912]")
def _an_operand_naming_another_step(fence: Fence, folder: Path) -> None:
    (folder / "devtools_api.route").write_text(SPEC_ROUTE.read_text(encoding="utf-8"), encoding="utf-8")
    assert _run(folder, "compile", "devtools_api.route", "--cert", "c.json")[0] == 0

    def point_at_budget(doc: dict[str, Any]) -> None:
        operands = _step(doc, "launch.c")["operands"]
        operands["floor_delta"] = dict(operands["budget"])

    _resign(folder / "c.json", point_at_budget)
    code, printed = _run(folder, "verify-cert", "c.json")
    assert code == 1
    assert_shown(fence.body, printed)


def sketch_keys(sketch: str) -> dict[tuple[str, ...], set[str]]:
    """The keys a sketch of a JSON document shows, by where they are (the keys of the
    objects leading there; an array's objects are at the array's place). A sketch may
    list a key alone (`{"path", "sha256"}`) or with a value (`"version": 7`)."""
    keys: dict[tuple[str, ...], set[str]] = defaultdict(set)
    stack: list[tuple[str, tuple[str, ...]]] = []
    prev, last = "", ""
    for m in re.finditer(r'"([^"]*)"|[{}\[\],:|]', sketch):
        token = m.group(0)
        if m.group(1) is not None:
            if stack and stack[-1][0] == "{" and prev in ("{", ","):
                keys[stack[-1][1]].add(m.group(1))
                last = m.group(1)
            prev = '"'
            continue
        if token in "{[":
            where = stack[-1][1] if stack else ()
            stack.append((token, (*where, last) if prev == ":" else where))
        elif token in "}]":
            stack.pop()
        prev = token
    return keys


def document_keys(doc: Any, where: tuple[str, ...] = ()) -> dict[tuple[str, ...], set[str]]:
    keys: dict[tuple[str, ...], set[str]] = defaultdict(set)

    def walk(x: Any, at: tuple[str, ...]) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                keys[at].add(k)
                walk(v, (*at, k))
        elif isinstance(x, list):
            for v in x:
                walk(v, at)

    walk(doc, where)
    return keys


def test_sketch_keys_reads_both_kinds_of_sketch() -> None:
    keys = sketch_keys('{ "a", "b": {"c", "d"} | null, "e": [{"f": "v" | "w", "g": [1]}], "h": […] }')
    assert dict(keys) == {(): {"a", "b", "e", "h"}, ("b",): {"c", "d"}, ("e",): {"f", "g"}}


def _every_shown_key_is_there(shown: dict[tuple[str, ...], set[str]], real: dict[tuple[str, ...], set[str]]) -> None:
    missing = {where: sorted(names - real[where]) for where, names in shown.items() if names - real[where]}
    assert missing == {}, "the page shows keys the document does not have"


@checks("decisions.md", '{"certificate": "pcsc-decision-certificate", "version": 8, "pcsc": "<version>",')
def _the_certificates_sketch(fence: Fence, folder: Path) -> None:
    from pcsc.certify.check import VERSION

    (folder / "devtools_api.route").write_text(SPEC_ROUTE.read_text(encoding="utf-8"), encoding="utf-8")
    override = 'priors."devtools/scale".p=0.2'
    code, _ = _run(folder, "compile", "devtools_api.route", "--cert", "c.json", "--set", override)
    assert code == 0
    doc = json.loads((folder / "c.json").read_text(encoding="utf-8"))
    shown, real = sketch_keys(fence.body), document_keys(doc)
    _every_shown_key_is_there(shown, real)
    assert shown[()] == real[()] and shown[("routes",)] == real[("routes",)]  # those two are shown whole
    assert doc["version"] == VERSION and f'"version": {VERSION},' in fence.body
    assert doc["overrides"] == [{"applies_to": "policy", "path": ["priors", "devtools/scale", "p"], "value": 0.2}]


# ---------------------------------------------------------------------- docs/forecast.md
@checks("forecast.md", '{ "pcsc", "schema", "inputs": [{"path", "sha256"}],')
def _the_rank_documents_sketch(fence: Fence, folder: Path) -> None:
    (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    code, out = _run(folder, "rank", "examples/feature_flags.route", "examples/devtools_api.route", "--format", "json")
    assert code == 0
    shown, real = sketch_keys(fence.body), document_keys(json.loads(out))
    _every_shown_key_is_there(shown, real)
    for where in ((), ("ranking",), ("ranking", "gates")):  # shown whole
        assert shown[where] == real[where], where


def _ledger(folder: Path) -> Path:
    """The ledger of docs/forecast.md's examples: 2 forecasts, 2 outcomes anchored to
    them, 2 more forecasts (tests/test_ledger_hardening.py)."""
    from tests.test_ledger_hardening import build

    (folder / ".pcsc").mkdir()
    return build(folder / ".pcsc" / "ledger.sqlite")


@checks("forecast.md", "payload_sha256 = sha256(payload)")
def _the_chains_hashes(fence: Fence, folder: Path) -> None:
    """Each row's hashes, recomputed here from the fields the page lists (not with the
    ledger's code): SHA-256 of the canonical JSON of exactly those fields."""
    path = _ledger(folder)
    entries_sketch, outcomes_sketch = fence.body.split("\n\n")
    fields = {"entries": sketch_keys(entries_sketch.split("canonical_json(", 1)[1]),
              "outcomes": sketch_keys(outcomes_sketch.split("canonical_json(", 1)[1])}
    assert fields["entries"][("policy",)] == {"id", "version", "sha256"}
    assert fields["outcomes"][("forecast",)] == {"seq", "sha256"}

    def canonical(x: Any) -> bytes:
        return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()

    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    checked = 0
    for table in ("entries", "outcomes"):
        previous = "0" * 64
        for row in connection.execute(f"SELECT * FROM {table} ORDER BY seq"):  # noqa: S608 (two fixed names)
            plain = fields[table][()] - {"policy", "forecast"}
            value = {name: row["pcsc_version" if name == "pcsc" else name] for name in plain}
            if table == "entries":
                value["policy"] = {"id": row["policy_id"], "version": row["policy_version"],
                                   "sha256": row["policy_sha256"]}
                value["inputs"] = json.loads(row["inputs"])
            else:
                value["forecast"] = {"seq": row["forecast_seq"], "sha256": row["forecast_sha256"]}
            assert row["payload_sha256"] == hashlib.sha256(row["payload"].encode()).hexdigest()
            assert row["prev_sha256"] == previous
            assert row["entry_sha256"] == hashlib.sha256(canonical(value)).hexdigest(), (table, row["seq"])
            previous = row["entry_sha256"]
            checked += 1
    connection.close()
    assert checked == 6


@checks("forecast.md", ".pcsc/ledger.sqlite: error: entries seq 3: the payload does not match its payload_sha256: "
                       "it was changed after it was written [PCSC-E712]")
def _what_verify_says_of_a_damaged_ledger(fence: Fence, folder: Path) -> None:
    """Its head recorded; then a payload changed, a guard dropped, the newest outcome deleted."""
    from pcsc.forecast.ledger import GUARDS

    path = _ledger(folder)
    code, head = _run(folder, "ledger", "head")
    assert code == 0 and head.startswith("4.2:")
    connection = sqlite3.connect(path, isolation_level=None)
    guards = list(connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    for name in GUARDS:
        connection.execute(f"DROP TRIGGER {name}")
    connection.execute("""UPDATE entries SET payload = replace(payload, '"i":2', '"i":7') WHERE seq = 3""")
    connection.execute("DELETE FROM outcomes WHERE seq = 2")
    for name, sql in guards:
        if name != "entries_no_update":
            connection.execute(sql)
    connection.close()
    code, printed = _run(folder, "ledger", "verify", "--head", head.strip())
    assert code == 1
    assert_shown(fence.body, printed)


@checks("forecast.md", "E.O:HASH        e.g. 4.2:9f3c…(64 hex digits)")
def _the_head_token(fence: Fence, folder: Path) -> None:
    _ledger(folder)
    code, head = _run(folder, "ledger", "head")
    assert code == 0 and re.fullmatch(r"4\.2:[0-9a-f]{64}\n", head), head
    assert _line_pattern(fence.body.split("e.g. ")[1].split("(")[0]).match(head.strip())


@checks("forecast.md", "within each stratum of `recognition_risk` (AUC; — without both classes)")
def _the_strata(fence: Fence, folder: Path) -> None:
    code, printed = _run(ROOT, "evaluate", "--scores", "examples/routecast_table_a1.csv", "--id", "blind_id",
                         "--outcome", "outcome_bucket", "--positive", "S+,+", "--negative", "-",
                         "--strata", "recognition_risk")
    assert code == 0
    assert_shown(fence.body, printed)


# ---------------------------------------------------------------------- other pages
@checks("experiments.md", '{"k": 21, "n": 26, "wilson95": [0.6212374288068301, 0.9149293885105758]}')
def _a_rate_in_json(fence: Fence, folder: Path) -> None:
    from pcsc.base.canonical import dumps
    from pcsc.base.stats import rate

    assert fence.body == dumps(rate(21, 26)).replace(",", ", ").replace(":", ": ")


@checks("policy-tests.md", "policies/venture/1.0.0.toml")
def _a_policys_tests_beside_its_versions(fence: Fence, folder: Path) -> None:
    shown = fence.body.splitlines()
    assert [p for p in shown if not (ROOT / p).is_file()] == []
    assert shown == sorted(str(p.relative_to(ROOT)) for p in (ROOT / "policies" / "venture").rglob("*.toml"))


def _runs_of_the_reference_route(fence: Fence, folder: Path) -> None:
    """A layout fmt.md shows is lines of the reference route, in order (some left out),
    which `pcsc fmt --check` passes."""
    lines = iter(SPEC_ROUTE.read_text(encoding="utf-8").splitlines())
    for shown in fence.body.splitlines():
        assert shown in lines, shown
    code, out = _run(ROOT, "fmt", "--check", "examples/devtools_api.route")
    assert code == 0, out


checks("fmt.md", "    transition launch: garage -> wedge {")(_runs_of_the_reference_route)
checks("fmt.md", "    state garage { developers 0    paying_teams 0    arr 0 usd }")(_runs_of_the_reference_route)


@checks("fmt.md", "threshold  developers >= 5k   # developers        # developers")
def _comments_move(fence: Fence, folder: Path) -> None:
    """fmt.md's before -> after of the comments inside a threshold spread over two lines."""
    rows = fence.body.splitlines()
    width = rows[0].index("# developers", rows[0].index("# developers") + 1)
    before = [r[:width].rstrip().removesuffix("->").rstrip() for r in rows]
    after = [r[width:].strip() for r in rows if r[width:].strip()]
    text = SPEC_ROUTE.read_text(encoding="utf-8")
    old = "        threshold  developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd\n"
    assert text.count(old) == 1
    route = folder / "r.route"
    route.write_text(text.replace(old, textwrap.indent("\n".join(before), " " * 8) + "\n"), encoding="utf-8")
    assert _run(folder, "fmt", "r.route")[0] == 0
    assert textwrap.indent("\n".join(after), " " * 8) + "\n" in route.read_text(encoding="utf-8")


@checks("README.md", 'route devtools_api "Developer API for SMS" {')
def _the_reference_route_abridged(fence: Fence, folder: Path) -> None:
    """The README's route, abridged (`...`): every other line is the reference route's,
    in order."""
    lines = iter(SPEC_ROUTE.read_text(encoding="utf-8").splitlines())
    for shown in fence.body.splitlines():
        if shown.strip() == "...":
            continue
        head = shown.split(" {")[0] if " ..." in shown else shown  # `cost { engineers … ... }`: the `cost` line
        assert any(line.startswith(head) for line in lines), shown


@pytest.mark.parametrize("key", sorted(HERE), ids=lambda k: f"{k[0]}: {k[1][:40]}")
def test_the_output_a_page_shows_is_the_programs(key: tuple[str, str], tmp_path: Path) -> None:
    HERE[key](_fence(key), tmp_path)


# ---------------------------------------------------------------------- synopses and command lists
def _parser(words: list[str]) -> Any:
    from pcsc.cli.main import command_parser, split_command
    from pcsc.cli.registry import find

    found, rest = split_command(words)
    command = find(found)
    assert command is not None, f"no command `pcsc {' '.join(found)}`"
    return command_parser(command), rest


def _command_lines() -> Iterator[tuple[Fence, str]]:
    for fence in candidates():
        if _is_command_list(fence) and not _is_synopsis(fence):
            for row in fence.body.splitlines():
                if row.startswith("pcsc "):
                    yield fence, row


COMMAND_LINES = list(_command_lines())


@pytest.mark.parametrize(("fence", "line"), COMMAND_LINES, ids=[f"{f.page}: {line[:60]}" for f, line in COMMAND_LINES])
def test_each_listed_command_parses(fence: Fence, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(line, comments=True)
    for i, word in enumerate(argv):
        if word in ("<", ">", "|"):
            argv = argv[:i]
            break
    parser, rest = _parser(argv[1:])
    try:
        parser.parse_args(rest)
    except SystemExit as exc:
        pytest.fail(f"{fence.page}: `{line}` is a usage error: {capsys.readouterr().err} ({exc.code})")


SYNOPSES = [f for f in candidates() if _is_synopsis(f) and f.body.startswith("pcsc ")]


@pytest.mark.parametrize("fence", SYNOPSES, ids=[f"{f.page}: {f.key[1][:50]}" for f in SYNOPSES])
def test_each_option_of_a_synopsis_is_the_commands(fence: Fence) -> None:
    words = [w for w in fence.body.split()[1:3] if re.fullmatch(r"[a-z-]+", w)]
    parser, _ = _parser(words)
    options = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", fence.body))
    assert sorted(options - set(parser._option_string_actions)) == []
    assert len(options) >= 1


class _AsWritten:
    """A default path as a page writes it: a string."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f'"{self.path}"'


def test_the_api_synopses_are_the_functions_signatures() -> None:
    import inspect

    import pcsc

    synopses = [f for f in candidates() if _is_synopsis(f) and f.body.startswith("pcsc.")]
    assert len(synopses) >= 5
    for fence in synopses:
        name, rest = fence.body.removeprefix("pcsc.").split("(", 1)
        params = rest.rsplit(") ->", 1)[0]
        signature = inspect.signature(getattr(pcsc, name))
        shown = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
        plain = signature.replace(parameters=[p.replace(default=_AsWritten(p.default)) if isinstance(p.default, Path)
                                              else p for p in shown],
                                  return_annotation=inspect.Signature.empty)
        assert f"({params})" == str(plain), name

