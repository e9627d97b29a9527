"""Milestone resolution (docs/forecast.md) and the outcomes file: table-driven."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pcsc.cli import main as cli_main
from pcsc.cli.forecasting import resolution_date
from pcsc.cli.outcome import UsageError
from pcsc.diagnostics.exits import EXIT_INPUT, EXIT_OK
from pcsc.forecast.outcomes import (
    Label,
    Observation,
    Outcomes,
    OutcomesError,
    load_outcomes,
    outcomes_from_records,
    parse_outcomes,
)
from pcsc.forecast.resolve import (
    MilestoneResult,
    PacketError,
    check_outcomes,
    frozen_routes,
    resolve_packets,
    route_outcomes,
)
from tests.conftest import ROOT, SPEC_ROUTE

D = dt.date.fromisoformat
AS_OF = "2012-06-01"
FIELDS = [
    {"name": "developers", "type": "count"},
    {"name": "paying_teams", "type": "count"},
    {"name": "arr", "type": "usd"},
    {"name": "soc2", "type": "bool"},
    {"name": "retention", "type": "ratio"},
]
LAUNCH = {"name": "launch", "due": "2012-08-30", "threshold": "developers >= 500", "kill": "developers < 100"}
MONETIZE = {
    "name": "monetize",
    "due": "2013-08-30",
    "threshold": "developers >= 5k and paying_teams >= 200 and arr >= 1.2M usd",
    "kill": "paying_teams < 20",
}
EXPAND = {"name": "expand", "due": "2017-08-30", "threshold": "arr >= 100M usd", "kill": "arr < 5M usd"}


def route_packet(*transitions: dict[str, Any], route: str = "r", as_of: str = AS_OF) -> dict[str, Any]:
    ts = [{"from": "a", "to": "b", "p": 0.5, "horizon": None, **t} for t in transitions]
    return {"route": route, "as_of": as_of, "fields": FIELDS, "transitions": ts}


def outcomes(*observations: tuple[str, dict[str, Any]], route: str = "r") -> Outcomes:
    obs = tuple(
        Observation(route, D(day), tuple(sorted((k, v if isinstance(v, bool) else float(v)) for k, v in vals.items())))
        for day, vals in observations
    )
    return Outcomes("outcomes.toml", obs, ())


def resolve(packet: dict[str, Any], outs: Outcomes, on: str) -> list[MilestoneResult]:
    return resolve_packets([packet], outs, D(on))


# ---------------------------------------------------------------------- the table
# (id, transitions, observations, resolution date, expected [(status, decided_on)], reason fragments)
CASES: list[tuple[str, tuple[dict[str, Any], ...], list[tuple[str, dict[str, Any]]], str, list[Any], list[str]]] = [
    (
        "threshold met in time: positive on that date",
        (LAUNCH, MONETIZE),
        [("2012-07-15", {"developers": 620})],
        "2012-09-01",
        [("positive", "2012-07-15"), ("unresolved", None)],
        ["met on 2012-07-15: developers = 620"],
    ),
    (
        "kill true at as_of is not counted: observations on or before as_of resolve nothing",
        (LAUNCH,),
        [("2012-05-01", {"developers": 0}), ("2012-06-01", {"developers": 0})],
        "2012-09-01",
        [("censored", "2012-08-30")],
        ["no observation of r between as_of 2012-06-01 and due 2012-08-30"],
    ),
    (
        "kill true at as_of, then the threshold met: positive",
        (LAUNCH,),
        [("2012-06-01", {"developers": 0}), ("2012-08-01", {"developers": 600})],
        "2012-09-01",
        [("positive", "2012-08-01")],
        [],
    ),
    (
        "kill held after as_of: negative on that date, even before the due date",
        (LAUNCH,),
        [("2012-07-01", {"developers": 40})],
        "2012-07-02",
        [("negative", "2012-07-01")],
        ["kill `developers < 100` held on 2012-07-01: developers = 40, before the threshold was met"],
    ),
    (
        "kill first, threshold later: still negative",
        (LAUNCH,),
        [("2012-07-01", {"developers": 40}), ("2012-08-01", {"developers": 600})],
        "2012-09-01",
        [("negative", "2012-07-01")],
        ["the threshold was met only on 2012-08-01"],
    ),
    (
        "threshold and kill first hold on the same date: the threshold wins",
        ({"name": "t", "due": "2012-08-30", "threshold": "developers >= 500", "kill": "paying_teams < 1"},),
        [("2012-07-01", {"developers": 600, "paying_teams": 0})],
        "2012-09-01",
        [("positive", "2012-07-01")],
        ["the kill held the same day; the threshold wins"],
    ),
    (
        "an observation exactly on the due date counts",
        (LAUNCH,),
        [("2012-08-30", {"developers": 500})],
        "2012-09-01",
        [("positive", "2012-08-30")],
        [],
    ),
    (
        "the day after the due date does not count: no observation in the window",
        (LAUNCH,),
        [("2012-08-31", {"developers": 500})],
        "2012-09-01",
        [("censored", "2012-08-30")],
        ["no observation of r"],
    ),
    (
        "the day after the due date does not count: decided false in time, so negative at the due date",
        (LAUNCH,),
        [("2012-08-01", {"developers": 300}), ("2012-08-31", {"developers": 500})],
        "2012-09-01",
        [("negative", "2012-08-30")],
        ["due 2012-08-30 passed without the threshold `developers >= 500` met; last decided 2012-08-01"],
    ),
    (
        "resolution on the due date itself decides",
        (LAUNCH,),
        [("2012-08-01", {"developers": 300})],
        "2012-08-30",
        [("negative", "2012-08-30")],
        [],
    ),
    (
        "the day before the due date: unresolved, with the last decided state",
        (LAUNCH,),
        [("2012-08-01", {"developers": 300})],
        "2012-08-29",
        [("unresolved", None)],
        ["not yet due (2012-08-30)", "2012-08-01: developers = 300"],
    ),
    (
        "not yet due and nothing observed: unresolved",
        (LAUNCH,),
        [],
        "2012-07-01",
        [("unresolved", None)],
        ["no decidable observation yet"],
    ),
    (
        "observations after the resolution date are not known yet",
        (LAUNCH,),
        [("2012-07-15", {"developers": 620})],
        "2012-07-14",
        [("unresolved", None)],
        [],
    ),
    (
        "cumulative: earlier values carry forward; a censored predecessor does not block",
        (LAUNCH, MONETIZE),
        [("2013-01-10", {"developers": 5200}), ("2013-03-01", {"paying_teams": 210, "arr": 1_300_000})],
        "2014-01-01",
        [("censored", "2012-08-30"), ("positive", "2013-03-01")],
        ["", "developers = 5_200 (observed 2013-01-10), paying_teams = 210, arr = 1_300_000"],
    ),
    (
        "a later value replaces an earlier one",
        (LAUNCH,),
        [("2012-07-01", {"developers": 600}), ("2012-07-02", {"developers": 300})],
        "2012-09-01",
        [("positive", "2012-07-01")],
        [],
    ),
    (
        "a field never observed leaves the threshold unknown: censored once due",
        (LAUNCH, MONETIZE),
        [("2012-07-01", {"developers": 600}), ("2013-01-01", {"developers": 6000, "arr": 2_000_000})],
        "2014-01-01",
        [("positive", "2012-07-01"), ("censored", "2013-08-30")],
        ["", "never decided between the planned start 2012-08-30 and due 2013-08-30: paying_teams never observed"],
    ),
    (
        "a field never observed: unresolved before the due date",
        (LAUNCH, MONETIZE),
        [("2012-07-01", {"developers": 600}), ("2013-01-01", {"developers": 6000, "arr": 2_000_000})],
        "2013-02-01",
        [("positive", "2012-07-01"), ("unresolved", None)],
        [],
    ),
    (
        "three-valued and: one false part decides with other fields unknown",
        (LAUNCH, MONETIZE),
        [("2012-07-01", {"developers": 600}), ("2013-01-01", {"developers": 3000})],
        "2014-01-01",
        [("positive", "2012-07-01"), ("negative", "2013-08-30")],
        ["", "developers = 3_000, paying_teams unknown, arr unknown"],
    ),
    (
        "a successor's kill is not watched before its planned start (the predecessor's due)",
        (LAUNCH, MONETIZE),
        [("2012-07-15", {"developers": 620, "paying_teams": 0})],
        "2014-01-01",
        [("positive", "2012-07-15"), ("censored", "2013-08-30")],
        ["", "no observation of r between the planned start 2012-08-30 and due 2013-08-30"],
    ),
    (
        "a successor's kill is watched in its own window",
        (LAUNCH, MONETIZE),
        [("2012-07-15", {"developers": 620, "paying_teams": 0}), ("2012-10-01", {"paying_teams": 5})],
        "2014-01-01",
        [("positive", "2012-07-15"), ("negative", "2012-10-01")],
        ["", "kill `paying_teams < 20` held on 2012-10-01: paying_teams = 5"],
    ),
    (
        "the kill reads only the window's own observations: a value from before its start is unknown",
        (LAUNCH, {**MONETIZE, "kill": "paying_teams < 20 or arr < 10k usd"}),
        [("2012-07-15", {"developers": 620, "arr": 0}), ("2012-10-01", {"paying_teams": 25})],
        "2013-02-01",
        [("positive", "2012-07-15"), ("unresolved", None)],
        [],
    ),
    (
        "three-valued or: one true part makes the kill hold",
        (LAUNCH, {**MONETIZE, "kill": "paying_teams < 20 or arr < 10k usd"}),
        [("2012-07-15", {"developers": 620}), ("2012-10-01", {"arr": 0})],
        "2013-02-01",
        [("positive", "2012-07-15"), ("negative", "2012-10-01")],
        [],
    ),
    (
        "a predecessor negative: the successor is not reached, unresolved before its due date",
        (LAUNCH, MONETIZE),
        [("2012-07-01", {"developers": 40}), ("2012-10-01", {"paying_teams": 0})],
        "2013-01-01",
        [("negative", "2012-07-01"), ("unresolved", None)],
        ["", "the preceding transition `launch` resolved negative on 2012-07-01"],
    ),
    (
        "a predecessor negative: the successor is censored once due, its own kill not watched",
        (LAUNCH, MONETIZE, EXPAND),
        [("2012-07-01", {"developers": 40}), ("2012-10-01", {"paying_teams": 0})],
        "2018-01-01",
        [("negative", "2012-07-01"), ("censored", "2013-08-30"), ("censored", "2017-08-30")],
        ["", "not reached: the preceding transition `launch` resolved negative", "`monetize` was not reached"],
    ),
    (
        "a predecessor negative, the successor's threshold met in time: positive, and its successor reached",
        (LAUNCH, MONETIZE, EXPAND),
        [
            ("2012-07-01", {"developers": 40}),
            ("2013-05-01", {"developers": 6000, "paying_teams": 300, "arr": 1_500_000}),
            ("2014-01-01", {"arr": 3_000_000}),
        ],
        "2018-01-01",
        [("negative", "2012-07-01"), ("positive", "2013-05-01"), ("negative", "2014-01-01")],
        [],
    ),
    (
        "a later milestone met early counts",
        (LAUNCH, MONETIZE),
        [("2012-08-01", {"developers": 6000, "paying_teams": 250, "arr": 1_300_000})],
        "2012-09-01",
        [("positive", "2012-08-01"), ("positive", "2012-08-01")],
        [],
    ),
    (
        "no due date (no horizon): censored even when the threshold holds",
        ({**LAUNCH, "due": None},),
        [("2012-07-15", {"developers": 620})],
        "2020-01-01",
        [("censored", None)],
        ["no due date"],
    ),
    (
        "no threshold: censored",
        ({**LAUNCH, "threshold": None},),
        [("2012-07-15", {"developers": 620})],
        "2020-01-01",
        [("censored", "2012-08-30")],
        ["states no threshold"],
    ),
    (
        "no kill: only the threshold and the due date decide",
        ({**LAUNCH, "kill": None},),
        [("2012-07-01", {"developers": 40})],
        "2012-09-01",
        [("negative", "2012-08-30")],
        [],
    ),
    (
        "booleans and ratios",
        ({"name": "t", "due": "2012-08-30", "threshold": "soc2 == true and retention >= 30%", "kill": None},),
        [("2012-07-01", {"soc2": False, "retention": 0.5}), ("2012-08-01", {"soc2": True})],
        "2012-09-01",
        [("positive", "2012-08-01")],
        ["soc2 = true, retention = 0.5 (observed 2012-07-01)"],
    ),
]


@pytest.mark.parametrize(
    ("transitions", "observed", "on", "expected", "fragments"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_resolution_table(
    transitions: tuple[dict[str, Any], ...],
    observed: list[tuple[str, dict[str, Any]]],
    on: str,
    expected: list[tuple[str, str | None]],
    fragments: list[str],
) -> None:
    results = resolve(route_packet(*transitions), outcomes(*observed), on)
    got = [(r.status, None if r.decided_on is None else r.decided_on.isoformat()) for r in results]
    assert got == expected
    assert [r.transition for r in results] == [t["name"] for t in transitions]
    for result, fragment in zip(results, fragments, strict=False):
        assert fragment in result.reason, result.reason
    for result, t in zip(results, transitions, strict=True):
        assert result.due == (None if t["due"] is None else D(t["due"]))
        assert result.as_of == D(AS_OF) and result.route == "r"


def test_every_status_is_covered_by_the_table() -> None:
    statuses = {status for case in CASES for status, _ in case[4]}
    assert statuses == {"positive", "negative", "unresolved", "censored"}


def test_resolution_ignores_file_order_and_other_routes() -> None:
    packet = route_packet(LAUNCH, MONETIZE)
    observed = [
        ("2012-07-15", {"developers": 620}),
        ("2012-10-01", {"paying_teams": 30}),
        ("2013-05-01", {"developers": 6000, "paying_teams": 250, "arr": 1_300_000}),
    ]
    forward = outcomes(*observed)
    other = outcomes(("2012-07-01", {"developers": 1}), ("2012-10-01", {"paying_teams": 0}), route="other")
    mixed = Outcomes("o.toml", tuple(reversed(forward.observations)) + other.observations, ())
    assert resolve(packet, forward, "2014-01-01") == resolve(packet, mixed, "2014-01-01")
    assert [r.status for r in resolve(packet, mixed, "2014-01-01")] == ["positive", "positive"]


def test_same_route_frozen_twice_resolves_each_packet_from_its_own_as_of() -> None:
    early = route_packet({**LAUNCH, "due": "2012-08-30"}, as_of="2012-06-01")
    late = route_packet({**LAUNCH, "due": "2012-10-29"}, as_of="2012-08-01")
    outs = outcomes(("2012-07-15", {"developers": 620}), ("2012-09-01", {"developers": 80}))
    results = resolve_packets([early, late], outs, D("2013-01-01"))
    assert [(r.as_of.isoformat(), r.status) for r in results] == [
        ("2012-06-01", "positive"),
        ("2012-08-01", "negative"),
    ]


def test_route_outcomes_take_the_latest_label_known_at_the_resolution_date() -> None:
    labels = (
        Label("r", D("2014-01-01"), "mixed", "~"),
        Label("r", D("2016-01-01"), "positive", "+"),
        Label("s", D("2015-01-01"), "positive"),
    )
    outs = Outcomes("o.toml", (), labels)
    assert [(o.route, o.label, o.bucket) for o in route_outcomes(outs, D("2015-06-01"))] == [
        ("r", "mixed", "~"),
        ("s", "positive", None),
    ]
    assert [(o.route, o.label) for o in route_outcomes(outs, D("2016-06-01"), routes={"r"})] == [("r", "positive")]
    assert route_outcomes(outs, D("2013-01-01")) == []


# ---------------------------------------------------------------------- the real packet
@pytest.fixture(scope="module")
def spec_packet() -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["compile", "--format", "json", str(SPEC_ROUTE)]) == EXIT_OK
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def doc_example() -> str:
    text = (ROOT / "docs" / "outcomes.md").read_text(encoding="utf-8")
    match = re.search(r"```toml\n(.*?)```", text, re.S)
    assert match is not None
    return match.group(1)


def test_the_spec_packet_carries_what_resolution_needs(spec_packet: dict[str, Any]) -> None:
    (route,) = frozen_routes(spec_packet)
    assert (route.route, route.as_of) == ("devtools_api", D("2012-06-01"))
    assert [(t.name, t.due) for t in route.transitions] == [
        ("launch", D("2012-08-30")),
        ("monetize", D("2013-08-30")),
        ("expand", D("2017-08-30")),
    ]
    assert route.transitions[1].threshold is not None
    assert route.transitions[1].threshold.fields == ("developers", "paying_teams", "arr")


@pytest.mark.parametrize(
    ("on", "expected"),
    [
        ("2012-07-01", ["unresolved", "unresolved", "unresolved"]),
        ("2016-06-01", ["positive", "positive", "unresolved"]),
        ("2018-01-01", ["positive", "positive", "negative"]),
    ],
)
def test_the_documented_example_resolves_the_spec_route(
    spec_packet: dict[str, Any], on: str, expected: list[str]
) -> None:
    outs = parse_outcomes(doc_example(), "outcomes.toml")
    results = resolve_packets([spec_packet], outs, D(on))
    assert [r.status for r in results] == expected
    findings = check_outcomes(frozen_routes(spec_packet), outs)
    assert findings.errors == () and findings.warnings == ()
    assert [(o.label, o.bucket) for o in route_outcomes(outs, D("2016-06-01"))] == [("positive", "+")]


def test_the_spec_route_kill_at_start_is_not_a_failure(spec_packet: dict[str, Any]) -> None:
    """devtools_api starts with 0 developers and its launch kill is `developers < 100`."""
    outs = parse_outcomes(
        '[[observation]]\nroute = "devtools_api"\ndate = 2012-06-01\ndevelopers = 0\npaying_teams = 0\narr = 0\n'
        '[[observation]]\nroute = "devtools_api"\ndate = 2012-08-15\ndevelopers = 700\n',
        "o.toml",
    )
    results = resolve_packets([spec_packet], outs, D("2012-09-01"))
    assert [(r.transition, r.status) for r in results] == [
        ("launch", "positive"),
        ("monetize", "unresolved"),
        ("expand", "unresolved"),
    ]
    (warning,) = check_outcomes(frozen_routes(spec_packet), outs).warnings
    assert warning.startswith("observation[0].date: on or before as_of 2012-06-01")


# ---------------------------------------------------------------------- outcomes against packets
def test_unknown_route_is_a_warning_and_changes_nothing(spec_packet: dict[str, Any]) -> None:
    text = doc_example() + '\n[[observation]]\nroute = "devtools_apx"\ndate = 2012-07-01\ndevelopers = 1\n'
    text += '\n[[label]]\nroute = "nobody"\ndate = 2016-01-01\noutcome = "-"\n'
    outs = parse_outcomes(text, "o.toml")
    findings = check_outcomes(frozen_routes(spec_packet), outs)
    assert findings.errors == ()
    assert findings.warnings == (
        "observation[4].route: no packet has route `devtools_apx` (did you mean `devtools_api`?); ignored",
        "label[1].route: no packet has route `nobody`; ignored",
    )
    base = parse_outcomes(doc_example(), "o.toml")
    assert resolve_packets([spec_packet], outs, D("2016-06-01")) == resolve_packets(
        [spec_packet], base, D("2016-06-01")
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ("developer = 620", "observation[0].developer: route r has no field `developer` (did you mean `developers`?)"),
        ("zzz = 1", "observation[0].zzz: route r has no field `zzz`; its fields are arr, developers, paying_teams"),
        ("soc2 = 1", "observation[0].soc2: `soc2` is a bool field: expected true or false"),
        ("arr = true", "observation[0].arr: `arr` is a usd field: expected a number"),
        ("developers = -3", "observation[0].developers: `developers` is a count: expected a number >= 0"),
    ],
)
def test_observations_are_checked_against_the_route_fields(values: str, message: str) -> None:
    packet = route_packet(LAUNCH)
    outs = parse_outcomes(f'[[observation]]\nroute = "r"\ndate = 2012-07-01\n{values}\n', "o.toml")
    findings = check_outcomes(frozen_routes(packet), outs)
    expected = message if "its fields are" not in message else message.replace("arr, developers, paying_teams", "")
    assert len(findings.errors) == 1 and findings.errors[0].startswith(expected)


def test_a_ratio_above_one_is_a_warning() -> None:
    outs = parse_outcomes('[[observation]]\nroute = "r"\ndate = 2012-07-01\nretention = 45\n', "o.toml")
    findings = check_outcomes(frozen_routes(route_packet(LAUNCH)), outs)
    assert findings.errors == ()
    assert findings.warnings == (
        "observation[0].retention: `retention` is a ratio, written as a fraction: 45 is 4,500%",
    )


# ---------------------------------------------------------------------- packets
@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"routes": [{"route": "r", "transitions": []}]}, "routes[0].as_of: missing"),
        ({"routes": [{**route_packet(LAUNCH), "as_of": "June 2012"}]}, "routes[0].as_of: expected an ISO date"),
        (
            {"routes": [route_packet({"name": "t", "threshold": "x >= 1", "kill": None})]},
            "routes[0].transitions[0].due: missing; freeze the route again",
        ),
        (
            {"routes": [route_packet({**LAUNCH, "due": "2012-02-30"})]},
            "routes[0].transitions[0].due: expected an ISO date or null",
        ),
        (
            {"routes": [route_packet({**LAUNCH, "threshold": "developers >="})]},
            "routes[0].transitions[0].threshold: cannot read `developers >=`:",
        ),
        ({"routes": [route_packet({**LAUNCH, "kill": 3})]}, "routes[0].transitions[0].kill: expected the expression"),
        ({"routes": "none"}, "routes: expected an array"),
        ([{"pcsc": "0"}], "[0]: expected a `pcsc compile --format json` output or a route packet"),
        ({"packet": {"route": "r", "as_of": AS_OF}}, "packet.transitions: expected an array"),
    ],
)
def test_malformed_packets_are_refused_with_paths(doc: Any, message: str) -> None:
    with pytest.raises(PacketError) as caught:
        frozen_routes(doc, "p.json")
    assert caught.value.path == "p.json"
    assert any(m.startswith(message) for m in caught.value.messages), caught.value.messages


def test_packet_shapes_compile_output_route_packet_and_ledger_payload() -> None:
    packet = route_packet(LAUNCH)
    for doc in ({"routes": [packet]}, packet, {"packet": packet, "rank": {}}, [packet]):
        (route,) = frozen_routes(doc)
        assert route.route == "r" and route.transitions[0].name == "launch"


# ---------------------------------------------------------------------- the outcomes file
GOOD = """
[[observation]]
route = "r"
date = 2012-07-15
developers = 620
soc2 = true
source = "dashboard"

