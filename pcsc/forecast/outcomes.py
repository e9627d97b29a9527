"""Outcome observations and route-level labels (docs/forecast.md), read from TOML.

An outcomes file holds `[[observation]]` tables (a route, a date, and the values of
some of its state fields observed on that date) and `[[label]]` tables (a route-level
outcome). Validation is strict and every problem is addressed by its path,
`observation[2].date: expected a date`, indices counted from 0. The format is
described in docs/outcomes.md.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from pcsc.base.files import Unreadable, read_text
from pcsc.diagnostics.messages import (
    E701_BAD_RECORD,
    E701_CANNOT_READ,
    E701_COVARIATES_NOT_A_TABLE,
    E701_DATE_AND_TIME,
    E701_HINT_NO_SUFFIX,
    E701_HINT_UNQUOTED,
    E701_LABELLED_TWICE,
    E701_MISSING_KEY,
    E701_NESTED_TOO_DEEPLY,
    E701_NO_FIELD_VALUES,
    E701_NOT_A_COVARIATE,
    E701_NOT_A_DATE,
    E701_NOT_A_FIELD_NAME,
    E701_NOT_A_ROUTE_NAME,
    E701_NOT_A_TABLE,
    E701_NOT_A_VALUE,
    E701_NOT_AN_ARRAY,
    E701_NOT_AN_OUTCOME,
    E701_NOT_FINITE,
    E701_NOT_TOML,
    E701_NOT_USABLE,
    E701_OBSERVED_TWICE,
    E701_QUOTED_DATE,
    E701_SOURCE_NOT_A_STRING,
    E701_UNKNOWN_LABEL_KEY,
    E701_UNKNOWN_TOP_KEY,
    phrase,
)
from pcsc.lang.printer import number as literal_number

Value = float | bool
Covariate = float | bool | str  # a number, true/false, or a yes/no word (coded by `pcsc evaluate`)
LabelOutcome = Literal["positive", "negative", "mixed"]

#: The paper's route-level buckets, mapped to the label that route-level grading uses.
#: As in the paper's binary analysis, "~" (mixed) is kept but left out of grading.
BUCKETS: dict[str, LabelOutcome] = {"S+": "positive", "+": "positive", "~": "mixed", "-": "negative"}
OUTCOMES: tuple[LabelOutcome, ...] = ("positive", "negative", "mixed")

#: Keys of an `[[observation]]` table that are not field values.
OBSERVATION_KEYS = ("route", "date", "source")
LABEL_KEYS = ("route", "date", "outcome", "source", "covariates")
TOP_KEYS = ("observation", "label")

_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SUFFIXED = re.compile(r"\s*(-?[0-9][0-9_]*(?:\.[0-9_]+)?)\s*([kMB%])?\s*(usd|days|months|years)?\s*\Z")


@attrs.frozen
class Observation:
    """Field values of one route observed on one date; ``values`` sorted by field name."""

    route: str
    date: dt.date
    values: tuple[tuple[str, Value], ...]
    source: str | None = None

    def payload(self) -> dict[str, Any]:
        """The ledger payload of an `observation` outcome: ``{"fields": {...}}``."""
        return {"fields": dict(self.values)}


@attrs.frozen
class Label:
    """A route-level outcome. ``bucket`` keeps the paper's bucket when one was given."""

    route: str
    date: dt.date
    outcome: LabelOutcome
    bucket: str | None = None
    source: str | None = None
    covariates: tuple[tuple[str, Covariate], ...] = ()  # sorted by name

    def payload(self) -> dict[str, Any]:
        """The ledger payload of a `label` outcome: ``{"label": ..., "bucket": ...}``, and
        ``"covariates"`` when the label has any (so labels without are stored as before)."""
        extra = {"covariates": dict(self.covariates)} if self.covariates else {}
        return {"label": self.outcome, "bucket": self.bucket, **extra}


