"""The message registry (`pcsc/diagnostics/messages.py`): every template's fields are
plain names, every site supplies exactly the fields of its template, every template is
used, and every registered code is reported somewhere."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pcsc.diagnostics import codes
from pcsc.diagnostics.messages import MESSAGES, Message, diag, message, template_fields
from pcsc.diagnostics.model import Diagnostics, Span
from tests.conftest import ROOT

PCSC = ROOT / "pcsc"
REGISTRY = PCSC / "diagnostics" / "messages.py"
# the calls that fill a template in: `diag(MSG, span, **fields)`, `Diagnostics.diag`,
# the route lowerer's `report`, which passes its fields on to `Diagnostics.diag`, and `phrase`
# (the text alone, for an exception another message embeds)
REPORTERS = {"diag", "report", "phrase"}


def modules() -> list[Path]:
    return [p for p in sorted(PCSC.rglob("*.py")) if p != REGISTRY]


def returned_messages(tree: ast.Module) -> dict[str, list[ast.Name]]:
    """The message constants each function of the module returns (`_compare_message`
    picks the message whose help fits), by function name."""
    found: dict[str, list[ast.Name]] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Name) and node.value.id in MESSAGES:
                    found.setdefault(fn.name, []).append(node.value)
    return found


def message_uses(path: Path) -> Iterator[tuple[ast.AST, str, ast.Call | None]]:
    """Each use of a message constant in ``path``: the node, the constant's name and the
    reporting call it reaches as the first argument (directly, or returned by a function
    of the module called there); None for any other use."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    returned = returned_messages(tree)
    as_argument: dict[int, ast.Call] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in REPORTERS:
                first = node.args[0]
                as_argument[id(first)] = node
                if isinstance(first, ast.Call) and isinstance(first.func, ast.Name):
                    for picked in returned.get(first.func.id, []):
                        as_argument[id(picked)] = node
    for node in ast.walk(tree):
        ident = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if ident in MESSAGES:
            yield node, ident, as_argument.get(id(node))


def sites() -> list[tuple[str, str, ast.Call | None]]:
    return [
        (f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}", name, call)
        for path in modules()
        for node, name, call in message_uses(path)
    ]


SITES = sites()


@pytest.mark.parametrize("name", list(MESSAGES))
def test_a_template_names_plain_fields(name: str) -> None:
    m = MESSAGES[name]
    assert name.startswith(m.code.code.removeprefix("PCSC-") + "_"), f"{name} is not named after {m.code.code}"
    for template in (m.text, m.help, m.otherwise):
        for field in template_fields(template):
            assert field.isidentifier(), f"{name}: field {field!r} is not a plain name"
    assert m.otherwise is None or m.help is not None, f"{name}: `otherwise` without a help"
    # a template renders with every field given (1 suits the numeric format specs)
    text, _ = m.render(dict.fromkeys(m.fields, 1))
    assert text.strip()


def test_every_site_supplies_exactly_the_fields_of_its_template() -> None:
    wrong = []
    for where, name, call in SITES:
        if call is None:
            continue
        keywords = [k.arg for k in call.keywords]
        if None in keywords:
            wrong.append(f"{where}: {name} with **fields: the fields cannot be checked")
            continue
        supplied, needed = set(keywords), MESSAGES[name].fields
        if supplied != needed:
            wrong.append(f"{where}: {name} lacks {sorted(needed - supplied)}, has unknown {sorted(supplied - needed)}")
    assert wrong == []


def test_a_message_is_used_only_by_a_reporting_call() -> None:
    """A constant passed anywhere else could reach a report without its fields checked."""
    assert [where for where, _, call in SITES if call is None] == []


def test_every_template_is_used() -> None:
    used = {name for _, name, _ in SITES}
    assert [name for name in MESSAGES if name not in used] == []


def emitted_codes_in_source() -> set[str]:
    """The codes a site names: through a message, or (not yet migrated) a `codes.EXXX` constant."""
    found = {MESSAGES[name].code.code for _, name, _ in SITES}
    for path in modules():
        if path.parent.name == "diagnostics":
            continue
        found.update(f"PCSC-{c}" for c in re.findall(r"\bcodes\.([EW]\d{3})\b", path.read_text(encoding="utf-8")))
    return found


def test_every_registered_code_is_reported_by_some_site() -> None:
    assert sorted(set(codes.CODES) - emitted_codes_in_source()) == []


# ---------------------------------------------------------------------- filling in
DEMO = message(codes.E209, "`{name}` is given {count:,} times", "{suggestion}", "the names are {names}")


def test_a_message_fills_in_its_fields() -> None:
    d = diag(DEMO, Span.whole_file("f"), name="x", count=1234, suggestion="did you mean `y`?", names="a, b")
    assert (d.code, d.message, d.help) == ("PCSC-E209", "`x` is given 1,234 times", "did you mean `y`?")


