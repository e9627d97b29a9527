"""Boundary cases that hand-made mutants of the scoring, evidence, expression, ledger,
diagnostics, policy and lowering code survived (issue 19): each test here fails when its
comparison, clip or merge is changed, and says which change it catches.

The shipped policy cannot reach some of these edges (its gains keep W inside its clip
bounds), so the routes here run under small policies extending venture@1.0.0.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import attrs
import pytest

import pcsc.lang.lower.route
from pcsc.certify.check.expressions import compare as checker_compare
from pcsc.compiler.session import Compiled, Session
from pcsc.diagnostics import codes
from pcsc.diagnostics.model import Diagnostics, Span
from pcsc.forecast.ledger import Ledger, OutcomeRecord
from pcsc.lang.interp import BASE_FUNCTIONS, Interpreter
from pcsc.lang.ir import Evidence
from pcsc.lang.ir import expr as ex
from pcsc.lang.syntax.limits import MAX_TRANSITIONS
from pcsc.policy.load import PolicyStore
from pcsc.score.evidence import admissible, exclusions, reweight
from tests.conftest import run_cli

SPAN = Span("probe.route", 1, 1, 1, 1)
AS_OF = dt.date(2020, 1, 15)


# ---------------------------------------------------------------------- helpers
def child_policy(folder: Path, policy_id: str, body: str) -> PolicyStore:
    """``policy_id``@1.0.0 in ``folder/policies``: venture@1.0.0 with the TOML ``body``
    merged over it (its library pin inherited)."""
    path = folder / "policies" / policy_id / "1.0.0.toml"
    path.parent.mkdir(parents=True)
    header = f'[policy]\nid = "{policy_id}"\nversion = "1.0.0"\nextends = "venture@1.0.0"\n\n'
    path.write_text(header + body, encoding="utf-8")
    return PolicyStore([folder / "policies"])


def route_text(policy: str = "venture@1.0.0", body: str = "") -> str:
    """One transition (`onboard`, class devtools/first-users: p_prior 0.45) and ``body``."""
    return f"""route probe "probe" {{
    as_of   {AS_OF.isoformat()}
    policy  "{policy}"
    uses    venture

    state start {{ developers 0 }}
    state pilot {{ developers 40 }}

    vision pilot {{
        tam            200M usd
        capture        5%
        defensibility  0.4
    }}

    transition onboard: start -> pilot {{
        class      "devtools/first-users"
        threshold  developers >= 40
        kill       developers < 10
        discharges adoption
    }}
{body}}}
"""


def evidence_block(name: str, captured: dt.date, *, relation: str = "supports onboard",
                   source: str | None = None, weight: float = 1.0, tier: int = 3) -> str:
    lines = [f"    evidence {name} {{", f"        captured  {captured.isoformat()}", f"        tier      {tier}",
             f"        weight    {weight}", f"        {relation}"]
    if source is not None:
        lines.append(f'        source    "{source}"')
    return "\n".join([*lines, "    }", ""])


def compile_text(text: str, folder: Path, store: PolicyStore | None = None) -> tuple[Compiled | None, Session]:
    session = Session(policies=store or PolicyStore())
    (route,) = session.routes_from_text(text, "probe.route", folder)
    return session.compile_route(route), session


def compiled(text: str, folder: Path, store: PolicyStore | None = None) -> Compiled:
    result, session = compile_text(text, folder, store)
    assert result is not None, [f"{d.code}: {d.message}" for d in session.diags.items]
    return result


def item(name: str, *, supports: tuple[str, ...] = (), contradicts: tuple[str, ...] = (),
         source: str | None = None, excerpt: str = "", captured: dt.date = AS_OF) -> Evidence:
    return Evidence(name, source, captured, 3, 1.0, supports, contradicts, excerpt, False, SPAN)


def certify_and_verify(capsys: pytest.CaptureFixture[str], folder: Path, text: str) -> dict[str, object]:
    """Compile ``text`` in ``folder`` with a certificate, check it with the independent
    checker (`pcsc verify-cert`), and return the certificate's route."""
    route = folder / "probe.route"
    route.write_text(text, encoding="utf-8")
    cert = folder / "cert.json"
    policies = ("--policy-path", str(folder / "policies")) if (folder / "policies").is_dir() else ()
    code, _, err = run_cli(capsys, "compile", str(route), *policies, "--cert", str(cert))
    assert code in (0, 3) and cert.is_file(), err
    code, out, err = run_cli(capsys, "verify-cert", str(cert))
    assert code == 0 and "verified" in out + err, out + err
    doc: dict[str, object] = json.loads(cert.read_text(encoding="utf-8"))["routes"][0]
    return doc