@attrs.frozen
class Outcomes:
    """A validated outcomes file; entries keep file order (the indices of messages)."""

    path: str
    observations: tuple[Observation, ...] = ()
    labels: tuple[Label, ...] = ()


class OutcomesError(Exception):
    """An outcomes file cannot be used; ``messages`` are path-addressed, one per problem."""

    def __init__(self, path: str, messages: list[str]) -> None:
        super().__init__("; ".join(f"{path}: {m}" for m in messages))
        self.path = path
        self.messages = messages


def load_outcomes(path: str | Path, shown: str | None = None) -> Outcomes:
    """Read and validate an outcomes file; ``shown`` is the name used in messages."""
    name = shown if shown is not None else str(path)
    try:
        text = read_text(path)
    except Unreadable as exc:
        raise OutcomesError(name, [phrase(E701_CANNOT_READ, reason=exc.reason)]) from None
    return parse_outcomes(text, name)


def parse_outcomes(text: str, path: str) -> Outcomes:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise OutcomesError(path, [phrase(E701_NOT_TOML, reason=exc)]) from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise OutcomesError(path, [phrase(E701_NESTED_TOO_DEEPLY)]) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise OutcomesError(path, [phrase(E701_NOT_USABLE, reason=exc)]) from None
    return outcomes_from_toml(doc, path)


def outcomes_from_toml(doc: Mapping[str, Any], path: str) -> Outcomes:
    """Validate a parsed TOML document; raises OutcomesError with every problem found."""
    problems: list[str] = []
    for key in doc:
        if key not in TOP_KEYS:
            problems.append(phrase(E701_UNKNOWN_TOP_KEY, key=key))
    observations = [
        (i, o) for i, t in enumerate(_tables(doc, "observation", problems)) if (o := _observation(t, i, problems))
    ]
    labels = [(i, lab) for i, t in enumerate(_tables(doc, "label", problems)) if (lab := _label(t, i, problems))]
    problems.extend(_conflicts(observations, labels))
    if problems:
        raise OutcomesError(path, problems)
    # without problems every entry is kept, so positions are the file's indices
    return Outcomes(path, tuple(o for _, o in observations), tuple(lab for _, lab in labels))


def outcomes_from_records(
    records: Iterable[tuple[str, str, dt.date, Mapping[str, Any], str | None]], path: str = "ledger"
) -> Outcomes:
    """Outcomes from stored records ``(kind, route, date, payload, source)`` in stored order,
    ``kind`` being "observation" or "label" and ``payload`` what `payload()` wrote.
    Validated like a file: problems are addressed as ``observation[i]`` / ``label[i]``."""
    doc: dict[str, list[dict[str, Any]]] = {"observation": [], "label": []}
    problems: list[str] = []
    for n, (kind, route, date, payload, source) in enumerate(records):
        extra = {} if source is None else {"source": source}
        if kind == "observation" and isinstance(payload.get("fields"), Mapping):
            doc["observation"].append({"route": route, "date": date, **payload["fields"], **extra})
        elif kind == "label" and "label" in payload:
            outcome = payload["label"] if payload.get("bucket") is None else payload["bucket"]
            covariates = {"covariates": payload["covariates"]} if "covariates" in payload else {}
            doc["label"].append({"route": route, "date": date, "outcome": outcome, **extra, **covariates})
        else:
            problems.append(phrase(E701_BAD_RECORD, n=n))
    if problems:
        raise OutcomesError(path, problems)
    return outcomes_from_toml(doc, path)


# ---------------------------------------------------------------------- tables
def _tables(doc: Mapping[str, Any], key: str, problems: list[str]) -> list[Mapping[str, Any] | None]:
    """The array of tables under ``key``; a non-table element is reported and kept as None
    so that later indices stay those of the file."""
    if key not in doc:
        return []
    value = doc[key]
    if not isinstance(value, list):
        problems.append(phrase(E701_NOT_AN_ARRAY, key=key))
        return []
    out: list[Mapping[str, Any] | None] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            out.append(item)
        else:
            problems.append(phrase(E701_NOT_A_TABLE, key=key, i=i))
            out.append(None)
    return out


