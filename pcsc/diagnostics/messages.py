"""The message of every diagnostic, beside its code: one named template per way a code
is reported, with its help, so the words a user reads are written once, here.

A site reports `diags.diag(E209_ROUTE_TWICE, span, name=..., line=...)` (or builds a
value with `diag(...)`): it supplies the named fields, never the sentence. A template
is a `str.format` string whose fields are plain names (a format spec such as `{count:,}`
is allowed; `{a.b}`, `{a[0]}` and `{}` are not). Every field of a message and its help
must be supplied, and nothing else: a missing or unknown field is a TypeError, and
`tests/test_messages.py` checks every site's keywords against its template.

A help that names a field given as None is left out; ``otherwise`` is the help then
(`suggest` gives a "did you mean" line or None: `help="{suggestion}"`,
`otherwise="the types are {types}"`).

A constant is named after its code and what it reports (`E209_ROUTE_TWICE`); `MESSAGES`
maps each name to its message, in the order written here.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

import attrs

from pcsc.diagnostics import codes
from pcsc.diagnostics.codes import Code
from pcsc.diagnostics.model import Finding, Span


def template_fields(template: str | None) -> tuple[str, ...]:
    """The field names of ``template``, in order, once each."""
    if template is None:
        return ()
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    return tuple(dict.fromkeys(names))


@attrs.frozen
class Message:
    code: Code
    text: str
    help: str | None = None
    otherwise: str | None = None  # the help when a field the help names is None

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(template_fields(self.text) + template_fields(self.help) + template_fields(self.otherwise))

    def render(self, fields: Mapping[str, object]) -> tuple[str, str | None]:
        """The message and help with ``fields`` filled in."""
        given = set(fields)
        if given != self.fields:
            missing, unknown = sorted(self.fields - given), sorted(given - self.fields)
            raise TypeError(f"{self.code.code} {self.text!r}: missing fields {missing}, unknown fields {unknown}")
        text = self.text.format_map(fields)
        help_text = self.help
        if help_text is not None and any(fields[name] is None for name in template_fields(help_text)):
            help_text = self.otherwise
        return text, None if help_text is None else help_text.format_map(fields)


def message(code: Code, text: str, help: str | None = None, otherwise: str | None = None) -> Message:
    return Message(code, text, help, otherwise)


def phrase(msg: Message, **fields: object) -> str:
    """The text of ``msg`` alone, for an exception that a site reports inside another
    message (an overflow's phrase inside `E311_IN_ROUTE`)."""
    assert msg.help is None, "a phrase has no help of its own"
    return msg.render(fields)[0]


def diag(msg: Message, span: Span, **fields: object) -> Finding:
    """The diagnostic ``msg`` reports at ``span``, its fields filled in."""
    text, help_text = msg.render(fields)
    return Finding.of(msg.code, text, span, help_text)


# ---------------------------------------------------------------------- syntax and files
E101_UNEXPECTED = message(codes.E101, "unexpected {token}; expected {expected}")
E101_KEYWORD_READ_AS_NAME = message(
    codes.E101,
    "unexpected {token}; expected {expected}",
    "`{keyword}`{where} was read as a name, not as the start of a statement: "
    "is something missing before it (a value, an operand or a closing `}}`)?",
)
E101_MISSPELT = message(codes.E101, "unexpected {token}; expected {expected}", "did you mean `{keyword}`?")
E101_OTHER = message(codes.E101, "{error}")
E102_UNTERMINATED_STRING = message(
    codes.E102, 'unterminated string: a string must close with `"` on the same line'
)
E102_UNEXPECTED_CHARACTER = message(codes.E102, "unexpected character {char}{expected}")
E102_SPACE_BEFORE_PERCENT = message(
    codes.E102,
    "unexpected character {char}{expected}",
    "write `%` right after the number, without a space: `10%`",
)
E102_NOT_ASCII = message(
    codes.E102,
    "unexpected character {char}{expected}",
    "U+{point:04X} is {name}{like}; names are ASCII letters, digits and `_`",
)
E103_EARLY_END = message(codes.E103, "the file ends early; expected {expected}")
E103_EARLY_END_BRACE = message(
    codes.E103, "the file ends early; expected {expected}", "is a closing `}}` missing?"
)
E104_TWO_STATEMENTS = message(
    codes.E104, "two statements on one line", "start the statement on a new line, or separate them with `;`"
)
E104_TWO_ITEMS = message(codes.E104, "two {what} on one line", "put each of the {what} on its own line")
E105_CANNOT_READ = message(codes.E105, "cannot read {file}: {reason}")
E105_NOT_UTF8 = message(
    codes.E105, "{file} is not UTF-8 text: byte 0x{byte:02X} cannot be decoded", "save the file as UTF-8"
)
E105_CANNOT_USE = message(codes.E105, "cannot use {path}: {reason}")
E105_CANNOT_READ_THE = message(codes.E105, "cannot read the {what}: {reason}")
E105_NOTHING_TO_BLIND = message(codes.E105, "no route files to blind")
E105_BLINDED_NAMES_CLASH = message(
    codes.E105,
    "its blinded copy would be {target}, as {clash}'s is: their names differ only in the case of a masked cue; "
    "rename one",
)
E106_NO_FILES = message(
    codes.E106,
    "no {kinds} files in the folder {folder}",
    "route files end in .route{libraries}; folders are searched recursively",
)
E108_CANNOT_WRITE = message(codes.E108, "cannot write {path}: {reason}")
E108_CANNOT_WRITE_THE = message(codes.E108, "cannot write the {what}: {reason}")
E108_CANNOT_CREATE_FOLDER = message(codes.E108, "{flag}: cannot create the folder: {reason}")
E109_UNKNOWN_UNIT = message(
    codes.E109,
    "unknown unit `{word}`; units are {units}",
    "amounts are in usd, durations in days, months or years; if `{word}` is a field, give it a value",
)
E109_HORIZON_NOT_WHOLE = message(
    codes.E109,
    "unknown unit `{word}` for a horizon: a horizon is a number of days, months or years",
    "a horizon is a whole number of days, months or years",
)
E109_HORIZON_WEEKS = message(
    codes.E109,
    "unknown unit `{word}` for a horizon: a horizon is a number of days, months or years",
    "write `horizon {days} days`",
)
E109_HORIZON_UNIT = message(
    codes.E109,
    "unknown unit `{word}` for a horizon: a horizon is a number of days, months or years",
    "write `horizon {number} days`, `{number} months` or `{number} years`",
)
E110_NUL = message(codes.E110, "a NUL character (U+0000) in the text", "remove it: it is not text")
E111_TOO_DEEP = message(
    codes.E111,
    "an expression nests operators more than {limit} deep",
    "split the condition, or write it with fewer nested operators",
)
E112_TOO_LARGE = message(codes.E112, "{file}: {size}", "split it into several files")
E113_CANNOT_CLEAR = message(
    codes.E113,
    "the cache cannot be cleared: {reason}",
    "set XDG_CACHE_HOME to a folder of your own, or PCSC_NO_CACHE=1 to use none",
)
E126_LINE_TOO_LONG = message(
    codes.E126,
    "line {line} is {length:,} characters long; the limit is {limit:,}{more}",
    "break it into several lines: a statement, a cost item or a condition of `and` can each have its own",
)


# ---------------------------------------------------------------------- names and structure
E201_UNKNOWN_STATE = message(codes.E201, "unknown state `{state}`", "{suggestion}")
E201_UNKNOWN_VISION_STATE = message(codes.E201, "unknown state `{state}` in the vision", "{suggestion}")
E202_UNKNOWN_TRANSITION = message(codes.E202, "unknown transition `{transition}`", "{hint}")
E204_UNKNOWN_OBLIGATION = message(codes.E204, "unknown obligation `{obligation}`", "{suggestion}")
E205_UNKNOWN_FIELD = message(codes.E205, "unknown field `{field}`", "{hint}")
E205_NOT_A_ROUTE_FIELD = message(codes.E205, "`{field}` in the {kind} is not a field of this route", "{hint}")
E205_COVERS_UNKNOWN_FIELD = message(
    codes.E205,
    "obligation `{obligation}` covers unknown field `{field}`",
    "{suggestion}",
)
E206_NAME_TOO_LONG = message(
    codes.E206,
    "`{start}…` ({length:,} characters) is not a library name",
    "a library name is at most {limit} characters",
)
E206_NOT_A_NAME = message(
    codes.E206,
    "`{name}` is not a library name",
    "library names are lowercase letters, digits and `_`: did you mean `{lower}`?",
)
E206_UNKNOWN_LIBRARY = message(
    codes.E206,
    "unknown library `{name}`",
    "{suggestion}",
    "looked for {name}.obl in the route's folder, --lib-path and the shipped obligations/",
)
E206_PINNED_NOT_FOUND = message(
    codes.E206,
    "policy {policy} pins library `{name}`, but no {name}.obl is on the library path or shipped",
    "put the library on --lib-path (or `lib_path` of pcsc.toml) so that its pin can be checked",
)
E207_UNKNOWN_CLASS = message(codes.E207, 'unknown reference class "{ref_class}" in policy {policy}', "{suggestion}")
E208_UNKNOWN_CRITERION = message(
    codes.E208, "unknown criterion `{criterion}` in policy {policy}", "{suggestion}", "the policy weighs {weighed}"
)
E209_DEFINED_TWICE = message(codes.E209, "{kind} `{name}` is defined twice", "first defined at line {line}")
E209_ROUTE_STATEMENT_TWICE = message(
    codes.E209, "`{keyword}` is stated twice in route `{route}`", "first stated at line {line}"
)
E209_USES_TWICE = message(codes.E209, "library `{name}` is listed twice in `uses`")
E209_FIELD_IN_TWO_LIBRARIES = message(codes.E209, "field `{name}` is defined by both `{first}` and `{second}`")
E209_OBLIGATION_IN_TWO_LIBRARIES = message(
    codes.E209,
    "obligation `{name}` is defined by both `{first}` and `{second}`",
)
E209_STATE_FIELD_TWICE = message(codes.E209, "field `{field}` is given twice in state `{state}`")
E209_TRANSITION_STATEMENT_TWICE = message(
    codes.E209, "`{keyword}` is stated twice in transition `{transition}`", "first stated at line {line}"
)
E209_VISION_ITEM_TWICE = message(codes.E209, "`{key}` is stated twice in the vision")
E209_EVIDENCE_STATEMENT_TWICE = message(
    codes.E209, "`{keyword}` is stated twice in evidence `{evidence}`", "first stated at line {line}"
)
E209_CRITERION_TWICE = message(codes.E209, "criterion `{name}` is stated twice")
E209_LIBRARY_TWICE = message(codes.E209, "the library is declared twice")
E209_LIBRARY_ITEM_TWICE = message(codes.E209, "`{name}` is defined twice", "first defined at line {line}")
E209_ROUTE_TWICE = message(codes.E209, "route `{name}` is defined twice in this file", "first defined at line {line}")
E210_BRANCHES = message(
    codes.E210,
    "route branches at state `{state}`: both `{first}` and `{second}` leave it",
    "competing routes are separate `route` blocks",
)
E210_MERGES = message(
    codes.E210,
    "route merges at state `{state}`: both `{first}` and `{second}` enter it",
    "a route is one chain; competing routes are separate `route` blocks",
)
E210_BRANCH_NEVER_JOINS = message(
    codes.E210,
    "the branch through `{transition}` ends at `{state}`, which does not join the route again "
    "before its end state `{end}`",
    "every branch of a fork must meet the other branches at a join state: add a transition "
    "from `{state}`, or retarget `{transition}`",
)
E210_NOT_NESTED = message(
    codes.E210,
    "the forks and joins of the route do not nest: the branches through {states} cross into other branches",
    "every fork's branches must meet again at one join state before they meet any other branch "
    "(nested forks are fine); give each branch its own steps, or join all the branches at one state",
)
E211_CYCLE = message(
    codes.E211,
    "the route has a cycle: {loop}",
    "a route runs from its start state to its vision state without returning; retarget or remove one of {transitions}",
)
E212_OFF_THE_CHAIN = message(
    codes.E212,
    "{what} ({steps}) {verb} not on the chain from `{start}` to `{end}`",
    "the route has a gap: no transition leads from `{gap_from}` to `{gap_to}`; "
    "each transition must start where the previous one ends",
)
E212_UNREACHABLE = message(
    codes.E212,
    "{what} not reachable from the start state `{start}`",
    "a route has one start state; every transition must start at `{start}` or at a state "
    "an earlier transition leads to",
)
E213_NO_VISION = message(
    codes.E213,
    "route `{route}` has no vision",
    "add `vision STATE {{ tam … capture … defensibility … }}` for the final state",
)
E214_NO_ROUTE_STATEMENT = message(codes.E214, "route `{route}` has no `{keyword}` statement")
E214_NO_CLASS = message(
    codes.E214,
    "transition `{transition}` has no `class`",
    'add `class "<reference class>"`: its prior comes from the policy',
)
E214_NO_VISION_ITEM = message(codes.E214, "the vision has no `{key}`")
E214_NO_EVIDENCE_STATEMENT = message(codes.E214, "evidence `{evidence}` has no `{keyword}`")
E214_NO_LIBRARY_HEADER = message(codes.E214, 'an obligation library must start with `library NAME version "X"`')
E215_CHAIN_ENDS_ELSEWHERE = message(
    codes.E215,
    "the chain ends at `{end}` but the vision is for `{vision}`",
    "the vision belongs to the final state, `{end}`",
)
E215_ROUTE_ENDS_ELSEWHERE = message(
    codes.E215,
    "the route ends at `{end}` but the vision is for `{vision}`",
    "the vision belongs to the final state, `{end}`",
)
E216_NO_START_VALUE = message(
    codes.E216,
    "field `{field}` has no value in the start state `{state}`",
    "give `{field}` its starting value in `state {state}`",
)
E217_UNKNOWN_REQUIRE_NAME = message(
    codes.E217, "unknown name `{name}` in a `require` line", "{suggestion}", "a require line may use {names}"
)
E218_UNKNOWN_CONDITION_FUNCTION = message(
    codes.E218, "unknown function `{function}` in the {kind}", "a {kind} may use {functions}"
)
E218_UNKNOWN_REQUIRE_FUNCTION = message(
    codes.E218, "unknown function `{function}` in a `require` line", "{suggestion}", "the functions are {functions}"
)
E219_NO_TRANSITIONS = message(
    codes.E219,
    "route `{route}` has no transitions",
    "a route is a chain of at least one `transition A: S -> T {{ … }}`",
)
E220_UNKNOWN_VISION_ITEM = message(
    codes.E220, "unknown vision item `{key}`", "{suggestion}", "a vision states {fields}"
)
E220_ROUTE_IN_LIBRARY = message(
    codes.E220,
    "a route cannot stand in an obligation library",
    "routes go in .route files",
)
E220_PAYOFF_ON_START = message(
    codes.E220,
    "state `{state}` is where the route starts: a payoff there is never credited",
    "a payoff is credited when a transition reaches its state; move it to the state that earns it",
)
E220_LIBRARY_ITEM_IN_ROUTE_FILE = message(codes.E220, "`{form}` belongs in an .obl library, not a route file")
E221_NO_ROUTE = message(
    codes.E221, "{file} holds no route", 'a route file holds one or more `route NAME "title" {{ … }}` blocks'
)
E222_TOO_MANY_TRANSITIONS = message(
    codes.E222,
    "route `{route}` has {count:,} transitions; the limit is {limit:,}",
    "split the route into shorter routes",
)
E223_TOO_MANY_ROUTES = message(
    codes.E223, "{file} holds {count:,} routes; the limit is {limit:,}", "split it into several files"
)
E224_JOIN_CONFLICT = message(
    codes.E224,
    "join state `{join}` gets `{field}` = {first:g} from the branch through `{first_branch}` and "
    "= {second:g} from the branch through `{second_branch}`",
    "write the joined value of `{field}` in `state {join}`",
)


# ---------------------------------------------------------------------- types, units and values
E301_BOOL_EXPECTED = message(codes.E301, "{what} is a bool; expected `true` or `false`")
E301_NOT_USD = message(
    codes.E301, "{what} is in usd but the value is {value}", "write the amount with its unit, e.g. `1.2M usd`"
)
E301_TAKES_NO_UNIT = message(codes.E301, "{what} is of type {type}; it takes no unit `{unit}`")
E301_BOOL_FOR_TYPE = message(codes.E301, "{what} is of type {type}; `{value}` is a bool")
E301_WRONG_LITERAL = message(codes.E301, "{what} is of type {type}; a {kind} cannot be its value")
E301_HORIZON_UNIT = message(codes.E301, "a horizon is a duration; {value:g} needs a unit: days, months or years")
E301_COUNT_UNIT = message(codes.E301, "cost `{cost}`: the count in `n * amount` takes no unit")
E301_COST_NOT_USD = message(codes.E301, "cost `{cost}` must be in usd", "write e.g. `2 * 45k usd`")
E301_ESTIMATE_UNIT = message(codes.E301, "an estimate is a probability and takes no unit")
E301_NOT_A_BOOL_FIELD = message(codes.E301, "field `{field}` is not a bool")
E301_BARE_BOOL_FIELD = message(
    codes.E301,
    "a {kind} must be a comparison (or comparisons joined by `and`, `or`, `not`), not the bare field `{field}`",
    "`{field}` is a bool field: write `{field} == {value}`",
)
E301_BARE_FIELD = message(
    codes.E301,
    "a {kind} must be a comparison (or comparisons joined by `and`, `or`, `not`), not the bare field `{field}`",
    "`{field}` is a {type} field: compare it with a value, e.g. `{field} >= {example}`",
)
E301_PAYOFF_NOT_A_NUMBER = message(codes.E301, "the payoff of state `{state}` must be an amount in usd")
E301_PAYOFF_UNIT = message(
    codes.E301,
    "the payoff of state `{state}` is in `{unit}`, which no fold is kept in",
    "write the payoff in usd (`250k usd`, converted at the policy's rate) or without a unit "
    "(`300`: in the unit the policy keeps its fold in)",
)
E301_VISION_NOT_A_NUMBER = message(codes.E301, "vision `{key}` must be a number")
E301_CRITERION_UNIT = message(codes.E301, "criterion `{name}` is a score from 0 to 100 and takes no unit")
E301_NEGATE = message(codes.E301, "in the {kind}: `-` needs a number, not {operand}")
E301_FUNCTION_UNITS = message(codes.E301, "in the {kind}: `{function}` takes numbers of one unit")
E301_NEEDS_NUMBERS = message(codes.E301, "in the {kind}: `{op}` needs numbers, not {operand}")
E301_ADDS = message(codes.E301, "in the {kind}: `{op}` adds {left} and {right}")
E301_MULTIPLIES = message(codes.E301, "in the {kind}: `*` multiplies {left} by {right}")
E301_DIVIDES = message(codes.E301, "in the {kind}: `/` divides {left} by {right}")
E301_COMPARES = message(codes.E301, "in the {kind}: `{op}` compares {left} with {right}")
E301_COMPARES_QUOTED_NUMBER = message(
    codes.E301,
    "in the {kind}: `{op}` compares {left} with {right}",
    'write the number without quotes: `developers >= 500`, not `developers >= "500"`',
)
E301_COMPARES_DATE = message(
    codes.E301,
    "in the {kind}: `{op}` compares {left} with {right}",
    "fields hold numbers, amounts in usd or bools; a date compares only with a date",
)
E301_COMPARES_UNITS = message(
    codes.E301,
    "in the {kind}: `{op}` compares {left} with {right}",
    "give both sides the same unit: `arr >= 1.2M usd`",
)
E301_ORDERS = message(codes.E301, "in the {kind}: `{op}` orders numbers or dates, not {operand}s")
E301_BOOL_MATERIALITY = message(codes.E301, "a bool field takes no materiality threshold: any change is material")
E301_MATERIALITY_UNIT = message(codes.E301, "field `{field}` is of type {type}; the threshold cannot be in `{unit}`")
E302_NOT_FINITE = message(codes.E302, "`{number}` is not a finite number")
E303_NEGATIVE_LEARNING_COST = message(codes.E303, "`learning_cost` cannot be negative")
E303_NEGATIVE_COST = message(
    codes.E303,
    "cost `{cost}` is negative",
    "costs are amounts spent; a saving belongs in the value, not the cost",
)
E304_ESTIMATE_RANGE = message(codes.E304, "estimate {value:g} is outside [0, 1]")
E305_STATES_P = message(
    codes.E305,
    "a route may not state `p`: probabilities are code-owned",
    "remove this line; the policy's prior for the class, reweighted by "
    "evidence, gives p. Record your own view with `estimates`.",
)
E306_NOT_A_DATE = message(codes.E306, "`{date}` is not a valid date")
E306_DUE_PAST_9999 = message(
    codes.E306, "the due date of `{transition}` ({as_of} plus the horizons so far) is past the year 9999"
)
E307_NEGATIVE_COUNT = message(codes.E307, "{what} is a count and cannot be negative")
E307_HORIZON = message(codes.E307, "a horizon is a positive whole number of days, months or years")
E307_VISION_RATIO = message(codes.E307, "vision `{key}` is {value:g}; it must be in [0, 1]")
E307_VISION_NEGATIVE = message(codes.E307, "vision `{key}` cannot be negative")
E307_TIER = message(codes.E307, "an evidence tier is a whole number")
E307_WEIGHT = message(codes.E307, "evidence weight {value:g} is outside [0, 1]")
E307_NEGATIVE_PAYOFF = message(
    codes.E307,
    "the payoff of state `{state}` is negative",
    "a payoff is what reaching the state earns; an amount spent belongs in the next transition's `cost`",
)
E307_NEGATIVE_MATERIALITY = message(codes.E307, "a materiality threshold cannot be negative")
E307_TIER_WITHOUT_WEIGHT = message(
    codes.E307,
    "evidence `{evidence}` is tier {tier}, which policy {policy} gives no weight",
    "tiers with weights: {tiers}",
)
E308_UNKNOWN_TYPE = message(codes.E308, "unknown field type `{type}`", "{suggestion}", "the types are {types}")
E309_PERCENT = message(codes.E309, "{what} is of type {type}; `%` is only for ratios")
E310_LATE_EVIDENCE = message(
    codes.E310,
    "evidence `{evidence}` was captured {captured}, after as_of {as_of}",
    "the policy is strict about point-in-time evidence",
)
# an overflow: the result's phrase (raised as NotFinite) inside the report of its route
E311_RESULT_OVERFLOWS = message(
    codes.E311, "{what} overflows{operands}: the result is beyond about 1.8e308, the largest number a float holds"
)
E311_DELTA_OVERFLOWS = message(codes.E311, "{what} overflows (|Δ| = {magnitude})")
E311_IN_ROUTE = message(
    codes.E311,
    "route `{route}`: {overflow}",
    "the route's or the policy's numbers are too large to score; no score is released",
)
E311_IN_SEAMS = message(
    codes.E311,
    "route `{route}`: {overflow}",
    "the route's numbers are too large for its seams to be shown; smaller costs or values analyse",
)
E311_IN_EDIT = message(codes.E311, "{overflow}")
E311_COST_OVERFLOWS = message(
    codes.E311,
    "cost `{cost}` overflows: {count:.6g} × {amount:.6g} usd is beyond about 1.8e308",
    "no score can be computed from it; write the amount in its real size",
)
E312_DIVISION_BY_ZERO = message(
    codes.E312, "division by zero in the {kind}", "a threshold or kill divides by a number that is never 0"
)
E314_KILL_BY_EARLY = message(
    codes.E314,
    "the kill of `{transition}` is armed on {date}, not after the start of its planned window ({start})",
    "a kill without `by` already applies from the start; name a later date, or drop `by`",
)
E314_KILL_BY_LATE = message(
    codes.E314,
    "the kill of `{transition}` is armed on {date}, after its due date {due}: it could never apply",
    "name a date on or before {due}, or a shorter time after the planned start",
)
E314_KILL_BY_NO_START = message(
    codes.E314,
    "`by {amount}` counts from the start of `{transition}`'s planned window, which is unknown",
    "an earlier transition states no horizon; give the kill a date (`by 2027-06-01`) instead",
)


# ---------------------------------------------------------------------- policies and libraries
E401_UNKNOWN_POLICY = message(codes.E401, "{problem}", "{hint}")
E402_PIN_MISMATCH = message(
    codes.E402,
    "policy {policy} has sha256 {actual}, but the route pins {pinned}",
    "the policy changed since the route was pinned; review it, then update the pin",
)
E419_NO_PAYOFFS = message(
    codes.E419,
    "state `{state}` writes a payoff, but policy {policy} admits none",
    "a policy that credits payoffs bounds them in a `[payoffs]` table (`max_usd`)",
)
E403_MALFORMED_POLICY = message(codes.E403, "{path}: {problem}")
E404_DECLARES_ANOTHER = message(codes.E404, "`{file}` declares library `{declared}`, not `{name}`")
E404_HAS_ERRORS = message(codes.E404, "library `{name}` ({file}) has errors")
E405_GATE_RULE = message(codes.E405, "gate `{gate}`: {problem}", "rule: {rule}")
E415_VISION_FORMULA = message(
    codes.E415, "{problem}",
    "`[vision] value` computes a number from the names `[vision] fields` declares (`+ - * /`, `min`, `max`)",
)
E415_VISION_VALUE = message(
    codes.E415, "the vision's value cannot be computed: {problem}",
    "the policy's formula (`{formula}`, {where}) with this vision's values: {values}",
)
E416_NO_RATE = message(
    codes.E416,
    "{what} is written in usd, but policy `{policy}` keeps its fold in {unit} and gives no rate for usd",
    "add `[units.rates] usd = …` to the policy (what 1 usd is worth in {unit}){more}",
)
E406_NOT_A_REFERENCE = message(
    codes.E406,
    "policy reference `{ref}` is not of the form `id@version`",
    '{rule}; write e.g. `policy "venture@1.0.0"`',
)
E406_BAD_PIN = message(codes.E406, "a policy pin must be 64 hexadecimal digits (SHA-256)")
E407_CONFIG_BESIDE_ROUTE = message(
    codes.E407,
    "{keys}: {file} sits in the folder of the route {route} (or below it), where the route's author could have "
    "written it; a configuration file there may not add policy or library folders",
    "keep the project's pcsc.toml above the routes' folders and run pcsc there (or below it, outside the "
    "routes' folders), or give the folders with --policy-path and --lib-path",
)
E408_POLICY_OUTSIDE = message(codes.E408, "{path}: {problem}")
E408_LINK_OUT_OF_FOLDER = message(
    codes.E408,
    "{path} is a link to {real}, outside the folder {folder}: it is not read",
    "a folder's files are read only from inside it; copy the file into the folder, or name it on the command line",
)
E408_LIBRARY_OUTSIDE = message(
    codes.E408,
    "library `{name}`: {file} resolves to {real}, outside its folder {folder}",
    "a library is read only from inside the route's folder, --lib-path and the shipped "
    "obligations/; copy the file there instead of linking to it",
)
E409_REPLACES = message(
    codes.E409,
    "library `{name}` in {file} would replace {other}: the obligations that judge a route belong to its policy",
    "remove or rename {file} (only a policy with `local_libraries = true` under [policy] lets a "
    "local library replace a pinned or shipped one); {repin}",
)
E410_VERSION_AGAINST_PIN = message(
    codes.E410,
    "library `{name}` ({file}) is version {version}, but policy {policy} pins version {pinned} with its content",
    "the policy's pin is inconsistent; fix its [libraries] table",
)
E410_PINNED_SHA = message(
    codes.E410,
    "policy {policy} pins library `{name}` with sha256 {pinned}, but {file} has sha256 {actual}",
    'if {file} is the content the policy should pin, set `sha256 = "{actual}"` '
    "under [libraries.{name}] (in a new version: a published policy never changes)",
)
E410_PINNED_VERSION = message(
    codes.E410,
    "policy {policy} pins library `{name}` at version {pinned}, but {file} declares version {version}",
    "the pin's `version` must be the one the library's `library … version` line states",
)
E410_NOT_SHIPPED_CONTENT = message(
    codes.E410,
    "library `{name}` ({file}) has sha256 {actual}, but {whose} {expected}",
    "the pin names other content than the shipped library: put the pinned file beside the route or "
    "on --lib-path; {repin}",
)
E413_NOT_NAMED = message(
    codes.E413,
    "library `{name}` ({file}) is not one the route's policy names: {why}",
    "{suggestion}; the obligations that judge a route belong to its policy: to let this library judge, the policy "
    "({policy}) must pin it under {pin_it}",
    "the obligations that judge a route belong to its policy: to let this library judge, the policy "
    "({policy}) must pin it under {pin_it}",
)
E414_NOT_REQUIRED = message(
    codes.E414,
    "route names policy {ref}, but this run requires {required} ({by})",
    "the policy that judges a route is the maintainer's choice, not the route's: name a required "
    "policy, or ask the maintainer to require this one",
)

# ---------------------------------------------------------------------- coverage
E501_UNCOVERED = message(
    codes.E501,
    "`{transition}` changes {field} {source} -> {target}, and no obligation it discharges covers that: "
    "GATE withholds the score",
    "{tried}",
)
W501_UNCOVERED = message(
    codes.W501,
    "`{transition}` changes {field} {source} -> {target}, and no obligation it discharges covers that: "
    "DOCK docks the score",
    "{tried}",
)

E502_NOT_ADMITTED = message(
    codes.E502,
    "`{transition}` is of class `{ref_class}`, which does not admit {what}: {reason}; GATE withholds the score",
    "{classes}",
)
W502_NOT_ADMITTED = message(
    codes.W502,
    "`{transition}` is of class `{ref_class}`, which does not admit {what}: {reason}; DOCK docks the score",
    "{classes}",
)
E503_REGISTRY = message(codes.E503, "{finding}: GATE withholds the score (coverage.registry = \"required\")")
W503_REGISTRY = message(codes.W503, "{finding}: DOCK docks the score (coverage.registry = \"required\")")
W504_REGISTRY = message(codes.W504, "{finding} (coverage.registry = \"report\": counted, not refused)")


# ---------------------------------------------------------------------- forecasts
# an outcomes file's problems, each at its key path (raised as OutcomesError)
E701_CANNOT_READ = message(codes.E701, "cannot read the file: {reason}")
E701_NOT_TOML = message(codes.E701, "not valid TOML: {reason}")
E701_NESTED_TOO_DEEPLY = message(codes.E701, "not usable: arrays or tables nested too deeply")
E701_NOT_USABLE = message(codes.E701, "not usable: {reason}")
E701_UNKNOWN_TOP_KEY = message(
    codes.E701,
    "{key}: unknown key; an outcomes file holds [[observation]] and [[label]] tables",
)
E701_BAD_RECORD = message(codes.E701, "record {n}: expected an observation with fields or a label")
E701_NOT_AN_ARRAY = message(codes.E701, "{key}: expected an array of tables; write each entry under [[{key}]]")
E701_NOT_A_TABLE = message(codes.E701, "{key}[{i}]: expected a table")
E701_MISSING_KEY = message(codes.E701, "{where}: missing key `{key}`")
E701_NOT_A_ROUTE_NAME = message(
    codes.E701,
    '{where}.route: expected a route name (a quoted identifier such as "devtools_api")',
)
E701_DATE_AND_TIME = message(codes.E701, "{where}.date: expected a date (YYYY-MM-DD), not a date and time")
E701_NOT_A_DATE = message(codes.E701, "{where}.date: expected a date (YYYY-MM-DD, unquoted)")
E701_QUOTED_DATE = message(codes.E701, "{where}.date: expected a date; write it unquoted: date = {value}")
E701_SOURCE_NOT_A_STRING = message(codes.E701, "{where}.source: expected a string")
E701_NOT_A_FIELD_NAME = message(codes.E701, "{where}.{key}: not a field name")
E701_NO_FIELD_VALUES = message(codes.E701, "{where}: no field values; write at least one, e.g. developers = 620")
E701_NOT_FINITE = message(codes.E701, "{where}: expected a finite number (at most about 1.8e308)")
E701_NOT_A_VALUE = message(codes.E701, "{where}: expected a number or true/false, not {kind}{hint}")
E701_HINT_UNQUOTED = message(codes.E701, "; write it unquoted: {text}")
E701_HINT_NO_SUFFIX = message(codes.E701, "; TOML numbers take no suffixes or units: write {plain} for `{text}`")
E701_UNKNOWN_LABEL_KEY = message(codes.E701, "{where}.{key}: unknown key; a label has {keys}")
E701_NOT_AN_OUTCOME = message(codes.E701, "{where}.outcome: expected one of {choices}")
E701_COVARIATES_NOT_A_TABLE = message(
    codes.E701,
    "{where}.covariates: expected a table of names and values, e.g. covariates = {{ recognition_risk = true }}",
)
E701_NOT_A_COVARIATE = message(
    codes.E701, "{where}.covariates.{name}: expected a name and a number, true/false or a yes/no word"
)
E701_OBSERVED_TWICE = message(
    codes.E701,
    "observation[{i}].{field}: {route} on {date} already has {field} = {value} (observation[{j}])",
)
E701_LABELLED_TWICE = message(
    codes.E701,
    "label[{i}].outcome: {route} on {date} is already labelled {outcome} (label[{j}])",
)
# outcomes that do not fit the frozen routes, and suspect ones (a resolution's Findings)
W701_NO_SUCH_ROUTE = message(codes.W701, "{where}.route: no packet has route `{route}`{hint}; ignored")
W701_OBSERVED_BEFORE_AS_OF = message(
    codes.W701,
    "{where}.date: on or before as_of {as_of} of {route}: it resolves nothing",
)
E702_NO_SUCH_FIELD = message(codes.E702, "{where}.{field}: route {route} has no field `{field}`{hint}")
E702_ITS_FIELDS = message(codes.E702, "; its fields are {fields}")
E702_NOT_A_BOOL = message(codes.E702, "{where}.{field}: `{field}` is a bool field: expected true or false")
E702_NOT_A_NUMBER = message(codes.E702, "{where}.{field}: `{field}` is a {kind} field: expected a number")
E702_NEGATIVE_COUNT = message(codes.E702, "{where}.{field}: `{field}` is a count: expected a number >= 0")
W701_RATIO_OVER_ONE = message(
    codes.W701,
    "{where}.{field}: `{field}` is a ratio, written as a fraction: {value} is {percent}%",
)
W701_LABELLED_BEFORE_AS_OF = message(
    codes.W701,
    "label[{i}].date: on or before as_of {as_of} of {route}: the forecast was frozen after this outcome",
)
E702_DID_YOU_MEAN = message(codes.E702, " (did you mean `{name}`?)")  # W701's hint too
# frozen packets that cannot be resolved, each problem at its path (raised as PacketError)
E721_CANNOT_READ = message(codes.E721, "cannot read the file: {reason}")
E721_NOT_JSON = message(codes.E721, "not JSON: {reason}")
E721_NESTED_TOO_DEEPLY = message(codes.E721, "not usable: arrays or objects nested too deeply")
E721_NOT_AN_ARRAY = message(codes.E721, "{where}: expected an array")
E721_NOT_A_PACKET = message(codes.E721, "{where}: expected a `pcsc compile --format json` output or a route packet")
E721_NOT_AN_OBJECT = message(codes.E721, "{where}: expected an object")
E721_NO_ROUTE_NAME = message(codes.E721, "{where}: expected the route's name")
E721_NOT_FIELDS = message(codes.E721, "{where}: expected an array of {{name, type}}")
E721_NOT_WINDOWS = message(codes.E721, "{where}: expected an array of positive whole numbers of days")
E721_MISSING = message(codes.E721, "{where}: missing; freeze the route again with this compiler")
E721_NOT_A_DATE = message(codes.E721, "{where}: expected an ISO date")
E721_NOT_A_DATE_OR_NULL = message(codes.E721, "{where}: expected an ISO date or null")
E721_NO_TRANSITION_NAME = message(codes.E721, "{where}: expected the transition's name")
E721_NOT_AN_EXPRESSION_TEXT = message(codes.E721, "{where}: expected the expression text or null")
E721_CANNOT_READ_CONDITION = message(codes.E721, "{where}: cannot read `{text}`: {problem}")
# why an append wrote nothing (``nothing``: "nothing frozen", "nothing stored")
E711_NOTHING_WRITTEN = message(codes.E711, "{nothing}: {problem}")
E719_NOTHING_WRITTEN = message(codes.E719, "{nothing}: {problem}")
E712_NOT_VERIFIED = message(codes.E712, "{nothing}: the ledger does not verify: {problem}")
E713_NOTHING_TO_RESOLVE = message(codes.E713, "no frozen forecast to resolve (run `pcsc freeze` first)")
E714_CANNOT_SHOW = message(codes.E714, "cannot show the ledger: {cause}; `pcsc ledger verify` names the bad row")
E715_INPUT_HAS_ERRORS = message(codes.E715, "nothing frozen: the input has errors")
E715_NOT_IN_THE_PAST = message(
    codes.E715,
    "nothing frozen: a retrospective freeze takes routes whose as_of is in the past (before {today}); "
    "not {routes}; freeze them without --retrospective",
)
E718_NOT_VERIFIED = message(codes.E718, "{nothing}: the ledger does not verify: {problem}")
# the three ways a forecast would be graded on what was known when it was frozen (raised as GradingError)
# a key or a checkpoint that cannot be used (raised as CheckpointError)
E717_KEY_EXISTS = message(codes.E717, "{file} exists: a key file is never replaced; choose another name")
E717_CANNOT_WRITE_KEYS = message(codes.E717, "cannot write the key files {private}, {public}: {reason}")
E717_CANNOT_READ_KEY = message(codes.E717, "{path}: cannot read the {what} key: {reason}")
E717_NOT_PEM = message(codes.E717, "{path}: not an unencrypted PEM {what} key ({reason})")
E717_NOT_ED25519 = message(codes.E717, "{path}: not an Ed25519 {what} key (`pcsc ledger keygen` makes one)")
E717_NOT_A_CHECKPOINT = message(codes.E717, "{path}: not a checkpoint: {reason}")
E717_CANNOT_READ_CHECKPOINT = message(codes.E717, "{path}: cannot read the checkpoint: {reason}")
E717_NO_FORMAT = message(codes.E717, '{path}: not a checkpoint (no "format": "{format}")')
E717_VERSION = message(codes.E717, "{path}: a checkpoint of version {version!r}; this pcsc reads {reads}")
E717_NO_SIGNATURE = message(codes.E717, "{path}: the checkpoint has no valid signature")
E717_SIGNATURE_FAILS = message(
    codes.E717,
    "{path}: the signature does not verify with {key}: the checkpoint was changed after it was signed, "
    "or it was signed with another key",
)
E717_HEAD_INCOMPLETE = message(codes.E717, "{path}: the checkpoint's head is incomplete")
E717_HEAD_SEQS = message(
    codes.E717, "{path}: the checkpoint's head seqs are not whole numbers: {entries!r}, {outcomes!r}"
)
E717_HEAD_TOKEN = message(codes.E717, "{path}: the checkpoint's head token {token} is not the hash of its rows")
E717_CANNOT_WRITE_CHECKPOINT = message(codes.E717, "{path}: cannot write the checkpoint: {reason}")
# a score table that cannot be graded (raised as ScoreTableError, which names the file and line)
E731_NO_SUCH_FILE = message(codes.E731, "no such file")
E731_CANNOT_READ = message(codes.E731, "cannot be read: {reason}")
E731_EMPTY = message(codes.E731, "the file is empty: expected a header row of column names")
E731_NOT_CSV = message(codes.E731, "not a CSV file: {reason}")
E731_HEADER_TWICE = message(codes.E731, "the header names {names} more than once")
E731_FIELD_COUNT = message(codes.E731, "{count} fields where the header has {header}")
E731_NO_COLUMN = message(codes.E731, "no {role} column `{column}`; the columns are {columns}")
E731_EMPTY_ID = message(codes.E731, "empty case id in column `{column}`")
E731_CASE_TWICE = message(codes.E731, "case `{case}` appears twice (first on line {first})")
E731_NO_CASE_OF_KIND = message(
    codes.E731,
    "no {kind} case: no row has `{column}` in {{{wanted}}}, so AUC is undefined ({graded} graded, "
    "{left_out} left out)",
)
E731_NO_SCORER = message(codes.E731, "no scorer: no column besides `{id}` and `{outcome}` holds numbers")
E731_NOT_A_NUMBER = message(codes.E731, "case `{case}`: scorer column `{column}` is {value}, not a (finite) number")
E731_COVARIATE_IS_ROLE = message(codes.E731, "`{column}` is the {role} column; it cannot be a covariate too")
E731_COVARIATE_NOT_CODED = message(
    codes.E731,
    "covariate column `{column}` is {value}: a covariate is a number in every graded row, or a yes/no word ({coding})",
)
E731_COVARIATE_ONE_VALUE = message(
    codes.E731,
    "covariate column `{column}` has one value, {value}, in every graded row: it cannot tell the cases apart",
)
E731_INCUMBENT_NOT_A_SCORER = message(
    codes.E731, "--incumbent `{incumbent}` is not a scorer of the table; the scorers are {scorers}"
)
# a checksum sidecar that cannot be read or that the table does not match (raised as SidecarError)
E732_CANNOT_READ_SIDECAR = message(codes.E732, "cannot read the checksum file {sidecar}: {reason}")
E732_NOT_A_SHA256SUM_LINE = message(codes.E732, "{sidecar}: expected a sha256sum line, `<64 hex digits>  {table}`")
E732_OF_ANOTHER_FILE = message(codes.E732, "{sidecar} is the checksum of {named}, not of {table}")
E732_CANNOT_READ_TABLE = message(codes.E732, "cannot read {table}: {reason}")
E732_DOES_NOT_MATCH = message(
    codes.E732,
    "the table does not match its checksum: {sidecar} says {expected}, the file hashes to {actual}; "
    "it changed after the checksum was written",
)
E741_RECORDED_BEFORE = message(
    codes.E741,
    "route {route}: retrospective forecast frozen {frozen} (seq {seq}), but the {kind} dated {observed} it would "
    "be graded on was recorded {recorded}, before it (anchored at forecast seq {anchor}){more}; {rule}: {refuser} "
    "refuses it",
)
E741_LABEL_NOT_AFTER = message(
    codes.E741,
    "route {route}: forecast frozen {frozen} is not before the label it would be graded on (dated {date}); "
    "{rule}: {refuser} refuses it",
)
E741_OUTCOME_NOT_AFTER = message(
    codes.E741,
    "route {route}, transition {transition}: forecast frozen {frozen} is not before the outcome it would be "
    "graded on (decided {decided}); {rule}: evaluate refuses it",
)
E742_NOTHING_TO_GRADE = message(
    codes.E742, "nothing to grade: no route label and no resolved milestone yet (see `pcsc resolve`)"
)
E742_NO_FORECAST_OF_MODE = message(
    codes.E742, "nothing to grade: no {mode} forecast in the ledger (see `pcsc freeze{flag}`)"
)
E743_CANNOT_WRITE_PLOT = message(codes.E743, "cannot write the plot: {reason}")
E744_CLASS_NOT_IN_POLICY = message(
    codes.E744,
    'reference class "{ref_class}" of a frozen forecast is not in policy {policy}',
    "a forecast is re-scored under both policies: compare policies that have a prior for every class it uses",
)
E745_LATEST_MIX_MODES = message(
    codes.E745,
    "the latest forecasts are {first} and {second}; the two are never pooled: {prospective}, and {retrospective}; "
    "grade one mode at a time with --mode prospective or --mode retrospective",
)
E745_TABLE_MIXES_MODES = message(
    codes.E745,
    "the table's `mode` column mixes prospective and retrospective rows; the two are never pooled: {prospective}, "
    "and {retrospective}; export and grade one mode at a time (`pcsc ledger export --mode …`)",
)
E746_NO_FORECAST = message(
    codes.E746,
    "nothing to fit: no forecast in the ledger was frozen under {policy}; no policy written",
    "record outcomes with `pcsc resolve`, or give the date they are resolved by with --as-of",
)
E746_NONE_RESOLVED = message(
    codes.E746,
    "nothing to fit: none of the {forecasts} forecasts frozen under {policy} has a resolved training transition "
    "as of {as_of}; no policy written",
    "record outcomes with `pcsc resolve`, or give the date they are resolved by with --as-of",
)
E761_SCORERS_NOT_POOLED = message(
    codes.E761,
    "the forecasts to grade were computed by different scorer code: {groups}; their numbers may differ for "
    "reasons no policy states, so one AUC would pool them",
    "grade each scorer's forecasts apart (freeze them again with one pcsc), or pool them knowingly with "
    "--pool-scorers",
)
W761_SCORERS_POOLED = message(
    codes.W761,
    "--pool-scorers: forecasts computed by different scorer code are graded as one ranking: {groups}",
)
E762_CANNOT_READ_PLAN = message(codes.E762, "cannot read the plan: {reason}")
E762_PLAN_NOT_UTF8 = message(codes.E762, "the plan is not UTF-8 text")
E762_PLAN_EXISTS = message(
    codes.E762,
    "the ledger already holds a plan named {name!r} (seq {seq}, frozen {frozen}): a plan is frozen once",
    "give a new plan a new name",
)
E762_COHORT_NOT_FROZEN = message(
    codes.E762, "no frozen forecast of cohort route {routes}", "freeze the cohort before preregistering"
)
E762_NOTHING_TO_PREREGISTER = message(codes.E762, "the ledger holds no frozen forecast to preregister")
E763_OUTCOMES_RECORDED = message(
    codes.E763,
    "{outcomes} of the cohort already recorded (e.g. the {kind} of route {route} observed {observed}, recorded "
    "{recorded}): a plan frozen now would follow its outcomes; nothing frozen",
)
E764_CANNOT_READ_MAP = message(codes.E764, "cannot read the map: {reason}")
E764_NOT_A_MAP = message(codes.E764, "not a map of `pcsc blind`: {reason}")
E764_NOTHING_TO_JOIN = message(
    codes.E764, "the ledger holds no blind outcome to join", "`pcsc resolve --blind` stores them"
)
E764_JOINS_NO_ROUTE = message(
    codes.E764,
    "{outcomes} the map joins to no frozen route: {routes}; nothing joined",
    "is it the map of these forecasts' blinded copies?",
)
E763_PLAN_AFTER_OUTCOMES = message(
    codes.E763,
    "plan {name} (seq {seq}, frozen {frozen}) was frozen after {count} of its outcomes, e.g. the {kind} of route "
    "{route} observed {observed} and recorded {recorded} (at forecast seq {anchor}): a plan graded on outcomes "
    "known when it was written predicts nothing; not graded",
    "preregister before outcomes are recorded; grade this cohort without --prereg, as an unregistered analysis",
)
W762_DIFFERS_FROM_PLAN = message(
    codes.W762,
    "{option} differs from plan {name}: planned {planned}, used {used}",
)
E751_NO_ROUTES = message(codes.E751, "nothing to {what}: no routes in {files}")

# ---------------------------------------------------------------------- policy tests and project scaffolding
# a policy test file's problems, each at its key path (raised as PolicyTestError)
E801_AT = message(codes.E801, "{where}: {problem}")
E801_UNKNOWN_KEY = message(codes.E801, "unknown key; expected one of {allowed}")
E801_NOT_A_STRING = message(codes.E801, "expected a string")
E801_NOT_A_CHOICE = message(codes.E801, "expected one of {choices}, got {value!r}")
E801_NOT_A_NUMBER = message(codes.E801, "expected a number")
E801_NOT_FINITE = message(codes.E801, "expected a finite number")
E801_BELOW_MINIMUM = message(codes.E801, "expected a number >= {minimum:g}")
E801_EMPTY_RANGE = message(codes.E801, "expected a table with min, max or both")
E801_MIN_ABOVE_MAX = message(codes.E801, "min {min:g} is greater than max {max:g}")
E801_NOT_A_RANGE = message(codes.E801, "expected a number or a table {{min = …, max = …}}")
E801_NOT_STRINGS = message(codes.E801, "expected an array of strings")
E801_NOT_OF_FORM = message(codes.E801, "expected {what}, got {value!r}")
E801_NO_EXPECTATION = message(codes.E801, "expected a table with at least one expectation ({keys})")
E801_NOT_A_BOOL = message(codes.E801, "expected true or false")
E801_ERRORS_AND_MORE = message(
    codes.E801, "a case that expects errors expects nothing else (its route does not compile)"
)
E801_NOT_UTF8 = message(codes.E801, "not UTF-8 text")
E801_NOT_TOML = message(codes.E801, "not valid TOML: {reason}")
E801_NOT_A_TABLE = message(codes.E801, "expected a table")
E801_NO_CASES = message(codes.E801, "expected one or more [[case]] tables")
E801_NO_NAME = message(codes.E801, "missing: every case needs a name")
E801_NAME_TWICE = message(codes.E801, "{name!r} is already the name of case[{first}]")
E801_NO_ROUTE = message(codes.E801, "missing: the route file to test (relative to this file)")
E801_NOT_A_POLICY = message(codes.E801, "expected id@version or a path to a .toml file, got {policy!r}")
E801_NOT_A_SEAM = message(codes.E801, "expected a whole number >= 1 (the seam k)")
E801_NO_EXPECT = message(codes.E801, "missing: what the case expects")

E802_CASE_ERROR = message(codes.E802, 'case[{index}] "{name}": {failures}')
E803_NO_TEST_FILES = message(
    codes.E803,
    "no policy test files (*{suffix}) in the folder {folder}",
    "folders are searched recursively; a test file's name ends in {suffix}",
)
E811_EXISTING = message(
    codes.E811,
    "refusing to overwrite {files}",
    "remove or move them, choose another folder or --name, or pass --force to overwrite",
)
E812_CANNOT_WRITE = message(codes.E812, "cannot write {path}: {reason}")

# ---------------------------------------------------------------------- decisions
E901_OVERRIDE = message(codes.E901, "{problem}", "see docs/decisions.md")
# an override that cannot be applied, addressed by its key (raised as OverrideError)
E901_UNCLOSED_QUOTE = message(codes.E901, "{key}: a quoted segment is not closed")
E901_BAD_SEGMENT_START = message(
    codes.E901,
    "{key}: `{char}` cannot start a key segment (quote segments with other characters)",
)
E901_NO_DOT = message(codes.E901, "{key}: expected `.` between key segments")
E901_ENDS_WITH_DOT = message(codes.E901, "{key}: the key ends with `.`")
E901_EMPTY_KEY = message(codes.E901, "an empty key")
E901_NOT_A_VALUE = message(
    codes.E901,
    "`{text}` is not a value: write a TOML literal or a number such as 5B, 12% or 1.5M usd",
)
E901_NOT_FINITE = message(
    codes.E901,
    "{key}: `{value}` is not a finite number (no policy or route value may be NaN or infinite, nor "
    "beyond about 1.8e308)",
)
E901_NOT_KEY_VALUE = message(codes.E901, '`{text}`: expected KEY=VALUE, e.g. priors."devtools/scale".p=0.2')
E901_NOT_A_ROUTE_KEY = message(
    codes.E901,
    "{key}: a route override is route.vision.tam (.capture, .defensibility), "
    "route.transitions.NAME.cost.ITEM or route.evidence.NAME.weight",
)
E901_UNKNOWN_VISION_KEY = message(
    codes.E901, "{key}: unknown key (a route override names one value of the vision, vision.NAME: tam, capture, "
    "defensibility under the default formula)"
)
E901_NOT_A_NUMBER = message(codes.E901, "{key}: expected a number")
E901_TAM = message(codes.E901, "{key}: vision `tam` must be a finite number at least 0, got {number:g}")
E901_VISION_RATIO = message(codes.E901, "{key}: vision `{item}` must be in [0, 1], got {number:g}")
E901_VISION_NEGATIVE = message(codes.E901, "{key}: vision `{item}` must be a finite number at least 0, got {number:g}")
E901_NO_SUCH_VISION_ITEM = message(codes.E901, "{key}: no route compiled states `{item}` in its vision")
E901_NEGATIVE_COST = message(codes.E901, "{key}: a cost amount cannot be negative, got {number:g}")
E901_WEIGHT = message(codes.E901, "{key}: an evidence weight must be in [0, 1], got {number:g}")
E901_NOT_A_TABLE = message(codes.E901, "{key}: is a value, not a table")
E901_NAMES_THE_POLICY = message(codes.E901, "--set {key}: names the policy; it cannot be overridden")
E901_NO_SUCH_COST_ITEM = message(
    codes.E901,
    "{key}: no route compiled has a transition `{transition}` with a cost item `{item}`",
)
E901_NO_SUCH_EVIDENCE = message(codes.E901, "{key}: no route compiled has evidence `{evidence}`")
E911_CERTIFICATE = message(codes.E911, "certificate {file}: {problem}")
E911_CANNOT_WRITE = message(codes.E911, "cannot write {file}: {reason}")
E911_CANNOT_READ = message(codes.E911, "cannot read {file}: {problem}")
E911_NOTHING_FROZEN = message(codes.E911, "nothing frozen: {problem}")
E911_NO_SUCH_FORECAST = message(codes.E911, "forecast {seq} of {ledger} holds no certificate: no such forecast")
E911_FROZEN_WITHOUT_CERT = message(
    codes.E911, "forecast {seq} of {ledger} holds no certificate: it was frozen without --cert"
)
E912_DIFFERS = message(
    codes.E912,
    "{file}: {what}: {problem}",
    "something changed since the certificate was written: an input, the policy, a library, "
    "or the certificate itself",
)
E913_REFUSED = message(
    codes.E913,
    "{file}: {what}: {problem}",
    "a certificate names only regular files inside its own folder (or shipped with PCSC); "
    "give the file with --against to check it against another one",
)


# ---------------------------------------------------------------------- warnings
W601_LATE_EVIDENCE = message(
    codes.W601, "evidence `{evidence}` was captured {captured}, after as_of {as_of}: it is inadmissible and excluded"
)
W602_TOTAL_IGNORED = message(
    codes.W602, "a stated criteria total is ignored; T is computed from the policy's weights"
)
W603_UNUSED_STATE = message(codes.W603, "state `{state}` is not used by any transition")
W604_SUPPORTS_NOTHING = message(codes.W604, "evidence `{evidence}` supports or contradicts no transition")
W605_BELOW_MINIMUM_TIER = message(
    codes.W605, "evidence `{evidence}` is tier {tier}, below the policy's minimum tier {minimum}: excluded"
)
W606_BIDI_CONTROL = message(
    codes.W606,
    "a bidirectional control character U+{point:04X} ({name})",
    "it can make the line display differently from what it says; remove it unless the text needs it",
)
W607_DUPLICATE = message(
    codes.W607,
    "evidence `{evidence}` has the {what}: the two count once (`{evidence}` is excluded, `{counted}` counts)",
)
W608_UNVERIFIED = message(codes.W608, "evidence `{evidence}` is marked unverified: it is excluded from W")
W609_CANNOT_APPLY = message(
    codes.W609,
    "`# pcsc: ignore[{code}]` cannot apply: {why}",
    "only warnings (W…) can be suppressed; `pcsc rule CODE` says what a code means",
)
W610_RATIO_OVER_ONE = message(
    codes.W610,
    "{what} is a ratio, written as a fraction: {shown} is {percent:,g}%",
    "if you meant {shown} percent, write `{shown}%`",
)
W620_CONTROL = message(
    codes.W620,
    "a control character U+{point:04X} (`{escaped}`) in the text",
    "a terminal may obey it (ESC starts a sequence, BEL rings): PCSC prints it escaped; "
    "remove it, or write what it stands for",
)

W702_CUE_BLIND = message(codes.W702, "identity cue `{cue}`: {kind}; blind it with `pcsc blind`")
W702_CUE_BLIND_RENAMES = message(
    codes.W702,
    "identity cue `{cue}`: {kind}; blind it with `pcsc blind` (it renames route, state, transition and evidence "
    "names)",
)
W702_CUE_RENAME = message(
    codes.W702,
    "identity cue `{cue}`: {kind}; rename it: `pcsc blind` renames route, state, transition and evidence names "
    "only, not the other names the compiler reads",
)
W702_CUE_IN_FILE_NAME = message(
    codes.W702, "identity cue `{cue}` in the file name {file}: rename it (`pcsc blind` masks it in the copies' names)"
)
W702_CUE_LEFT = message(
    codes.W702,
    "identity cue `{cue}` left in the blinded copy: only route, state, transition and evidence names are renamed, "
    "not the other names the compiler reads (reference classes, fields, cost items, libraries, obligations); "
    "rename it in the route",
)
W731_COVARIATE_MATCHES = message(
    codes.W731,
    "covariate `{covariate}` alone has AUC {covariate_auc}, which matches or beats {scorers}",
    "a scorer that a covariate matches has not shown that it adds discrimination beyond it: read its AUC within "
    "the covariate's values and its coefficient in the adjusted model",
)

W751_RANKED_TOGETHER = message(
    codes.W751,
    "routes ranked together use {count} policies: {policies}; their numbers come from different rules. "
    "All rank by `{key}`, so they are ranked together",
)
W751_GRADED_TOGETHER = message(
    codes.W751,
    "forecasts graded together use {count} policies: {policies}. Their numbers come from different rules, and "
    "each AUC, lift and calibration below pools them as one ranking; grade each policy's forecasts in a ledger "
    "of their own to keep them apart",
)


def _registry() -> dict[str, Message]:
    found = {name: value for name, value in globals().items() if isinstance(value, Message)}
    assert len({(m.code, m.text, m.help) for m in found.values()}) == len(found), "a message written twice"
    return found


MESSAGES: dict[str, Message] = _registry()
