"""Bad input gets a diagnostic with a location and a code, exit 1, never a traceback.

Each case of CASES is the spec route (SPEC_TEXT, the reference route, kept here so
that edits to examples/ cannot move these locations) with one small mutation. The case
states the code, the line and the columns of the first diagnostic's span, a fragment of
its message, the help line where one is expected ("did you mean …"), and the codes of
every diagnostic the mutation produces, so a cascade of follow-on errors fails too.
They run in-process through `pcsc.compiler.session.Session` for speed; a handful of tests run
`python -m pcsc check` end to end (exit code, rendered text, JSON, SARIF 2.1.0).

Golden files: every `tests/data/diagnostics/<name>.route` is checked with
`python -m pcsc check tests/data/diagnostics/<name>.route` from the repo root, and its
whole stderr must equal `<name>.expected.txt` (exit 1 when that text holds an error,
else 0). After an intended change of wording or spans, regenerate them with

    python3 tests/regen_golden_diagnostics.py

and read the diff line by line: an expected file is a claim that this is the right
output for that input.

Finally a hypothesis test feeds random line and character mutations of the spec route
to the in-process pipeline: it may report anything, but it never raises.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pcsc.compiler.session import Session
from pcsc.diagnostics import codes
from pcsc.diagnostics.codes import CODES
from pcsc.diagnostics.model import Diagnostic, Span
from pcsc.policy.load import PolicyStore
from pcsc.render.diagnostics import to_json, to_text
from pcsc.render.sarif import SARIF_SCHEMA, to_sarif
from tests.conftest import ROOT, pin_libraries
from tests.regen_golden_diagnostics import GOLDEN_DIR, golden_cases, render

# When a property fails, hypothesis's pytest plugin may import libcst, whose import
# warns; under `filterwarnings = error` that would hide the real failure.
pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

SPEC_TEXT = """\
# spec/devtools_api.route
route devtools_api "Developer API for SMS" {
    as_of   2012-06-01
    policy  "venture@1.0.0"
    uses    venture

    state garage { developers 0    paying_teams 0    arr 0 usd }
    state wedge  { developers 500 }                  # unlisted fields carry forward
    state bridge { developers 5k   paying_teams 200  arr 1.2M usd }
    state scale  { developers 100k paying_teams 10k  arr 100M usd }

    vision scale {
        tam            10B usd
        capture        10%
        defensibility  0.6
    }

    transition launch: garage -> wedge {
        actor      "two founders"
        mechanism  "public beta of a REST API with free credits"
        asset      "working SMS gateway integration"
        class      "devtools/first-users"
        threshold  developers >= 500
        kill       developers < 100
        horizon    90 days
        cost {
            engineers  2 * 45k usd
            hosting    6 * 1.5k usd
        }
        learning_cost  8k usd
        estimates  0.55 0.7 0.6
        discharges adoption
    }

    transition monetize: wedge -> bridge {
        actor      "founders and first sales hire"
        mechanism  "usage-based pricing for teams"
        asset      "billing and team accounts"
        class      "devtools/first-revenue"
        threshold  developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd
        kill       paying_teams < 20
        horizon    12 months
        cost {
            engineers  4 * 150k usd
            sales      1 * 120k usd
        }
        learning_cost  25k usd
        estimates  0.3 0.45
        discharges adoption, monetization
    }

    transition expand: bridge -> scale {
        actor      "company"
        mechanism  "enterprise tier and carrier partnerships"
        asset      "carrier contracts in 20 countries"
        class      "devtools/scale"
        threshold  developers >= 100k and paying_teams >= 10k and arr >= 100M usd
        kill       arr < 5M usd
        horizon    4 years
        cost {
            company  1 * 60M usd
        }
        estimates  0.15 0.3
        discharges adoption, monetization
    }

    evidence hn_launch {
        source    "news.ycombinator.com/item?id=0000000"
        captured  2012-05-20
        tier      2
        weight    0.8
        supports  launch
        excerpt   "Signed up 300 developers in the first week of the private beta."
    }

    evidence pricing_survey {
        source    "founder survey of 40 beta teams, 2012-05"
        captured  2012-05-28
        tier      2
        weight    0.7
        supports  monetize
        excerpt   "31 of 40 teams said they would pay per message for billing and team accounts."
    }

    evidence carrier_talks {
        source    "letter of intent from a regional carrier"
        captured  2012-04-15
        tier      2
        weight    0.5
        supports  expand
        excerpt   "We intend to negotiate carrier contracts in 20 countries with the company."
    }

    evidence price_war {
        source    "techcrunch.com/2012/05/02/sms-api-price-cut"
        captured  2012-05-02
        tier      3
        weight    0.6
        contradicts monetize
        excerpt   "An incumbent cut per-message prices by half."
    }

    criteria {
        team     70
        market   60
        wedge    55
    }
}
"""

# The reference policy (policies/venture/1.0.0.toml), the base of the custom policies.
POLICY_TEXT = """\
[policy]
id = "venture"
version = "1.0.0"
coverage = "gate"

[priors."devtools/first-users"]
p = 0.45
floor_usd = 50_000
source = "illustrative"

[priors."devtools/first-revenue"]
p = 0.30
floor_usd = 300_000
source = "illustrative"

[priors."devtools/scale"]
p = 0.10
floor_usd = 20_000_000
source = "illustrative"

[evidence]
min_tier = 1
tier_weight = { 1 = 0.5, 2 = 0.8, 3 = 1.0 }
strict_point_in_time = false

[reweighting]
corroborate_gain = 0.5
contradict_gain = 0.5
w_min = 0.3
w_max = 1.5
decay = 0.5

[floors.delta.arr]
points = [[1e5, 5e4], [1e6, 4e5], [1e7, 3e6], [1e8, 2.5e7]]

[uncertainty]
default = 0.25

[criteria]
team = 2.0
market = 1.0
wedge = 1.0