def _route(table: Mapping[str, Any], where: str, problems: list[str]) -> str | None:
    if "route" not in table:
        problems.append(phrase(E701_MISSING_KEY, where=where, key="route"))
        return None
    value = table["route"]
    if not isinstance(value, str) or not _FIELD.match(value):
        problems.append(phrase(E701_NOT_A_ROUTE_NAME, where=where))
        return None
    return value


def _date(table: Mapping[str, Any], where: str, problems: list[str]) -> dt.date | None:
    if "date" not in table:
        problems.append(phrase(E701_MISSING_KEY, where=where, key="date"))
        return None
    value = table["date"]
    if isinstance(value, dt.datetime):
        problems.append(phrase(E701_DATE_AND_TIME, where=where))
        return None
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            problems.append(phrase(E701_NOT_A_DATE, where=where))
        else:
            problems.append(phrase(E701_QUOTED_DATE, where=where, value=value))
        return None
    problems.append(phrase(E701_NOT_A_DATE, where=where))
    return None


def _source(table: Mapping[str, Any], where: str, problems: list[str]) -> str | None:
    value = table.get("source")
    if value is not None and not isinstance(value, str):
        problems.append(phrase(E701_SOURCE_NOT_A_STRING, where=where))
        return None
    return value


def _observation(table: Mapping[str, Any] | None, i: int, problems: list[str]) -> Observation | None:
    if table is None:
        return None
    where = f"observation[{i}]"
    before = len(problems)
    route = _route(table, where, problems)
    date = _date(table, where, problems)
    source = _source(table, where, problems)
    values: list[tuple[str, Value]] = []
    for key, raw in table.items():
        if key in OBSERVATION_KEYS:
            continue
        if not _FIELD.match(key):
            problems.append(phrase(E701_NOT_A_FIELD_NAME, where=where, key=_quoted(key)))
            continue
        value = field_value(raw, f"{where}.{key}", problems)
        if value is not None:
            values.append((key, value))
    if len(problems) == before and not values:
        problems.append(phrase(E701_NO_FIELD_VALUES, where=where))
    if len(problems) > before or route is None or date is None:
        return None
    return Observation(route, date, tuple(sorted(values)), source)