def step_value(route: dict[str, object], symbol: str) -> object:
    steps = route["steps"]
    assert isinstance(steps, list)
    (found,) = [s["value"] for s in steps if s["symbol"] == symbol]
    return found.get("f", found.get("v"))


# ---------------------------------------------------------------------- found on the way
def test_a_certificate_of_evidence_without_an_excerpt_verifies(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """An item that writes no excerpt has the empty excerpt (the IR's, the certificate's);
    the checker read the route's block as excerpt None and refused every such
    certificate whose coverage weighs the item."""
    route = certify_and_verify(capsys, tmp_path, route_text(body=evidence_block("call", AS_OF)))
    assert step_value(route, "onboard.W") == 1.25


# ---------------------------------------------------------------------- W's clip bounds
# Gains of 2 put 1 + gc·sat(C) − gk·sat(K) anywhere in (−1, 3): one tier-3 item of weight 1
# has sat = 1/2, so W would be 2 for it and 0 against it, outside venture's [0.3, 1.5].
STEEP = "[reweighting]\ncorroborate_gain = 2.0\ncontradict_gain = 2.0\n"


@pytest.mark.parametrize(("relation", "W"), [("supports onboard", 1.5), ("contradicts onboard", 0.3)])
def test_W_is_clipped_to_the_policys_bounds(tmp_path: Path, capsys: pytest.CaptureFixture[str], relation: str,
                                            W: float) -> None:
    """Kills: either clip of `exact_W` removed, or its bounds swapped."""
    store = child_policy(tmp_path, "steep", STEEP)
    text = route_text("steep@1.0.0", evidence_block("call", AS_OF, relation=relation))
    numbers = compiled(text, tmp_path, store).numbers
    (t,) = numbers.transitions
    assert (t.reweight.sat_c, t.reweight.sat_k) == ((0.5, 0.0) if W > 1 else (0.0, 0.5))
    assert t.reweight.W == W and t.p == 0.45 * W
    # the independent checker recomputes the same clipped W from the route and policy
    assert step_value(certify_and_verify(capsys, tmp_path, text), "onboard.W") == W


def test_W_inside_the_bounds_is_not_clipped(tmp_path: Path) -> None:
    """Kills: a clip that moves a W already inside [w_min, w_max]."""
    policy = child_policy(tmp_path, "steep", STEEP).load_ref("steep@1.0.0").policy
    quarter = Evidence("quarter", None, AS_OF, 3, 0.25, ("t",), (), "", False, SPAN)
    assert reweight("t", (quarter,), AS_OF, policy).W == 1.4  # S = 1/4, sat = 1/5, W = 1 + 2/5
    against = attrs.evolve(quarter, supports=(), contradicts=("t",))
    assert reweight("t", (against,), AS_OF, policy).W == 0.6


# ---------------------------------------------------------------------- de-duplication
def test_the_same_source_on_unrelated_transitions_counts_for_each(tmp_path: Path) -> None:
    """Kills: de-duplication that ignores which transitions the items bear on."""
    policy = PolicyStore().load_ref("venture@1.0.0").policy
    first = item("first", supports=("a",), source="survey.pdf", excerpt="same words")
    other = item("other", supports=("b",), source="Survey.pdf", excerpt="same  words")
    assert exclusions((first, other), AS_OF, policy) == {}
    # the control: bearing on a common transition, the second counts once
    shared = item("shared", supports=("b",), contradicts=("a",), source="survey.pdf")
    assert exclusions((first, shared), AS_OF, policy)["shared"].duplicate_of == "first"
    by_excerpt = item("by_excerpt", supports=("a",), excerpt="Same Words")
    assert exclusions((first, by_excerpt), AS_OF, policy)["by_excerpt"].kind == "duplicate"


# ---------------------------------------------------------------------- buckets
@pytest.mark.parametrize(("scores", "T", "bucket"), [
    ((42, 41, 42), 41.75, "neg"),
    ((42, 42, 42), 42.0, "mix"),  # T == neg_below is not below it
    ((50, 49, 48), 49.25, "mix"),
    ((50, 49, 49), 49.5, "pos"),  # T == pos_from is pos
])
def test_bucket_edges(tmp_path: Path, scores: tuple[int, int, int], T: float, bucket: str) -> None:
    """Kills: `T < neg_below` → `<=`, and `T >= pos_from` → `>` (venture: 42 and 49.5;
    T weighs team 2, market 1, wedge 1)."""
    team, market, wedge = scores
    text = route_text(body=f"    criteria {{ team {team}  market {market}  wedge {wedge} }}\n")
    numbers = compiled(text, tmp_path).numbers
    assert (numbers.criteria_score, numbers.bucket) == (T, bucket)


# ---------------------------------------------------------------------- absent values
ORDERINGS = (">=", "<=", ">", "<")


@pytest.mark.parametrize("op", ORDERINGS)
@pytest.mark.parametrize("absent_on_the_left", [True, False])
def test_an_absent_value_satisfies_no_ordering(op: str, absent_on_the_left: bool) -> None:
    """Kills: an absent value (None) compared with `>=`, `<=`, `>` or `<` counting as true."""
    absent, number = ex.Name("absent", SPAN), ex.Number(0.0, None, False, SPAN)
    left, right = (absent, number) if absent_on_the_left else (number, absent)
    it = Interpreter({"absent": None}, BASE_FUNCTIONS)
    assert it.eval(ex.Compare(op, left, right, SPAN)) is False
    assert it.eval(ex.Compare(op, absent, absent, SPAN)) is False
    # the certificate checker reads an absent value the same way
    assert checker_compare(op, None, 0) is False and checker_compare(op, 0, None) is False
    # equality is still defined: absent is equal to absent and to nothing else
    assert it.eval(ex.Compare("==", left, right, SPAN)) is False
    assert it.eval(ex.Compare("!=", left, right, SPAN)) is True
    assert it.eval(ex.Compare("==", absent, absent, SPAN)) is True


def test_a_route_without_criteria_passes_no_gate_on_its_criteria_score(tmp_path: Path) -> None:
    """The same, end to end: T is absent, so neither `T >= 0` nor `T <= 100` holds."""
    gates = "".join(f'[[gates]]\nid = "criteria-{i}"\nkind = "eligibility"\nrule = "criteria_score {op}"\n\n'
                    for i, op in enumerate((">= 0", "<= 100")))
    store = child_policy(tmp_path, "gated", gates)
    numbers = compiled(route_text("gated@1.0.0", evidence_block("call", AS_OF)), tmp_path, store).numbers
    assert numbers.criteria_score is None
    assert [(g.id, g.passed) for g in numbers.gates] == [
        ("has-admissible-evidence", True), ("criteria-0", False), ("criteria-1", False)]
    assert numbers.eligible is False


# ---------------------------------------------------------------------- gates merged by id
def test_extends_merges_gates_by_id(tmp_path: Path) -> None:
    """Kills: `extends` replacing the parent's `gates` array instead of merging it by id
    (a new id is appended after the parent's gates; a known id is replaced in place)."""
    added = child_policy(tmp_path / "a", "added",
                         '[[gates]]\nid = "two-items"\nkind = "eligibility"\n'
                         'rule = "count(evidence.admissible) >= 2"\n')
    gates = added.load_ref("added@1.0.0").policy.gates
    assert [(g.id, g.rule) for g in gates] == [
        ("has-admissible-evidence", "count(evidence.admissible) >= 1"),
        ("two-items", "count(evidence.admissible) >= 2"),
    ]
    replaced = child_policy(tmp_path / "r", "replaced",
                            '[[gates]]\nid = "has-admissible-evidence"\nkind = "eligibility"\n'
                            'rule = "count(evidence.admissible) >= 3"\n')
    gates = replaced.load_ref("replaced@1.0.0").policy.gates
    assert [(g.id, g.rule) for g in gates] == [("has-admissible-evidence", "count(evidence.admissible) >= 3")]


def test_a_gate_inherited_through_extends_still_judges_the_route(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """End to end, and through the certificate checker's own merge: a route with no
    admissible evidence fails the inherited gate even though the child adds another."""
    store = child_policy(tmp_path, "added", '[[gates]]\nid = "always"\nkind = "eligibility"\nrule = "value >= 0"\n')
    text = route_text("added@1.0.0")
    numbers = compiled(text, tmp_path, store).numbers
    assert [(g.id, g.passed) for g in numbers.gates] == [("has-admissible-evidence", False), ("always", True)]
    assert numbers.eligible is False
    assert step_value(certify_and_verify(capsys, tmp_path, text), "eligible") is False


# ---------------------------------------------------------------------- captured on as_of
@pytest.mark.parametrize("strict", [False, True])
def test_evidence_captured_on_as_of_is_admissible_and_a_day_later_is_not(tmp_path: Path, strict: bool) -> None:
    """Kills: `captured > as_of` → `>=` (in scoring's exclusions and in the E310/W601
    check) and `captured <= as_of` → `<` in `admissible`."""
    store = child_policy(tmp_path, "strict", f"[evidence]\nstrict_point_in_time = {'true' if strict else 'false'}\n")
    on_time = evidence_block("on_time", AS_OF)
    result, session = compile_text(route_text("strict@1.0.0", on_time), tmp_path, store)
    assert [d.code for d in session.diags.items] == []
    assert result is not None and result.numbers.admissible_evidence == ("on_time",)
    assert result.numbers.transitions[0].reweight.W == 1.25  # venture's gains: 1 + 0.5 · 1/2

    late = evidence_block("late", AS_OF + dt.timedelta(days=1))
    result, session = compile_text(route_text("strict@1.0.0", on_time + late), tmp_path, store)
    expected = codes.E310 if strict else codes.W601
    assert [d.code for d in session.diags.items] == [expected.code]
    assert (result is None) == strict
    if result is not None:
        assert result.numbers.admissible_evidence == ("on_time",)
        assert result.numbers.transitions[0].reweight.W == 1.25


def test_exclusion_of_evidence_at_the_as_of_boundary() -> None:
    policy = PolicyStore().load_ref("venture@1.0.0").policy
    on_time = item("on_time", supports=("t",))
    late = item("late", supports=("t",), captured=AS_OF + dt.timedelta(days=1))
    assert admissible(on_time, AS_OF, policy) and not admissible(late, AS_OF, policy)
    out = exclusions((on_time, late), AS_OF, policy)
    assert list(out) == ["late"] and out["late"].kind == "after-as-of"


# ---------------------------------------------------------------------- diagnostics order
def test_diagnostics_sort_by_column_within_a_line() -> None:
    """Kills: `Diagnostics.sorted` keyed on (file, line) without the column."""
    diags = Diagnostics()
    for column in (30, 5, 17):
        diags.add(codes.W603, f"at column {column}", Span("a.route", 3, column, 3, column + 1))
    diags.add(codes.W603, "an earlier line", Span("a.route", 2, 40, 2, 41))
    diags.add(codes.W603, "an earlier file", Span("0.route", 9, 1, 9, 2))
    assert [(d.span.file, d.span.line, d.span.column) for d in diags.sorted()] == [
        ("0.route", 9, 1), ("a.route", 2, 40), ("a.route", 3, 5), ("a.route", 3, 17), ("a.route", 3, 30)]


# ---------------------------------------------------------------------- the transition limit
def chain(n: int) -> str:
    lines = ['route big "b" {', "    as_of 2019-03-01", '    policy "venture@1.0.0"', "    uses venture"]
    lines += [f"    state s{i} {{ developers {i} }}" for i in range(n + 1)]
    lines.append(f"    vision s{n} {{ tam 1M usd capture 5% defensibility 0.5 }}")
    lines += [f'    transition t{i}: s{i} -> s{i + 1} {{ class "devtools/first-users"; '
              f"threshold developers >= {i + 1} }}" for i in range(n)]
    return "\n".join([*lines, "}"]) + "\n"


def lowered(text: str, folder: Path) -> tuple[int, list[str]]:
    session = Session()
    routes = session.routes_from_text(text, "big.route", folder)
    return sum(len(r.transitions) for r in routes), [d.code for d in session.diags.items if d.severity == "error"]


def test_a_route_of_exactly_the_transition_limit_is_lowered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kills: `count > MAX_TRANSITIONS` → `>=`. At the real limit (1,000) in one case;
    the one over it is tests/test_robustness.py's. Then both sides of a small limit."""
    assert lowered(chain(MAX_TRANSITIONS), tmp_path) == (MAX_TRANSITIONS, [])
    monkeypatch.setattr(pcsc.lang.lower.route, "MAX_TRANSITIONS", 3)
    assert lowered(chain(3), tmp_path) == (3, [])
    assert lowered(chain(4), tmp_path) == (0, [codes.E222.code])


# ---------------------------------------------------------------------- ledger payloads
def payload_variants(payload: str) -> list[str]:
    """The same JSON data written otherwise than canonical JSON: spaced, keys unsorted,
    an escaped character, a float written long."""
    data = json.loads(payload)
    fields = data["fields"]
    assert len(fields) > 1
    return [
        json.dumps(data, indent=1, sort_keys=True),
        json.dumps({"fields": dict(reversed(list(fields.items())))}, separators=(",", ":")),
        payload[:-1] + ',"z":"\\u00e9"}',
        payload[:-1] + ',"z":1.50}',
    ]


@pytest.mark.parametrize("variant", range(4))
def test_a_non_canonical_outcome_payload_fails_verify(tmp_path: Path, variant: int) -> None:
    """Kills: verify accepting a payload that is valid JSON but not canonical JSON (the
    outcome side; tests/test_ledger_tamper.py edits a forecast's). Every hash is
    recomputed, so only the canonical check can see it."""
    from tests.test_ledger_tamper import corrupt, rehash_outcome

    path = tmp_path / "l.sqlite"
    with Ledger.open(path, create=True) as ledger:
        ledger.append_outcomes([OutcomeRecord("r", AS_OF, {"fields": {"arr": 1.5, "developers": 9}})])
        assert ledger.verify().problems == ()

    def change(conn: sqlite3.Connection) -> None:
        (payload,) = conn.execute("SELECT payload FROM outcomes WHERE seq = 1").fetchone()
        conn.execute("UPDATE outcomes SET payload = ? WHERE seq = 1", (payload_variants(payload)[variant],))
        rehash_outcome(conn, 1)

    corrupt(path, change)
    with Ledger.open(path, create=False) as ledger:
        problems = [str(p) for p in ledger.verify().problems]
    assert problems == ["outcomes seq 1: the payload is not canonical JSON: it was not written by pcsc"]