[[gates]]
id = "has-admissible-evidence"
kind = "eligibility"
rule = "count(evidence.admissible) >= 1"
"""


def edit(*pairs: tuple[str, str], base: str = SPEC_TEXT) -> str:
    """Apply text replacements; each `old` must occur exactly once, so a case cannot
    silently stop mutating anything."""
    text = base
    for old, new in pairs:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    return text


def policy(id_: str, version: str, *pairs: tuple[str, str]) -> tuple[str, str, str]:
    """A custom policy: POLICY_TEXT renamed to id_@version, with replacements."""
    text = edit(('id = "venture"', f'id = "{id_}"'), ('version = "1.0.0"', f'version = "{version}"'), base=POLICY_TEXT)
    return id_, version, edit(*pairs, base=text)


def pin(ref: str) -> tuple[str, str]:
    return ('policy  "venture@1.0.0"', f'policy  "{ref}"')


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    code: str
    at: tuple[int, int, int]  # line, column, end column of the first diagnostic
    message: str  # a fragment of its message
    help: str | None = None  # its help line (exactly), where one is expected; None: not checked
    codes: tuple[str, ...] = ()  # the codes of all diagnostics in source order; () means (code,)
    policies: tuple[tuple[str, str, str], ...] = field(default=())  # (id, version, toml) under --policy-path


CASES = [
    # ------------------------------------------------------------ syntax, in the author's words
    Case(
        "syntax-expected-string",
        edit(('actor      "two founders"', "actor      two founders")),
        "PCSC-E101",
        (19, 20, 23),
        'unexpected `two`; expected a quoted string ("...")',
    ),
    Case(
        "syntax-misspelt-keyword",
        edit(('actor      "two founders"', 'actr       "two founders"')),
        "PCSC-E101",
        (19, 9, 13),
        "unexpected `actr`; expected one of `actor`, `asset`, `class`, `cost`",
        "did you mean `actor`?",
    ),
    Case(
        "syntax-unterminated-string",
        edit(('"two founders"', '"two founders')),
        "PCSC-E102",
        (19, 20, 21),
        'unterminated string: a string must close with `"` on the same line',
    ),
    Case(
        "syntax-bad-character",
        edit(("tier      3", "tier      3$")),
        "PCSC-E102",
        (97, 20, 21),
        "unexpected character `$`",
    ),
    Case(
        "syntax-percent-after-a-space",
        edit(("capture        10%", "capture        10 %")),
        "PCSC-E102",
        (14, 27, 28),
        "unexpected character `%`",
        "write `%` right after the number, without a space: `10%`",
    ),
    Case(
        "syntax-file-ends-early",
        SPEC_TEXT.rstrip()[:-1],
        "PCSC-E103",
        (107, 6, 6),
        "the file ends early; expected one of `as_of`, `criteria`, `evidence`",
        "is a closing `}` missing?",
    ),
    Case(
        "syntax-missing-closing-brace",
        edit(("state wedge  { developers 500 }", "state wedge  { developers 500")),
        "PCSC-E101",
        (9, 11, 17),
        "unexpected `bridge`",
        "`state` was read as a name, not as the start of a statement: "
        "is something missing before it (a value, an operand or a closing `}`)?",
    ),
    Case(
        "syntax-unfinished-threshold",
        edit(("threshold  developers >= 500\n", "threshold  developers >=\n")),
        "PCSC-E101",
        (24, 20, 30),
        "unexpected `developers`",
        "`kill` was read as a name, not as the start of a statement: "
        "is something missing before it (a value, an operand or a closing `}`)?",
    ),
    Case(
        "two-statements-on-a-line-in-a-transition",
        edit(('        actor      "two founders"\n        mechanism', '        actor      "two founders" mechanism')),
        "PCSC-E104",
        (19, 35, 91),
        "two statements on one line",
        "start the statement on a new line, or separate them with `;`",
    ),
    Case(
        "two-statements-on-a-line-in-a-route",
        edit(("as_of   2012-06-01\n    policy", "as_of   2012-06-01 policy")),
        "PCSC-E104",
        (3, 24, 47),
        "two statements on one line",
    ),
    Case(
        "two-cost-items-on-a-line",
        edit(("engineers  2 * 45k usd\n            hosting", "engineers  2 * 45k usd  hosting")),
        "PCSC-E104",
        (27, 37, 60),
        "two cost items on one line",
        "put each of the cost items on its own line",
    ),
    # ------------------------------------------------------------ unknown names, with "did you mean"
    Case(
        "unknown-state",
        edit(("launch: garage", "launch: garag")),
        "PCSC-E201",
        (18, 24, 29),
        "unknown state `garag`",
        "did you mean `garage`?",
    ),
    Case(
        "unknown-state-in-vision",
        edit(("vision scale", "vision scal")),
        "PCSC-E201",
        (12, 12, 16),
        "unknown state `scal` in the vision",
        "did you mean `scale`?",
    ),
    Case(
        "unknown-transition",
        edit(("supports  launch", "supports  lanch")),
        "PCSC-E202",
        (72, 19, 24),
        "unknown transition `lanch`",
        "did you mean `launch`?",
    ),
    Case(
        "evidence-where-a-transition-belongs",
        edit(("supports  launch", "supports  hn_launch")),
        "PCSC-E202",
        (72, 19, 28),
        "unknown transition `hn_launch`",
        "`hn_launch` is evidence; `supports` lists transitions",
    ),
    Case(
        "unknown-obligation",
        edit(("discharges adoption\n", "discharges adoptin\n")),
        "PCSC-E204",
        (32, 20, 27),
        "unknown obligation `adoptin`",
        "did you mean `adoption`?",
    ),
    Case(
        "unknown-field-in-a-state",
        edit(("wedge  { developers 500 }", "wedge  { developrs 500 }")),
        "PCSC-E205",
        (8, 20, 29),
        "unknown field `developrs`",
        "did you mean `developers`?",
    ),
    Case(
        "unknown-field-in-a-threshold",
        edit(("threshold  developers >= 500", "threshold  developrs >= 500")),
        "PCSC-E205",
        (23, 20, 29),
        "`developrs` in the threshold is not a field of this route",
        "did you mean `developers`?",
    ),
    Case(
        # one error, not one per field and obligation that the library would have defined
        "unknown-library",
        edit(("uses    venture", "uses    ventur")),
        "PCSC-E206",
        (5, 13, 19),
        "unknown library `ventur`",
        "did you mean `venture`?",
    ),
    Case(
        "unknown-reference-class",
        edit(('"devtools/first-users"', '"devtools/first-user"')),
        "PCSC-E207",
        (22, 20, 41),
        'unknown reference class "devtools/first-user" in policy venture@1.0.0',
        "did you mean `devtools/first-users`?",
    ),
    Case(
        "unknown-criterion",
        edit(("market   60", "markt    60")),
        "PCSC-E208",
        (105, 9, 20),
        "unknown criterion `markt` in policy venture@1.0.0",
        "did you mean `market`?",
    ),
    Case(
        # the misspelt item is reported; "the vision has no `capture`" would be noise
        "unknown-vision-item",
        edit(("capture        10%", "captur         10%")),
        "PCSC-E220",
        (14, 9, 15),
        "unknown vision item `captur`",
        "did you mean `capture`?",
    ),
    Case(
        "unknown-function",
        edit(("kill       developers < 100", "kill       floor(developers) < 100")),
        "PCSC-E218",
        (24, 20, 37),
        "unknown function `floor` in the kill",
        "a kill may use min, max",
    ),
    # ------------------------------------------------------------ the chain
    Case(
        # a fork whose branch never joins the others again (graphs: docs/graphs.md)
        "route-branches",
        edit(("monetize: wedge -> bridge", "monetize: garage -> bridge")),
        "PCSC-E210",
        (18, 16, 22),
        "the branch through `launch` ends at `wedge`, which does not join the route again before its end state "
        "`scale`",
        "every branch of a fork must meet the other branches at a join state: add a transition from `wedge`, "
        "or retarget `launch`",
    ),
    Case(
        "route-merges-and-branches",
        edit(("monetize: wedge -> bridge", "monetize: bridge -> wedge")),
        "PCSC-E212",
        (18, 16, 22),
        "transition `launch` is not reachable from the start state `bridge`",
        codes=("PCSC-E212", "PCSC-E210"),
    ),
    Case(
        "route-has-a-cycle",
        edit(("expand: bridge -> scale", "expand: bridge -> garage")),
        "PCSC-E211",
        (18, 16, 22),
        "the route has a cycle: `garage` -> `wedge` -> `bridge` -> `garage`",
    ),
    Case(
        # a cycle no start state leads into was once reported as two gaps
        "route-has-a-detached-cycle",
        edit(
            ("monetize: wedge -> bridge", "monetize: bridge -> scale"),
            ("expand: bridge -> scale", "expand: scale -> bridge"),
        ),
        "PCSC-E211",
        (35, 16, 24),
        "the route has a cycle: `bridge` -> `scale` -> `bridge`",
    ),
    Case(
        # a duplicate name once made the chain walk stop early and report a cycle
        "duplicate-transition-name-is-not-a-cycle",
        edit(("transition expand:", "transition monetize:")),
        "PCSC-E209",
        (52, 16, 24),
        "transition `monetize` is defined twice",
        "first defined at line 35",
        codes=("PCSC-E209", "PCSC-E202"),
    ),
    Case(
        "vision-is-not-the-final-state",
        edit(("vision scale", "vision bridge")),
        "PCSC-E215",
        (12, 5, 6),
        "the chain ends at `scale` but the vision is for `bridge`",
        "the vision belongs to the final state, `scale`",
    ),
    Case(
        "missing-vision",
        edit(
            (
                "    vision scale {\n        tam            10B usd\n        capture        10%\n"
                "        defensibility  0.6\n    }\n",
                "",
            )
        ),
        "PCSC-E213",
        (2, 7, 19),
        "route `devtools_api` has no vision",
    ),
    Case(
        "missing-as-of",
        edit(("    as_of   2012-06-01\n", "")),
        "PCSC-E214",
        (2, 7, 19),
        "route `devtools_api` has no `as_of` statement",
    ),
    Case(
        "missing-policy-statement",
        edit(('    policy  "venture@1.0.0"\n', "")),
        "PCSC-E214",
        (2, 7, 19),
        "route `devtools_api` has no `policy` statement",
    ),
    Case(
        "missing-class",
        edit(('        class      "devtools/first-users"\n', "")),
        "PCSC-E214",
        (18, 16, 22),
        "transition `launch` has no `class`",
    ),
    Case(
        "field-without-start-value",
        edit(("paying_teams 0    arr 0 usd }", "paying_teams 0 }")),
        "PCSC-E216",
        (7, 11, 17),
        "field `arr` has no value in the start state `garage`",
        "give `arr` its starting value in `state garage`",
    ),
    # ------------------------------------------------------------ duplicates
    Case(
        "duplicate-state",
        edit(
            (
                "    state wedge  { developers 500 }",
                "    state wedge  { developers 500 }\n    state wedge  { developers 600 }",
            )
        ),
        "PCSC-E209",
        (9, 11, 16),
        "state `wedge` is defined twice",
        "first defined at line 8",
    ),
    Case(
        "duplicate-evidence",
        edit(("evidence carrier_talks", "evidence hn_launch")),
        "PCSC-E209",
        (85, 14, 23),
        "evidence `hn_launch` is defined twice",
        "first defined at line 67",
    ),
    Case(
        "duplicate-statement-in-a-transition",
        edit(("horizon    90 days", "horizon    90 days\n        horizon    3 months")),
        "PCSC-E209",
        (26, 9, 28),
        "`horizon` is stated twice in transition `launch`",
        "first stated at line 25",
    ),
    Case(
        "duplicate-statement-in-a-route",
        edit(('    policy  "venture@1.0.0"\n', '    policy  "venture@1.0.0"\n    policy  "venture@1.0.0"\n')),
        "PCSC-E209",
        (5, 5, 28),
        "`policy` is stated twice in route `devtools_api`",
        "first stated at line 4",
    ),
    Case(
        "duplicate-statement-in-evidence",
        edit(("tier      3", "tier      3; tier 2")),
        "PCSC-E209",
        (97, 22, 28),
        "`tier` is stated twice in evidence `price_war`",
        "first stated at line 97",
    ),
    Case(
        # one error, not one per field and obligation of the library
        "duplicate-library",
        edit(("uses    venture", "uses    venture, venture")),
        "PCSC-E209",
        (5, 22, 29),
        "library `venture` is listed twice in `uses`",
    ),
    Case(
        "duplicate-route",
        SPEC_TEXT + SPEC_TEXT.replace("# spec/devtools_api.route\n", ""),
        "PCSC-E209",
        (109, 7, 19),
        "route `devtools_api` is defined twice in this file",
        "first defined at line 2",
    ),
    # ------------------------------------------------------------ types and units
    Case(
        "usd-field-without-unit",
        edit(("arr 1.2M usd }", "arr 1.2M }")),
        "PCSC-E301",
        (9, 58, 62),
        "field `arr` is in usd but the value is a plain number",
        "write the amount with its unit, e.g. `1.2M usd`",
    ),
    Case(
        "count-field-with-unit",
        edit(("developers 5k   paying", "developers 5k usd paying")),
        "PCSC-E301",
        (9, 31, 37),
        "field `developers` is of type count; it takes no unit `usd`",
    ),
    Case(
        "percent-on-a-count",
        edit(("paying_teams 200  arr", "paying_teams 20%  arr")),
        "PCSC-E309",
        (9, 49, 52),
        "field `paying_teams` is of type count; `%` is only for ratios",
    ),
    Case(
        # once also reported "soc2 has no value in the start state"
        "number-for-a-bool-field",
        edit(("arr 0 usd }", "arr 0 usd  soc2 1 }")),
        "PCSC-E301",
        (7, 70, 71),
        "field `soc2` is a bool; expected `true` or `false`",
    ),
    Case(
        "string-for-a-count-field",
        edit(("developers 500 }", 'developers "500" }')),
        "PCSC-E301",
        (8, 31, 36),
        "field `developers` is of type count; a string cannot be its value",
    ),
    Case(
        "unit-mismatch-in-a-threshold",
        edit(("threshold  developers >= 500", "threshold  developers >= 500 usd")),
        "PCSC-E301",
        (23, 34, 41),
        "field `developers` is of type count; it takes no unit `usd`",
    ),
    Case(
        "horizon-without-unit",
        edit(("horizon    90 days", "horizon    90")),
        "PCSC-E301",
        (25, 20, 22),
        "a horizon is a duration; 90 needs a unit: days, months or years",
    ),
    Case(
        "cost-without-usd",
        edit(("engineers  2 * 45k usd", "engineers  2 * 45k")),
        "PCSC-E301",
        (27, 28, 31),
        "cost `engineers` must be in usd",
    ),
    Case(
        "criterion-with-a-unit",
        edit(("team     70", "team     70%")),
        "PCSC-E301",
        (104, 18, 21),
        "criterion `team` is a score from 0 to 100 and takes no unit",
    ),
    # ------------------------------------------------------------ values
    Case(
        "nan",
        edit(("developers 5k   paying", "developers nan  paying")),
        "PCSC-E302",
        (9, 31, 34),
        "`nan` is not a finite number",
    ),
    Case(
        "infinity",
        edit(("tam            10B usd", "tam            inf usd")),
        "PCSC-E302",
        (13, 24, 31),
        "`inf` is not a finite number",
    ),
    Case(
        "number-too-large-for-a-float",
        edit(("company  1 * 60M usd", "company  1 * 1e999 usd")),
        "PCSC-E302",
        (61, 26, 35),
        "`1e999` is not a finite number",
    ),
    Case(
        "negative-cost",
        edit(("hosting    6 * 1.5k usd", "hosting    6 * -1.5k usd")),
        "PCSC-E303",
        (28, 13, 37),
        "cost `hosting` is negative",
    ),
    Case(
        "negative-learning-cost",
        edit(("learning_cost  8k usd", "learning_cost  -8k usd")),
        "PCSC-E303",
        (30, 24, 31),
        "`learning_cost` cannot be negative",
    ),
    Case(
        "estimate-above-one",
        edit(("estimates  0.55 0.7 0.6", "estimates  0.55 1.7 0.6")),
        "PCSC-E304",
        (31, 25, 28),
        "estimate 1.7 is outside [0, 1]",
    ),
    Case(
        "estimate-below-zero",
        edit(("estimates  0.3 0.45", "estimates  -0.3 0.45")),
        "PCSC-E304",
        (48, 20, 24),
        "estimate -0.3 is outside [0, 1]",
    ),
    Case(
        "route-states-p",
        edit(("estimates  0.55 0.7 0.6", "p          0.6")),
        "PCSC-E305",
        (31, 9, 23),
        "a route may not state `p`: probabilities are code-owned",
    ),
    Case(
        "invalid-date-as-of",
        edit(("as_of   2012-06-01", "as_of   2012-13-01")),
        "PCSC-E306",
        (3, 13, 23),
        "`2012-13-01` is not a valid date",
    ),
    Case(
        "date-not-in-iso-form",
        edit(("as_of   2012-06-01", "as_of   2012-6-1")),
        "PCSC-E101",
        (3, 13, 17),
        "unexpected `2012`; expected a date (YYYY-MM-DD)",
    ),
    Case(
        "invalid-date-captured",
        edit(("captured  2012-05-20", "captured  2012-02-30")),
        "PCSC-E306",
        (69, 19, 29),
        "`2012-02-30` is not a valid date",
    ),
    Case(
        "due-date-past-year-9999",
        edit(("horizon    4 years", "horizon    9000 years")),
        "PCSC-E306",
        (52, 16, 22),
        "the due date of `expand` (2012-06-01 plus the horizons so far) is past the year 9999",
    ),
    Case(
        "negative-count",
        edit(("developers 500 }", "developers -5 }")),
        "PCSC-E307",
        (8, 31, 33),
        "field `developers` is a count and cannot be negative",
    ),
    Case(
        "capture-above-one",
        edit(("capture        10%", "capture        150%")),
        "PCSC-E307",
        (14, 24, 28),
        "vision `capture` is 1.5; it must be in [0, 1]",
    ),
    Case(
        "fractional-tier",
        edit(("tier      3", "tier      2.5")),
        "PCSC-E307",
        (97, 19, 22),
        "an evidence tier is a whole number",
    ),
    Case(
        "evidence-weight-above-one",
        edit(("weight    0.8", "weight    1.8")),
        "PCSC-E307",
        (71, 19, 22),
        "evidence weight 1.8 is outside [0, 1]",
    ),
    Case(
        "tier-the-policy-gives-no-weight",
        edit(("tier      3", "tier      4")),
        "PCSC-E307",
        (97, 9, 20),
        "evidence `price_war` is tier 4, which policy venture@1.0.0 gives no weight",
        "tiers with weights: 1, 2, 3",
    ),
    # ------------------------------------------------------------ policies
    Case(
        "unknown-policy",
        edit(pin("ventura@1.0.0")),
        "PCSC-E401",
        (4, 5, 28),
        "no policy `ventura@1.0.0` (looked for ventura/1.0.0.toml in ",
        "did you mean `venture@1.0.0`?",
    ),
    Case(
        "policy-reference-without-version",
        edit(pin("venture")),
        "PCSC-E406",
        (4, 13, 22),
        "policy reference `venture` is not of the form `id@version`",
    ),
    Case(
        "policy-pin-not-a-sha256",
        edit(('"venture@1.0.0"', '"venture@1.0.0" sha256 "abc"')),
        "PCSC-E406",
        (4, 36, 41),
        "a policy pin must be 64 hexadecimal digits (SHA-256)",
    ),
    Case(
        "policy-hash-mismatch",
        edit(('"venture@1.0.0"', '"venture@1.0.0" sha256 "' + "0" * 64 + '"')),
        "PCSC-E402",
        (4, 5, 102),
        "policy venture@1.0.0 has sha256 ",
        "the policy changed since the route was pinned; review it, then update the pin",
    ),
    Case(
        "malformed-policy",
        edit(pin("venture@2.0.0")),
        "PCSC-E403",
        (4, 5, 28),
        "venture/2.0.0.toml: reweighting.decay: expected a number",
        policies=(policy("venture", "2.0.0", ("decay = 0.5", 'decay = "half"')),),
    ),
    Case(
        "policy-extends-a-missing-policy",
        edit(pin("venture@2.0.0")),
        "PCSC-E403",
        (4, 5, 28),
        "venture/2.0.0.toml: policy.extends: no policy `venture@0.9.0`",
        policies=(policy("venture", "2.0.0", ('version = "2.0.0"', 'version = "2.0.0"\nextends = "venture@0.9.0"')),),
    ),
    Case(
        "policy-filed-under-another-version",
        edit(pin("venture@2.0.0")),
        "PCSC-E403",
        (4, 5, 28),
        "venture/2.0.0.toml: policy: declares venture@2.0.1 but is filed as venture@2.0.0",
        policies=(("venture", "2.0.0", policy("venture", "2.0.1")[2]),),
    ),
    # ------------------------------------------------------------ point in time, warnings
    Case(
        "evidence-captured-after-as-of",
        edit(("captured  2012-05-20", "captured  2012-06-20")),
        "PCSC-W601",
        (69, 9, 29),
        "evidence `hn_launch` was captured 2012-06-20, after as_of 2012-06-01: it is inadmissible and excluded",
    ),
    Case(
        "evidence-captured-after-as-of-strict",
        edit(("captured  2012-05-20", "captured  2012-06-20"), pin("strict@1.0.0")),
        "PCSC-E310",
        (69, 9, 29),
        "evidence `hn_launch` was captured 2012-06-20, after as_of 2012-06-01",
        "the policy is strict about point-in-time evidence",
        policies=(policy("strict", "1.0.0", ("strict_point_in_time = false", "strict_point_in_time = true")),),
    ),
    Case(
        "evidence-below-minimum-tier",
        edit(pin("picky@1.0.0")),
        "PCSC-W605",
        (70, 9, 20),
        "evidence `hn_launch` is tier 2, below the policy's minimum tier 3: excluded",
        codes=("PCSC-W605", "PCSC-W605", "PCSC-W605"),
        policies=(policy("picky", "1.0.0", ("min_tier = 1", "min_tier = 3")),),
    ),
    Case(
        "criteria-total",
        edit(("wedge    55\n", "wedge    55\n        total    60\n")),
        "PCSC-W602",
        (107, 9, 20),
        "a stated criteria total is ignored; T is computed from the policy's weights",
    ),
    Case(
        "unused-state",
        edit(("    state scale ", "    state spare  { developers 1 }\n    state scale ")),
        "PCSC-W603",
        (10, 11, 16),
        "state `spare` is not used by any transition",
    ),
    Case(
        "evidence-supports-nothing",
        edit(("        supports  launch\n", "")),
        "PCSC-W604",
        (67, 14, 23),
        "evidence `hn_launch` supports or contradicts no transition",
    ),
    # ------------------------------------------------------------ files
    Case(
        "library-statement-in-a-route-file",
        'library venture version "1.0.0"\n' + SPEC_TEXT,
        "PCSC-E220",
        (1, 1, 32),
        "`library` belongs in an .obl library, not a route file",
    ),
    Case("empty-file", "", "PCSC-E221", (1, 1, 1), "r.route holds no route"),
    Case("only-a-comment", "# nothing here yet\n", "PCSC-E221", (1, 1, 1), "r.route holds no route"),
]


def write_policies(root: Path, policies: tuple[tuple[str, str, str], ...]) -> Path:
    folder = root / "policies"
    for id_, version, text in policies:
        target = folder / id_ / f"{version}.toml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return folder


def run_session(tmp_path: Path, text: str | bytes, policies: tuple[tuple[str, str, str], ...] = ()) -> Session:
    """Load, lower and compile every route of `text` in-process, as `pcsc compile` does."""
    path = tmp_path / "r.route"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    session = Session(policies=PolicyStore([write_policies(tmp_path, policies)]))
    for route in session.load_routes(path, "r.route"):
        session.compile_route(route)
    return session


def describe(diags: list[Diagnostic]) -> str:
    return "\n".join(
        f"{d.code} {d.span.line}:{d.span.column}-{d.span.end_column} {d.message} | {d.help}" for d in diags
    )


def test_the_base_route_is_clean(tmp_path: Path) -> None:
    session = run_session(tmp_path, SPEC_TEXT)
    assert list(session.diags) == []


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_case(case: Case, tmp_path: Path) -> None:
    session = run_session(tmp_path, case.text, case.policies)
    diags = session.diags.sorted()
    assert diags, "no diagnostic at all"
    assert tuple(d.code for d in diags) == (case.codes or (case.code,)), describe(diags)
    first = diags[0]
    line, column, end_column = case.at
    assert (first.code, first.span.file, first.span.line, first.span.column, first.span.end_column) == (
        case.code,
        "r.route",
        line,
        column,
        end_column,
    ), describe(diags)
    assert case.message in first.message, describe(diags)
    if case.help is not None:
        assert first.help == case.help, describe(diags)
    assert session.diags.has_errors == case.code.startswith("PCSC-E")
    for d in diags:
        assert d.code in CODES
        assert d.severity == CODES[d.code].severity


def test_unknown_library_with_errors_is_reported_in_both_files(tmp_path: Path) -> None:
    (tmp_path / "broken.obl").write_text(
        'library broken version "1.0.0"\nfield developers  cnt\nfield arr usd material 10k usd\n', encoding="utf-8"
    )
    pin_libraries(tmp_path / "policies", [tmp_path / "broken.obl"])  # a route uses only what its policy pins
    session = run_session(tmp_path, edit(("uses    venture", "uses    broken"), ('"venture@1.0.0"', '"probe@1.0.0"')))
    diags = session.diags.sorted()
    by_code = {d.code: d for d in diags}
    assert set(by_code) == {"PCSC-E308", "PCSC-E404"}, describe(diags)
    assert by_code["PCSC-E308"].span.file.endswith("broken.obl")
    assert (by_code["PCSC-E308"].span.line, by_code["PCSC-E308"].span.column) == (2, 19)
    assert by_code["PCSC-E308"].message == "unknown field type `cnt`"
    assert by_code["PCSC-E308"].help == "did you mean `count`?"
    assert (by_code["PCSC-E404"].span.file, by_code["PCSC-E404"].span.line) == ("r.route", 5)
    assert "library `broken`" in by_code["PCSC-E404"].message


def test_unreadable_files(tmp_path: Path) -> None:
    session = run_session(tmp_path, b"# caf\xc3\xa9\nroute r {\xff}\n")
    [d] = session.diags.sorted()
    assert (d.code, d.message) == ("PCSC-E105", "r.route is not UTF-8 text: byte 0xFF cannot be decoded")
    assert (d.span.line, d.span.column) == (2, 10)
    session = Session()
    assert session.load_routes(tmp_path / "missing.route", "missing.route") == []
    [d] = session.diags.sorted()
    assert d.code == "PCSC-E105" and d.message.startswith("cannot read missing.route")


def test_semicolon_separates_statements_on_one_line(tmp_path: Path) -> None:
    text = edit(
        ('        actor      "two founders"\n        mechanism', '        actor      "two founders"; mechanism'),
        ("as_of   2012-06-01\n    policy", "as_of   2012-06-01; policy"),
    )
    assert list(run_session(tmp_path, text).diags) == []


# ---------------------------------------------------------------------- the chain, minimal routes
CHAIN = """\
route r {
    as_of   2012-06-01
    policy  "venture@1.0.0"
    uses    venture
    state a { developers 0 }
    state b { developers 500 }
    state c { developers 600 }
    state d { developers 5k }
    vision VISION { tam 1B usd  capture 10%  defensibility 0.5 }
    transition one: a -> b { class "devtools/first-users" }
    transition two: c -> d { class "devtools/first-users" }
}
"""


def test_gap_before_the_piece_that_reaches_the_vision(tmp_path: Path) -> None:
    diags = run_session(tmp_path, CHAIN.replace("VISION", "d")).diags.sorted()
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("PCSC-E212", 10, 16)], describe(diags)
    assert diags[0].message == "transition `one` (`a` -> `b`) is not on the chain from `c` to `d`"
    assert diags[0].help is not None
    assert diags[0].help.startswith("the route has a gap: no transition leads from `b` to `c`")


def test_unreachable_transition_after_the_vision(tmp_path: Path) -> None:
    diags = run_session(tmp_path, CHAIN.replace("VISION", "b")).diags.sorted()
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("PCSC-E212", 11, 16)], describe(diags)
    assert diags[0].message == "transition `two` (`c` -> `d`) is not on the chain from `a` to `b`"


def test_route_without_transitions(tmp_path: Path) -> None:
    text = (
        'route r {\n    as_of 2012-06-01\n    policy "venture@1.0.0"\n    uses venture\n    state a { developers 0 }\n'
    )
    text += "    vision a { tam 1B usd  capture 10%  defensibility 0.5 }\n}\n"
    diags = run_session(tmp_path, text).diags.sorted()
    assert [(d.code, d.span.line, d.span.column) for d in diags] == [("PCSC-E219", 1, 7)], describe(diags)
    assert diags[0].message == "route `r` has no transitions"


# ---------------------------------------------------------------------- all errors in one run
def test_all_independent_errors_of_a_file_are_reported(tmp_path: Path) -> None:
    """Lowering errors do not hide the errors only the policy can find (class, criterion,
    point in time), nor each other."""
    text = edit(
        ("wedge  { developers 500 }", "wedge  { developrs 500 }"),
        ('"devtools/first-users"', '"devtools/first-user"'),
        ("hosting    6 * 1.5k usd", "hosting    6 * -1.5k usd"),
        ("estimates  0.55 0.7 0.6", "estimates  0.55 1.7 0.6"),
        ("captured  2012-05-20", "captured  2012-06-20"),
        ("captured  2012-05-28", "captured  2012-02-30"),
        ("market   60", "markt    60"),
        ("horizon    4 years", "horizon    9000 years"),
    )
    diags = run_session(tmp_path, text).diags.sorted()
    assert [(d.code, d.span.line) for d in diags] == [
        ("PCSC-E205", 8),
        ("PCSC-E207", 22),
        ("PCSC-E303", 28),
        ("PCSC-E304", 31),
        ("PCSC-E306", 52),
        ("PCSC-W601", 69),
        ("PCSC-E306", 78),
        ("PCSC-E208", 105),
    ], describe(diags)


def test_errors_of_several_routes_and_files_are_all_reported(tmp_path: Path) -> None:
    one = tmp_path / "one.route"
    one.write_text(edit(("launch: garage", "launch: garag")), encoding="utf-8")
    two = tmp_path / "two.route"
    two.write_text(
        edit(("estimates  0.3 0.45", "estimates  -0.3 0.45"))
        + SPEC_TEXT.replace("route devtools_api", "route second")
        .replace("# spec/devtools_api.route\n", "")
        .replace("market   60", "markt    60"),
        encoding="utf-8",
    )
    session = Session()
    for path in (one, two):
        for route in session.load_routes(path, path.name):
            session.compile_route(route)
    got = [(d.span.file, d.code, d.span.line) for d in session.diags.sorted()]
    assert got == [("one.route", "PCSC-E201", 18), ("two.route", "PCSC-E304", 48), ("two.route", "PCSC-E208", 212)]


# ---------------------------------------------------------------------- rendering
def test_text_rendering_has_location_source_line_caret_and_help(tmp_path: Path) -> None:
    session = run_session(tmp_path, edit(('"devtools/first-users"', '"devtools/first-user"')))
    assert to_text(session.diags.sorted(), session.sources) == (
        'r.route:22:20: error: unknown reference class "devtools/first-user" in policy venture@1.0.0 [PCSC-E207]\n'
        '  22 |         class      "devtools/first-user"\n'
        "                          ^~~~~~~~~~~~~~~~~~~~~\n"
        "  help: did you mean `devtools/first-users`?"
    )


def test_text_rendering_of_a_span_over_several_lines_and_of_a_tab() -> None:
    source = 'route r {\n\tevidence hn_launch {\n        tier 2\n    }\n}\n'
    message = "evidence `hn_launch` supports or contradicts no transition"
    d = Diagnostic.of(codes.W604, message, Span("r.route", 2, 2, 4, 6))
    assert to_text([d], {"r.route": source}) == (
        "r.route:2:2: warning: evidence `hn_launch` supports or contradicts no transition [PCSC-W604]\n"
        "   2 |  evidence hn_launch {\n"
        + " " * 8  # the gutter "   2 | " and the tab, shown as one space
        + "^" + "~" * (len(" evidence hn_launch {") - 2)  # from column 2 to the end of the span's first line
    )


def test_json_shape(tmp_path: Path) -> None:
    session = run_session(tmp_path, edit(("launch: garage", "launch: garag")))
    [d] = session.diags.sorted()
    assert to_json(d) == {
        "code": "PCSC-E201",
        "severity": "error",
        "message": "unknown state `garag`",
        "file": "r.route",
        "line": 18,
        "column": 24,
        "end_line": 18,
        "end_column": 29,
        "help": "did you mean `garage`?",
    }


def test_sarif_shape(tmp_path: Path) -> None:
    text = edit(("launch: garage", "launch: garag"), ("captured  2012-05-28", "captured  2012-06-28"))
    session = run_session(tmp_path, text)
    log = to_sarif(session.diags.sorted())
    assert log["version"] == "2.1.0"
    assert log["$schema"] == SARIF_SCHEMA
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "pcsc"
    assert [r["id"] for r in driver["rules"]] == ["PCSC-E201", "PCSC-W601"]
    assert driver["rules"][1]["defaultConfiguration"] == {"level": "warning"}
    assert [(r["ruleId"], r["ruleIndex"], r["level"]) for r in run["results"]] == [
        ("PCSC-E201", 0, "error"),
        ("PCSC-W601", 1, "warning"),
    ]
    first = run["results"][0]
    assert first["message"]["text"] == "unknown state `garag`\nhelp: did you mean `garage`?"
    [location] = first["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": "r.route", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 18, "startColumn": 24, "endLine": 18, "endColumn": 29},
    }


# ---------------------------------------------------------------------- end to end
def pcsc(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "pcsc", *argv], capture_output=True, text=True, cwd=cwd, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


E2E = [
    (
        "syntax",
        edit(('actor      "two founders"', 'actr       "two founders"')),
        "r.route:19:9: error: unexpected `actr`",
    ),
    ("unknown-state", edit(("launch: garage", "launch: garag")), "r.route:18:24: error: unknown state `garag`"),
    ("route-states-p", edit(("estimates  0.55 0.7 0.6", "p          0.6")), "r.route:31:9: error: a route may not"),
    ("nan", edit(("developers 5k   paying", "developers nan  paying")), "r.route:9:31: error: `nan` is not a finite"),
    ("empty", "", "r.route:1:1: error: r.route holds no route [PCSC-E221]"),
]


@pytest.mark.parametrize(("name", "text", "first_line"), E2E, ids=[e[0] for e in E2E])
def test_check_end_to_end_exits_1_with_a_rendered_diagnostic(
    name: str, text: str, first_line: str, tmp_path: Path
) -> None:
    (tmp_path / "r.route").write_text(text, encoding="utf-8")
    proc = pcsc("check", "r.route", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith(first_line), proc.stderr
    assert proc.stdout == ""


def test_check_end_to_end_text(tmp_path: Path) -> None:
    (tmp_path / "r.route").write_text(edit(("supports  launch", "supports  lanch")), encoding="utf-8")
    proc = pcsc("check", "r.route", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == (
        "r.route:72:19: error: unknown transition `lanch` [PCSC-E202]\n"
        "  72 |         supports  lanch\n"
        "                         ^~~~~\n"
        "  help: did you mean `launch`?\n"
    )


def test_check_end_to_end_warning_only_exits_0(tmp_path: Path) -> None:
    # late contradicting evidence: excluded (a warning), and no obligation needed it
    (tmp_path / "r.route").write_text(edit(("captured  2012-05-02", "captured  2012-06-20")), encoding="utf-8")
    proc = pcsc("check", "r.route", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("r.route:96:9: warning: evidence `price_war` was captured 2012-06-20")
    assert proc.stderr.endswith("ok: 1 route checked\n")


def test_check_end_to_end_json_and_sarif(tmp_path: Path) -> None:
    (tmp_path / "r.route").write_text(edit(("estimates  0.3 0.45", "estimates  -0.3 0.45")), encoding="utf-8")
    proc = pcsc("check", "--format", "json", "r.route", cwd=tmp_path)
    assert proc.returncode == 1
    body = json.loads(proc.stdout)
    assert body["diagnostics"] == [
        {
            "code": "PCSC-E304",
            "severity": "error",
            "message": "estimate -0.3 is outside [0, 1]",
            "file": "r.route",
            "line": 48,
            "column": 20,
            "end_line": 48,
            "end_column": 24,
        }
    ]
    assert [i["path"] for i in body["inputs"]] == ["r.route"]
    proc = pcsc("check", "--format", "sarif", "r.route", cwd=tmp_path)
    assert proc.returncode == 1
    log = json.loads(proc.stdout)
    assert log["version"] == "2.1.0"
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "PCSC-E304"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 48


def test_policy_pin_end_to_end(tmp_path: Path) -> None:
    """The pin printed by `pcsc policy hash` passes; any other 64-hex pin is E402."""
    proc = pcsc("policy", "hash", "venture@1.0.0", cwd=ROOT)
    assert proc.returncode == 0
    digest = proc.stdout.split()[0]
    assert len(digest) == 64
    (tmp_path / "r.route").write_text(edit(('"venture@1.0.0"', f'"venture@1.0.0" sha256 "{digest}"')), encoding="utf-8")
    proc = pcsc("check", "r.route", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (0, "ok: 1 route checked\n")
    wrong = digest[::-1]
    (tmp_path / "r.route").write_text(edit(('"venture@1.0.0"', f'"venture@1.0.0" sha256 "{wrong}"')), encoding="utf-8")
    proc = pcsc("check", "r.route", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        f"r.route:4:5: error: policy venture@1.0.0 has sha256 {digest}, but the route pins {wrong} [PCSC-E402]\n"
    )


def test_malformed_policy_end_to_end(tmp_path: Path) -> None:
    write_policies(tmp_path, (policy("venture", "2.0.0", ("decay = 0.5", 'decay = "half"')),))
    (tmp_path / "r.route").write_text(edit(pin("venture@2.0.0")), encoding="utf-8")
    proc = pcsc("check", "--policy-path", "policies", "r.route", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "r.route:4:5: error: policies/venture/2.0.0.toml: reweighting.decay: expected a number [PCSC-E403]\n"
    )


def test_compile_end_to_end_reports_the_same_errors(tmp_path: Path) -> None:
    (tmp_path / "r.route").write_text(edit(("market   60", "markt    60")), encoding="utf-8")
    proc = pcsc("compile", "r.route", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.startswith("r.route:105:9: error: unknown criterion `markt` in policy venture@1.0.0 [PCSC-E208]")
    assert proc.stdout == ""


# ---------------------------------------------------------------------- golden files
GOLDEN = golden_cases()


def test_golden_files_are_present() -> None:
    assert len(GOLDEN) >= 4
    for route in GOLDEN:
        assert route.with_suffix(".expected.txt").is_file(), (
            f"run `python3 tests/regen_golden_diagnostics.py` ({route})"
        )
    stale = {p.name.removesuffix(".expected.txt") for p in GOLDEN_DIR.glob("*.expected.txt")} - {p.stem for p in GOLDEN}
    assert not stale, f"expected files without a route: {sorted(stale)}"


@pytest.mark.parametrize("route", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_diagnostics(route: Path) -> None:
    expected = route.with_suffix(".expected.txt").read_text(encoding="utf-8")
    code, stderr = render(route)
    assert "Traceback" not in stderr
    assert stderr == expected, (
        f"run `python3 tests/regen_golden_diagnostics.py` if the change is intended ({route.name})"
    )
    assert code == (1 if ": error: " in expected else 0)


# ---------------------------------------------------------------------- random mutations never raise
TOKENS = [
    "{",
    "}",
    "->",
    ":",
    ";",
    "usd",
    "%",
    "nan",
    "inf",
    "-",
    "*",
    "p 0.5",
    "state",
    "transition",
    "vision",
    "evidence",
    "1e999",
    "2012-02-30",
    '"',
    "#",
    "and",
    "(",
    ")",
    "0",
    "k",
    "99999 years",
    "none",
    "true",
]

LINES = SPEC_TEXT.split("\n")


@st.composite
def mutated_spec(draw: st.DrawFn) -> str:
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "drop-char", "insert", "replace-char", "swap-words"]))
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), line)
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "drop-char" and line:
            k = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:k] + line[k + 1 :]
        elif op == "insert":
            k = draw(st.integers(0, len(line)))
            lines[i] = line[:k] + draw(st.sampled_from(TOKENS)) + line[k:]
        elif op == "replace-char" and line:
            k = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:k] + draw(st.characters(min_codepoint=1, max_codepoint=0x2FF)) + line[k + 1 :]
        elif op == "swap-words":
            words = line.split(" ")
            a, b = draw(st.integers(0, len(words) - 1)), draw(st.integers(0, len(words) - 1))
            words[a], words[b] = words[b], words[a]
            lines[i] = " ".join(words)
        if not lines:
            lines = [""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(max_examples=150, deadline=None)
@given(text=mutated_spec())
def test_random_mutations_never_raise(text: str, fuzz_dir: Path) -> None:
    path = fuzz_dir / "r.route"
    path.write_text(text, encoding="utf-8")
    session = Session()
    routes = session.load_routes(path, "r.route")
    compiled = [session.compile_route(r) for r in routes]
    diags = session.diags.sorted()
    for d in diags:
        assert d.code in CODES
        assert d.span.line >= 1 and d.span.column >= 1
        assert (d.span.end_line, d.span.end_column) >= (d.span.line, d.span.column)
    to_text(diags, session.sources)
    to_sarif(diags)
    json.dumps([to_json(d) for d in diags])
    # errors are values: whatever did not compile says why
    if not session.diags.has_errors:
        assert routes and all(c is not None for c in compiled), describe(diags)


def test_coloured_diagnostics_on_a_terminal_are_never_wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import io

    from pcsc.base.config import Config
    from pcsc.cli.context import Context

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "40")
    long = Diagnostic.of(codes.E207, "unknown reference class " + "x" * 80, Span("r.route", 1, 1, 1, 2))
    out = Terminal()
    ctx = Context(argparse.Namespace(), Config(), stderr=out)
    ctx.session().sources["r.route"] = "route r {\n"
    ctx.show_diagnostics([long])
    first = out.getvalue().splitlines()[0]
    assert "\x1b[" in first  # coloured
    assert first.endswith("[PCSC-E207]")  # the whole header on one line, whatever the width


@pytest.mark.parametrize(
    ("mode", "expected"),
    [(None, "PCSC-E501"), ("gate", "PCSC-E501"), ("dock", "PCSC-W501"), ("off", None)],
    ids=["policy", "gate", "dock", "off"],
)
def test_check_reports_each_uncovered_change_by_the_coverage_mode(mode: str | None, expected: str | None) -> None:
    # the reference route spliced at seam 1: launch claims three changes it never measured
    text = (GOLDEN_DIR / "uncovered.route").read_text(encoding="utf-8")
    session = Session(coverage_mode=mode)  # type: ignore[arg-type]
    for route in session.routes_from_text(text, "u.route", GOLDEN_DIR):
        session.check_route(route)
    coverage = [d for d in session.diags if d.code in ("PCSC-E501", "PCSC-W501")]
    assert [d.code for d in coverage] == ([expected] * 3 if expected else [])
    for d in coverage:
        assert (d.span.line, d.span.column, d.span.end_column) == (21, 16, 22)  # `launch` in its header
        assert d.help is not None and "obligations/venture.obl:" in d.help