def test_a_help_naming_a_field_given_as_none_is_the_other_help() -> None:
    d = diag(DEMO, Span.whole_file("f"), name="x", count=2, suggestion=None, names="a, b")
    assert d.help == "the names are a, b"
    bare = message(codes.E209, "`{name}`", "{suggestion}")
    assert diag(bare, Span.whole_file("f"), name="x", suggestion=None).help is None


def test_a_missing_or_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError, match=r"missing fields \['names'\]"):
        diag(DEMO, Span.whole_file("f"), name="x", count=2, suggestion=None)
    with pytest.raises(TypeError, match=r"unknown fields \['extra'\]"):
        Diagnostics().diag(DEMO, Span.whole_file("f"), name="x", count=2, suggestion=None, names="", extra=1)


def test_the_registry_holds_messages_only() -> None:
    assert all(isinstance(m, Message) for m in MESSAGES.values())
    assert len({(m.code, m.text, m.help) for m in MESSAGES.values()}) == len(MESSAGES)


# ---------------------------------------------------------------------- no sentence outside the registry
# Each site outside pcsc/diagnostics/ that names a code (`codes.EXXX`) rather than a
# message passes on text an exception raised further down; where that text is written:
PASSED_ON = {
    ("pcsc/render/sarif.py", "E501"): "picks report_uncovered's findings of uncovered changes (coverage/diagnose.py "
    "writes them) to pair each with its change",
    ("pcsc/render/sarif.py", "W501"): "as E501, under dock",
    ("pcsc/cli/main.py", "E407"): "ConfigError of pcsc/base/config.py: pcsc.base may not import the registry",
    ("pcsc/cli/main.py", "E115"): "MissingExtra of pcsc/base/extras.py: pcsc.base may not import the registry",
    ("pcsc/policy/load.py", "E403"): "PolicyError's problems, built as strings, at their line (located_policy_problem)",
    ("pcsc/policy/load.py", "E415"): "PolicyError's problems of `[vision]`, in E415_VISION_FORMULA at their line",
    ("pcsc/lang/lower/library.py", "E313"): "UnitProblem of pcsc/lang/lower/units.py, shared with policy rules",
    ("pcsc/lang/fmt.py", "E104"): "none: fmt compares the code of the layout error it repairs",
    ("pcsc/lang/fmt.py", "W620"): "none: fmt compares the code of the control character it drops",
    ("pcsc/analysis/fixes.py", "E101"): "none: the safe fixes are those of these codes' diagnostics",
    ("pcsc/analysis/fixes.py", "E201"): "none: the safe fixes are those of these codes' diagnostics",
    ("pcsc/analysis/fixes.py", "E202"): "none: the safe fixes are those of these codes' diagnostics",
    ("pcsc/analysis/fixes.py", "E204"): "none: the safe fixes are those of these codes' diagnostics",
    ("pcsc/cli/forecasting.py", "E711"): "LedgerError of pcsc/forecast/ledger.py: problems built as strings",
    ("pcsc/cli/forecasting.py", "E719"): "LedgerWriteLost of pcsc/forecast/ledger.py: problems built as strings",
    ("pcsc/cli/commands/ledger_verify.py", "E712"): "the ledger's verify problems (pcsc/forecast/ledger.py)",
    ("pcsc/cli/commands/ledger_verify.py", "E716"): "the ledger's verify problems (pcsc/forecast/ledger.py)",
    # the words are the registry's, filled in where the exception is raised (`phrase`)
    ("pcsc/cli/forecasting.py", "E701"): "OutcomesError: E701_* of the registry",
    ("pcsc/cli/forecasting.py", "E721"): "PacketError: E721_* of the registry",
    ("pcsc/cli/forecasting.py", "E702"): "check_outcomes' errors: E702_* of the registry",
    ("pcsc/cli/forecasting.py", "W701"): "check_outcomes' warnings: W701_* of the registry",
    ("pcsc/cli/commands/test.py", "E801"): "PolicyTestError: E801_* of the registry",
    ("pcsc/cli/commands/ledger_verify.py", "E717"): "CheckpointError: E717_* of the registry",
    ("pcsc/cli/commands/ledger_checkpoint.py", "E717"): "CheckpointError: E717_* of the registry",
    ("pcsc/cli/commands/ledger_keygen.py", "E717"): "CheckpointError: E717_* of the registry",
    ("pcsc/cli/commands/evaluate.py", "E731"): "ScoreTableError: E731_* of the registry",
    ("pcsc/cli/commands/evaluate.py", "E732"): "SidecarError: E732_* of the registry",
    ("pcsc/cli/commands/evaluate.py", "W751"): "pooled_policies: W751_GRADED_TOGETHER of the registry",
    ("pcsc/cli/commands/evaluate.py", "E762"): "PlanError of pcsc/forecast/prereg.py: located problems as strings",
    ("pcsc/cli/commands/prereg.py", "E762"): "PlanError of pcsc/forecast/prereg.py: located problems as strings",
    ("pcsc/cli/commands/rank.py", "W751"): "choose_key: W751_RANKED_TOGETHER of the registry",
    ("pcsc/cli/commands/ledger_export.py", "E741"): "label_problems: E741_* of the registry",
    ("pcsc/forecast/report.py", "E741"): "GradingError: E741_* of the registry",
    ("pcsc/forecast/report.py", "E742"): "GradingError: E742_* of the registry",
    ("pcsc/forecast/report.py", "E745"): "GradingError: E745_* of the registry",
}
# exceptions whose text a site passes on, raised only with the registry's words
FROM_THE_REGISTRY = {"CheckpointError": 0, "SidecarError": 0, "ScoreTableError": 1, "GradingError": 1,
                     "PolicyTestError": 1, "OutcomesError": 1, "PacketError": 1, "OverrideError": 0}