def field_value(raw: Any, where: str, problems: list[str]) -> Value | None:
    """A field value: a TOML number (converted to float) or a boolean."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, (int, float)):
        try:
            value = float(raw)  # an integer past 1.8e308 has no float
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            problems.append(phrase(E701_NOT_FINITE, where=where))
            return None
        return value
    if isinstance(raw, str):
        problems.append(phrase(E701_NOT_A_VALUE, where=where, kind="a string", hint=_string_hint(raw)))
        return None
    kind = (
        "a date"
        if isinstance(raw, (dt.date, dt.time))
        else "an array"
        if isinstance(raw, list)
        else "a table"
        if isinstance(raw, dict)
        else type(raw).__name__
    )
    problems.append(phrase(E701_NOT_A_VALUE, where=where, kind=kind, hint=""))
    return None


def _string_hint(raw: str) -> str:
    """Suggest the TOML spelling of a value written the way a .route file writes it."""
    text = raw.strip()
    if text in ("true", "false"):
        return phrase(E701_HINT_UNQUOTED, text=text)
    match = _SUFFIXED.match(text)
    if match is None:
        return ""
    from pcsc.lang.syntax.literals import parse_number

    number, suffix = match.group(1), match.group(2) or ""
    value, _ = parse_number(number + suffix)
    if not math.isfinite(value):  # pragma: no cover - the pattern admits only finite numerals
        return ""
    plain = _plain(value)
    if suffix or match.group(3):
        return phrase(E701_HINT_NO_SUFFIX, plain=plain, text=text)
    return phrase(E701_HINT_UNQUOTED, text=plain)


def _plain(value: float) -> str:
    """A value as an outcomes file writes it (`4_800`, `900_000`, `0.69`): one TOML
    literal, the same for every value a message quotes."""
    return literal_number(value)


def _label(table: Mapping[str, Any] | None, i: int, problems: list[str]) -> Label | None:
    if table is None:
        return None
    where = f"label[{i}]"
    before = len(problems)
    for key in table:
        if key not in LABEL_KEYS:
            problems.append(phrase(E701_UNKNOWN_LABEL_KEY, where=where, key=_quoted(key), keys=", ".join(LABEL_KEYS)))
    route = _route(table, where, problems)
    date = _date(table, where, problems)
    source = _source(table, where, problems)
    outcome: LabelOutcome | None = None
    bucket: str | None = None
    if "outcome" not in table:
        problems.append(phrase(E701_MISSING_KEY, where=where, key="outcome"))
    else:
        raw = table["outcome"]
        if raw == "positive" or raw == "negative":
            outcome = raw
        elif isinstance(raw, str) and raw in BUCKETS:
            outcome, bucket = BUCKETS[raw], raw
        else:
            choices = ", ".join(f'"{c}"' for c in (*OUTCOMES, *BUCKETS))
            problems.append(phrase(E701_NOT_AN_OUTCOME, where=where, choices=choices))
    covariates = _covariates(table.get("covariates", {}), where, problems)
    if len(problems) > before or route is None or date is None or outcome is None:
        return None
    return Label(route, date, outcome, bucket, source, covariates)


def _covariates(raw: Any, where: str, problems: list[str]) -> tuple[tuple[str, Covariate], ...]:
    """A label's `covariates` table: names to numbers, true/false or words, sorted by name."""
    if not isinstance(raw, dict):
        problems.append(phrase(E701_COVARIATES_NOT_A_TABLE, where=where))
        return ()
    out = []
    for name, value in sorted(raw.items()):
        ok = (isinstance(value, bool) or isinstance(value, str)
              or (isinstance(value, int | float) and math.isfinite(value)))
        if not _FIELD.match(name) or not ok:
            problems.append(phrase(E701_NOT_A_COVARIATE, where=where, name=_quoted(name)))
            continue
        out.append((name, value if isinstance(value, bool | str) else float(value)))
    return tuple(out)


def _quoted(key: str) -> str:
    return key if _FIELD.match(key) else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _conflicts(observations: list[tuple[int, Observation]], labels: list[tuple[int, Label]]) -> list[str]:
    """Two observations of one route on one date may share a field only with one value;
    two labels of one route on one date must agree. Entries come with their file index."""
    problems: list[str] = []
    seen: dict[tuple[str, dt.date, str], tuple[int, Value]] = {}
    for i, obs in observations:
        for field, value in obs.values:
            key = (obs.route, obs.date, field)
            if key in seen and not same_value(seen[key][1], value):
                j, other = seen[key]
                problems.append(phrase(E701_OBSERVED_TWICE, i=i, field=field, route=obs.route,
                                       date=obs.date.isoformat(), value=plain_value(other), j=j))
            seen.setdefault(key, (i, value))
    said: dict[tuple[str, dt.date], tuple[int, Label]] = {}
    for i, lab in labels:
        key2 = (lab.route, lab.date)
        if key2 in said and said[key2][1].outcome != lab.outcome:
            j, other_label = said[key2]
            problems.append(phrase(E701_LABELLED_TWICE, i=i, route=lab.route, date=lab.date.isoformat(),
                                   outcome=other_label.outcome, j=j))
        said.setdefault(key2, (i, lab))
    return problems


def same_value(a: Value, b: Value) -> bool:
    """Equal and of one kind: `true` is not the number 1 here."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def plain_value(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _plain(value)
