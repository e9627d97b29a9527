"""A kill bounded in time (`kill monthly_downloads < 500 by 2027-06-01`, or `by 6 months`
after the start of the transition's planned window): lowering checks the date falls in
the window, the packet carries it as `kill_by`, and `resolve` lets the kill hold only on
an observation, dated on or after it, of a field it names."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from pcsc.compiler.session import Session
from pcsc.forecast.outcomes import Observation, Outcomes
from pcsc.forecast.resolve import MilestoneResult, resolve_packets
from pcsc.lang.printer import route_to_text
from pcsc.policy.load import PolicyStore
from pcsc.render.packet import route_packet

D = dt.date.fromisoformat


def route_text(kill: str, horizons: tuple[str | None, str | None] = ("12 months", "12 months")) -> str:
    first, second = (f"horizon {h}" if h else "" for h in horizons)
    return f"""route oss "Open-source adoption" {{
    as_of   2026-01-01
    policy  "venture@1.0.0"
    uses    venture
    state a {{ developers 0 }}
    state b {{ developers 1k }}
    state c {{ developers 5k }}
    vision c {{ tam 1M usd  capture 10%  defensibility 1 }}
    transition grow: a -> b {{
        class "devtools/first-users"
        threshold developers >= 1k
        {first}
        cost {{ work 1 * 80k usd }}
    }}
    transition spread: b -> c {{
        class "devtools/first-users"
        threshold developers >= 5k
        kill {kill}
        {second}
        cost {{ work 1 * 80k usd }}
    }}
}}
"""


def compile_text(tmp_path: Path, text: str) -> tuple[Session, Any]:
    path = tmp_path / "oss.route"
    path.write_text(text, encoding="utf-8")
    session = Session(policies=PolicyStore([]))
    routes = session.load_routes(path, str(path))
    compiled = [session.compile_route(r) for r in routes]
    return session, compiled


def errors(session: Session) -> list[tuple[str, int, str]]:
    return [(d.code, d.span.line, d.message) for d in session.diags if d.severity == "error"]


# The second transition's planned window is (2027-01-01, 2028-01-01]: the first is due
# 2026-01-01 + 12 months, the second 12 months after that.
@pytest.mark.parametrize(("by", "armed"), [
    ("2027-06-01", "2027-06-01"),
    ("2028-01-01", "2028-01-01"),  # the due date itself is inside the window
    ("2027-01-02", "2027-01-02"),  # the day after the start
    ("6 months", "2027-07-01"),    # 2027-01-01 + 6 months
    ("12 months", "2028-01-01"),
    ("31 days", "2027-02-01"),
])
def test_a_bounded_kill_is_armed_on_a_date_inside_its_window(tmp_path: Path, by: str, armed: str) -> None:
    session, (c,) = compile_text(tmp_path, route_text(f"developers < 2k by {by}"))
    assert errors(session) == []
    t = c.route.transitions[1]
    assert t.kill_by == D(armed) and t.kill_text == "developers < 2k" and t.kill_by_text == by
    packet = route_packet(c)["transitions"]
    assert packet[1]["kill_by"] == armed and packet[1]["kill"] == "developers < 2k"
    assert "kill_by" not in packet[0]
    assert f"kill       developers < 2k by {by}" in route_to_text(c.route)


@pytest.mark.parametrize(("by", "fragment"), [
    ("2027-01-01", "armed on 2027-01-01, not after the start of its planned window (2027-01-01)"),
    ("2026-06-01", "armed on 2026-06-01, not after the start"),
    ("2028-01-02", "armed on 2028-01-02, after its due date 2028-01-01: it could never apply"),
    ("13 months", "armed on 2028-02-01, after its due date 2028-01-01"),
])
def test_a_kill_armed_outside_its_window_is_a_located_error(tmp_path: Path, by: str, fragment: str) -> None:
    session, compiled = compile_text(tmp_path, route_text(f"developers < 2k by {by}"))
    (code, line, message), = errors(session)
    assert code == "PCSC-E314" and line == 18 and fragment in message
    assert compiled == []  # the route does not lower


def test_a_relative_kill_needs_a_known_start(tmp_path: Path) -> None:
    session, _ = compile_text(tmp_path, route_text("developers < 2k by 6 months", (None, "12 months")))
    (code, line, message), = errors(session)
    assert code == "PCSC-E314" and line == 18 and "`by 6 months` counts from the start of `spread`" in message
    # a date needs no start
    session, (c,) = compile_text(tmp_path, route_text("developers < 2k by 2026-06-01", (None, None)))
    assert errors(session) == [] and c.route.transitions[1].kill_by == D("2026-06-01")


def test_a_kill_by_a_duration_without_a_unit_is_an_error(tmp_path: Path) -> None:
    session, _ = compile_text(tmp_path, route_text("developers < 2k by 6"))
    assert [code for code, _, _ in errors(session)] == ["PCSC-E301"]


# ---------------------------------------------------------------------- resolve
def packet(kill_by: str | None) -> dict[str, Any]:
    kill: dict[str, Any] = {"kill": "monthly_downloads < 500"}
    if kill_by is not None:
        kill["kill_by"] = kill_by
    return {
        "route": "oss", "as_of": "2026-01-01",
        "fields": [{"name": "monthly_downloads", "type": "count"}, {"name": "stars", "type": "count"}],
        "transitions": [{"name": "adopt", "from": "a", "to": "b", "p": 0.5, "horizon": None, "due": "2027-12-31",
                         "threshold": "monthly_downloads >= 5k", **kill}],
    }


def resolve(kill_by: str | None, *obs: tuple[str, dict[str, float]], on: str = "2027-12-31") -> MilestoneResult:
    observations = tuple(Observation("oss", D(day), tuple(sorted(v.items()))) for day, v in obs)
    (result,) = resolve_packets([packet(kill_by)], Outcomes("outcomes.toml", observations, ()), D(on))
    return result


def test_an_unbounded_kill_fires_on_the_first_early_reading() -> None:
    r = resolve(None, ("2026-02-01", {"monthly_downloads": 40}))
    assert (r.status, r.decided_on) == ("negative", D("2026-02-01"))


def test_before_the_date_a_bounded_kill_does_not_fire() -> None:
    # the early reading is below 500, but the kill is armed only from 2027-06-01
    r = resolve("2027-06-01", ("2026-02-01", {"monthly_downloads": 40}), ("2027-05-31", {"monthly_downloads": 400}),
                on="2027-06-15")
    assert r.status == "unresolved" and "not yet due" in r.reason


def test_on_the_date_a_bounded_kill_fires() -> None:
    r = resolve("2027-06-01", ("2026-02-01", {"monthly_downloads": 40}), ("2027-06-01", {"monthly_downloads": 400}))
    assert (r.status, r.decided_on) == ("negative", D("2027-06-01"))
    assert "kill `monthly_downloads < 500` (armed 2027-06-01) held on 2027-06-01" in r.reason


def test_after_the_date_a_bounded_kill_fires_on_a_reading_of_its_field() -> None:
    # a reading of another field after the date does not revive the stale early value
    r = resolve("2027-06-01", ("2026-02-01", {"monthly_downloads": 40}), ("2027-07-01", {"stars": 10}),
                ("2027-08-01", {"monthly_downloads": 450}))
    assert (r.status, r.decided_on) == ("negative", D("2027-08-01"))


def test_after_the_date_a_reading_above_the_kill_leaves_the_threshold_to_decide() -> None:
    r = resolve("2027-06-01", ("2026-02-01", {"monthly_downloads": 40}), ("2027-06-02", {"monthly_downloads": 900}),
                ("2027-09-01", {"monthly_downloads": 5000}))
    assert (r.status, r.decided_on) == ("positive", D("2027-09-01"))


def test_the_compile_document_with_a_bounded_kill_fits_its_schema(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from pcsc.cli import main
    from pcsc.render import schemas

    path = tmp_path / "oss.route"
    path.write_text(route_text("developers < 2k by 6 months"), encoding="utf-8")
    assert main(["compile", str(path), "--format", "json"]) == 3  # nothing discharged: GATE refuses
    document = json.loads(capsys.readouterr().out)
    schemas.validate(document)
    assert document["routes"][0]["transitions"][1]["kill_by"] == "2027-07-01"
    bad = json.loads(json.dumps(document))
    bad["routes"][0]["transitions"][1]["kill_by"] = 20270701
    with pytest.raises(Exception, match="20270701"):
        schemas.validate(bad)


@pytest.mark.parametrize(("by", "code"), [("2027-02-30", "PCSC-E306"), ("-6 months", "PCSC-E307"),
                                          ("1.5 months", "PCSC-E307")])
def test_a_bad_date_or_duration_after_by_is_a_located_error(tmp_path: Path, by: str, code: str) -> None:
    session, compiled = compile_text(tmp_path, route_text(f"developers < 2k by {by}"))
    assert [(c, line) for c, line, _ in errors(session)] == [(code, 18)] and compiled == []