# modules that still collect their problems as sentences written in place
PROBLEMS_AS_SENTENCES = {"pcsc/policy/load.py", "pcsc/forecast/ledger_pg.py", "pcsc/cli/commands/policy_check.py"}
# the calls that make a diagnostic of a code and a text, and the position of the text
REPORTING_TEXT = {"Finding": 1, "of": 1, "add": 1, "ledger_diagnostic": 1}


def writes_a_sentence(node: ast.expr) -> bool:
    """``node`` builds text in place: a literal, an f-string, `+` or `%` on text, `.format`."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(writes_a_sentence(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return writes_a_sentence(node.elt)
    if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return writes_a_sentence(node.left) or writes_a_sentence(node.right)
    if isinstance(node, ast.IfExp):
        return writes_a_sentence(node.body) or writes_a_sentence(node.orelse)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"


def calls() -> Iterator[tuple[str, ast.Call]]:
    for path in modules():
        if path.parent.name == "diagnostics":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def names_a_code(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == "codes"
               for a in [*call.args, *(k.value for k in call.keywords)])


def test_no_site_writes_the_sentence_of_a_diagnostic() -> None:
    """A diagnostic made of a code and a text takes the text from the registry, or passes
    on an exception's; it never writes the sentence where it reports."""
    wrong = []
    for where, call in calls():
        name = called(call)
        position = REPORTING_TEXT.get(name)
        if position is None or (name in ("of", "add") and not names_a_code(call)) or len(call.args) <= position:
            continue
        if name == "Finding" and not (isinstance(call.func, ast.Name)):
            continue
        if writes_a_sentence(call.args[position]):
            wrong.append(f"{where}: {ast.unparse(call)[:100]}")
    assert wrong == [], "write the words in pcsc/diagnostics/messages.py and report with `diag`"


def test_exceptions_reported_as_diagnostics_take_the_registrys_words() -> None:
    wrong = []
    for where, call in calls():
        position = FROM_THE_REGISTRY.get(called(call))
        if position is not None and len(call.args) > position and writes_a_sentence(call.args[position]):
            wrong.append(f"{where}: {ast.unparse(call)[:100]}")
    assert wrong == [], "raise it with `phrase(MESSAGE, ...)` of pcsc/diagnostics/messages.py"


def test_a_code_is_named_only_where_a_text_is_passed_on() -> None:
    named = set()
    for path in modules():
        if path.parent.name == "diagnostics":
            continue
        rel = path.relative_to(ROOT).as_posix()
        named |= {(rel, c) for c in re.findall(r"\bcodes\.([EW]\d{3})\b", path.read_text(encoding="utf-8"))}
    assert sorted(named - set(PASSED_ON)) == [], "report with a message of the registry, or say where its text is"
    assert sorted(set(PASSED_ON) - named) == [], "no longer named there: drop it from PASSED_ON"


def test_problem_lists_collect_the_registrys_words() -> None:
    """A module collecting problems to raise (`problems`, `errors`, `warnings`, `messages`)
    appends `phrase(...)`s, except those not yet moved to the registry."""
    found: dict[str, list[str]] = {}
    for where, call in calls():
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and call.args):
            continue
        target = func.value
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
        if name in ("problems", "errors", "warnings", "messages") and writes_a_sentence(call.args[0]):
            found.setdefault(where.partition(":")[0], []).append(where)
    assert sorted(set(found) - PROBLEMS_AS_SENTENCES) == [], [w for f in found for w in found[f]
                                                              if f not in PROBLEMS_AS_SENTENCES]
    assert sorted(PROBLEMS_AS_SENTENCES - set(found)) == [], "moved to the registry: drop it from the list"