[[observation]]
route = "r"
date = 2012-07-15
developers = 620
arr = 1_200_000.5

[[label]]
route = "r"
date = 2016-06-01
outcome = "S+"

[[label]]
route = "r"
date = 2016-07-01
outcome = "negative"
"""


def test_a_valid_file_reads_into_frozen_values() -> None:
    outs = parse_outcomes(GOOD, "o.toml")
    first, second = outs.observations
    assert first == Observation("r", D("2012-07-15"), (("developers", 620.0), ("soc2", True)), "dashboard")
    assert second.values == (("arr", 1_200_000.5), ("developers", 620.0))
    assert isinstance(dict(first.values)["developers"], float) and dict(first.values)["soc2"] is True
    assert outs.labels == (
        Label("r", D("2016-06-01"), "positive", "S+"),
        Label("r", D("2016-07-01"), "negative", None),
    )
    with pytest.raises(AttributeError):
        first.route = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("bucket", "label"), [("S+", "positive"), ("+", "positive"), ("~", "mixed"), ("-", "negative")]
)
def test_paper_buckets_map_to_labels(bucket: str, label: str) -> None:
    outs = parse_outcomes(f'[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "{bucket}"\n', "o.toml")
    assert (outs.labels[0].outcome, outs.labels[0].bucket) == (label, bucket)


OBS = '[[observation]]\nroute = "r"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            OBS + 'date = "2012-09-15"\nx = 1\n',
            "observation[0].date: expected a date; write it unquoted: date = 2012-09-15",
        ),
        (OBS + 'date = "15/09/2012"\nx = 1\n', "observation[0].date: expected a date (YYYY-MM-DD, unquoted)"),
        (
            OBS + "date = 2012-09-15T10:00:00\nx = 1\n",
            "observation[0].date: expected a date (YYYY-MM-DD), not a date and time",
        ),
        (OBS + "date = 20120915\nx = 1\n", "observation[0].date: expected a date (YYYY-MM-DD, unquoted)"),
        (OBS + "x = 1\n", "observation[0]: missing key `date`"),
        ("[[observation]]\ndate = 2012-09-15\nx = 1\n", "observation[0]: missing key `route`"),
        ("[[observation]]\nroute = 3\ndate = 2012-09-15\nx = 1\n", "observation[0].route: expected a route name"),
        (OBS + "date = 2012-09-15\n", "observation[0]: no field values; write at least one"),
        (
            OBS + 'date = 2012-09-15\narr = "1.2M usd"\n',
            "observation[0].arr: expected a number or true/false, not a string; "
            "TOML numbers take no suffixes or units: write 1_200_000 for `1.2M usd`",
        ),
        (
            OBS + 'date = 2012-09-15\nretention = "12%"\n',
            "observation[0].retention: expected a number or true/false, not a string; "
            "TOML numbers take no suffixes or units: write 0.12 for `12%`",
        ),
        (
            OBS + 'date = 2012-09-15\nx = "620"\n',
            "observation[0].x: expected a number or true/false, not a string; write it unquoted: 620",
        ),
        (
            OBS + 'date = 2012-09-15\nx = "true"\n',
            "observation[0].x: expected a number or true/false, not a string; write it unquoted: true",
        ),
        (OBS + 'date = 2012-09-15\nx = "many"\n', "observation[0].x: expected a number or true/false, not a string"),
        (OBS + "date = 2012-09-15\nx = nan\n", "observation[0].x: expected a finite number"),
        (OBS + "date = 2012-09-15\nx = [1, 2]\n", "observation[0].x: expected a number or true/false, not an array"),
        (OBS + "date = 2012-09-15\nx = 2012-01-01\n", "observation[0].x: expected a number or true/false, not a date"),
        (OBS + "date = 2012-09-15\nx.y = 1\n", "observation[0].x: expected a number or true/false, not a table"),
        (OBS + 'date = 2012-09-15\n"two words" = 1\n', 'observation[0]."two words": not a field name'),
        (OBS + "date = 2012-09-15\nx = 1\nsource = 3\n", "observation[0].source: expected a string"),
        ('[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "win"\n', "label[0].outcome: expected one of"),
        ('[[label]]\nroute = "r"\ndate = 2016-01-01\n', "label[0]: missing key `outcome`"),
        (
            '[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "+"\nnote = "x"\n',
            "label[0].note: unknown key; a label has route, date, outcome, source, covariates",
        ),
        ("verdict = 1\n", "verdict: unknown key; an outcomes file holds [[observation]] and [[label]] tables"),
        (
            '[observation]\nroute = "r"\n',
            "observation: expected an array of tables; write each entry under [[observation]]",
        ),
        ("observation = [1]\n", "observation[0]: expected a table"),
        ("[[observation]\n", "not valid TOML: "),
        (
            OBS + "date = 2012-09-15\nx = 1\n" + OBS + "date = 2012-09-15\nx = 2\n",
            "observation[1].x: r on 2012-09-15 already has x = 1 (observation[0])",
        ),
        (
            OBS + "date = 2012-09-15\nx = 1\n" + OBS + "date = 2012-09-15\nx = true\n",
            "observation[1].x: r on 2012-09-15 already has x = 1 (observation[0])",
        ),
        (
            '[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "+"\n'
            '[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "-"\n',
            "label[1].outcome: r on 2016-01-01 is already labelled positive (label[0])",
        ),
    ],
)
def test_validation_messages_are_path_addressed(text: str, message: str) -> None:
    with pytest.raises(OutcomesError) as caught:
        parse_outcomes(text, "outcomes.toml")
    assert caught.value.path == "outcomes.toml"
    assert any(m.startswith(message) for m in caught.value.messages), caught.value.messages
    assert str(caught.value).startswith("outcomes.toml: ")


def test_every_problem_is_reported_at_once_with_file_indices() -> None:
    text = "".join(
        [
            OBS + "date = 2012-09-15\nx = 1\n",  # fine
            OBS + 'date = "2012-09-15"\nx = "5k"\n',  # two problems
            OBS + "date = 2012-09-16\nx = 1\n",  # fine
            OBS + "date = 2012-09-16\nx = 2\n",  # conflicts with observation[2]
        ]
    )
    with pytest.raises(OutcomesError) as caught:
        parse_outcomes(text, "o.toml")
    assert caught.value.messages == [
        "observation[1].date: expected a date; write it unquoted: date = 2012-09-15",
        "observation[1].x: expected a number or true/false, not a string; "
        "TOML numbers take no suffixes or units: write 5_000 for `5k`",
        "observation[3].x: r on 2012-09-16 already has x = 1 (observation[2])",
    ]


def test_the_documented_validation_messages_are_the_real_ones() -> None:
    doc = (ROOT / "docs" / "outcomes.md").read_text(encoding="utf-8")
    block = doc.split("## How a milestone resolves")[0].split("### Validation")[1]
    documented = [line for line in block.splitlines() if line.startswith("outcomes.toml: ")]
    text = "".join(
        [
            "verdict = 1\n",
            OBS + "date = 2012-09-15\nx = 1\n",
            OBS + "date = 2012-09-15\nx = 1\n",
            OBS + 'date = "2012-09-15"\nx = 1\n',
            OBS + 'date = 2012-09-16\narr = "1.2M usd"\n',
            '[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "win"\n',
            '[[label]]\nroute = "r"\ndate = 2016-01-01\noutcome = "+"\nnote = "x"\n',
        ]
    )
    with pytest.raises(OutcomesError) as caught:
        parse_outcomes(text, "outcomes.toml")
    assert len(documented) == 5
    assert sorted(documented) == sorted(f"outcomes.toml: {m}" for m in caught.value.messages)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(OutcomesError) as caught:
        load_outcomes(tmp_path / "missing.toml")
    assert caught.value.messages[0].startswith("cannot read the file")


def test_ledger_records_round_trip() -> None:
    outs = parse_outcomes(GOOD, "o.toml")
    records = [("observation", o.route, o.date, o.payload(), o.source) for o in outs.observations]
    records += [("label", lab.route, lab.date, lab.payload(), lab.source) for lab in outs.labels]
    assert outcomes_from_records(records, "o.toml") == outs
    with pytest.raises(OutcomesError, match=r"record 0: expected an observation"):
        outcomes_from_records([("observation", "r", D("2012-01-01"), {"values": {}}, None)])


# ---------------------------------------------------------------------- the command
def namespace(*argv: str) -> list[str]:
    return ["resolve", *argv]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path, spec_packet: dict[str, Any]) -> tuple[Path, Path]:
    packets = tmp_path / "packets.json"
    packets.write_text(json.dumps(spec_packet), encoding="utf-8")
    outs = tmp_path / "outcomes.toml"
    outs.write_text(doc_example(), encoding="utf-8")
    return outs, packets


def test_command_json(files: tuple[Path, Path]) -> None:
    outs, packets = files
    code, out, err = run(namespace(str(outs), "--packets", str(packets), "--as-of", "2016-06-01", "--format", "json"))
    assert (code, err) == (EXIT_OK, "")
    doc = json.loads(out)
    assert doc["ok"] is True and doc["as_of"] == "2016-06-01"
    assert doc["summary"] == {"positive": 2, "negative": 0, "unresolved": 1, "censored": 0}
    assert [(m["transition"], m["status"], m["decided_on"]) for m in doc["milestones"]] == [
        ("launch", "positive", "2012-07-15"),
        ("monetize", "positive", "2013-06-30"),
        ("expand", "unresolved", None),
    ]
    assert set(doc["milestones"][0]) == {"route", "transition", "as_of", "due", "status", "decided_on", "reason"}
    assert doc["routes"] == [{"route": "devtools_api", "label": "positive", "date": "2016-06-01", "bucket": "+"}]


def test_command_text_matches_the_documented_output(files: tuple[Path, Path]) -> None:
    outs, packets = files
    code, out, _ = run(namespace(str(outs), "--packets", str(packets), "--as-of", "2016-06-01"))
    assert code == EXIT_OK
    doc = (ROOT / "docs" / "outcomes.md").read_text(encoding="utf-8")
    assert out.strip() in doc
    assert out.startswith("resolved as of 2016-06-01: 2 positive, 0 negative, 1 unresolved, 0 censored\n")


def test_command_refuses_bad_outcomes_and_packets(tmp_path: Path, files: tuple[Path, Path]) -> None:
    _, packets = files
    bad = tmp_path / "bad.toml"
    bad.write_text('[[observation]]\nroute = "devtools_api"\ndate = 2012-07-01\ndevelopers = "5k"\n', encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    code, out, err = run(namespace(str(bad), "--packets", str(packets), "--packets", str(broken), "--format", "json"))
    assert (code, err) == (EXIT_INPUT, "")
    doc = json.loads(out)
    assert doc["ok"] is False and len(doc["errors"]) == 2
    assert doc["errors"][0].startswith(f"{bad}: observation[0].developers: expected a number or true/false")
    assert [(d["code"], d["file"]) for d in doc["diagnostics"]] == [("PCSC-E701", str(bad)), ("PCSC-E721", str(broken))]
    code, out, err = run(namespace(str(bad), "--packets", str(packets), "--packets", str(broken)))
    assert (code, out) == (EXIT_INPUT, "")
    first, second = err.splitlines()
    assert first.startswith(f"{bad}: error: observation[0].developers: expected a number or true/false")
    assert first.endswith(" [PCSC-E701]")
    assert second.startswith(f"{broken}: error: not JSON") and second.endswith(" [PCSC-E721]")


def test_command_refuses_fields_the_route_does_not_have(tmp_path: Path, files: tuple[Path, Path]) -> None:
    _, packets = files
    typo = tmp_path / "typo.toml"
    typo.write_text('[[observation]]\nroute = "devtools_api"\ndate = 2012-07-01\ndeveloper = 5\n', encoding="utf-8")
    code, out, err = run(namespace(str(typo), "--packets", str(packets), "--as-of", "2013-01-01"))
    assert (code, out) == (EXIT_INPUT, "")
    assert (f"{typo}: error: observation[0].developer: route devtools_api has no field `developer` "
            "(did you mean `developers`?) [PCSC-E702]") in err


def test_resolution_date() -> None:
    assert resolution_date("2016-06-01") == D("2016-06-01")
    assert resolution_date(None) == dt.datetime.now(dt.UTC).date()
    with pytest.raises(UsageError, match="--as-of"):
        resolution_date("yesterday")
