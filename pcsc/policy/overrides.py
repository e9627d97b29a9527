"""What-if overrides: `--set KEY=VALUE` on `compile` and `policy diff`.

A key is a policy key by its TOML path (`reweighting.decay`, `priors."devtools/scale".p`,
quoted segments for keys with `/` or other characters a bare TOML key cannot hold), or
one of the route's vision values, `vision.NAME` (`vision.tam`, `vision.capture`,
`vision.defensibility` under the default formula; also spelled `route.vision.tam`): the
policy's own `[vision]` keys are `vision.value` and `vision.fields.NAME`, which no
vision field may be named, so the two never clash,
or, always behind `route.`, the amount of one cost item of a transition
(`route.transitions.launch.cost.engineers`, the unit amount: the count is kept) or the
weight of one evidence item (`route.evidence.hn_launch.weight`).

A value is read as a TOML literal first (`0.2`, `5`, `true`, `"dock"`, `[[1e5, 5e4]]`),
else as a number of the route language (`5B`, `12%`, `1.5M usd`: `_`, `k`/`M`/`B`, `%`
and a trailing unit), else as a bare word (a string).

An overridden policy is the resolved document with each key set, validated as a policy
file is, and hashed again: its sha256 is not the file's, and it is never written. The
route overrides replace the vision values of every route compiled.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from pcsc.base.canonical import hash_json
from pcsc.diagnostics.messages import (
    E901_BAD_SEGMENT_START,
    E901_EMPTY_KEY,
    E901_ENDS_WITH_DOT,
    E901_NAMES_THE_POLICY,
    E901_NEGATIVE_COST,
    E901_NO_DOT,
    E901_NO_SUCH_COST_ITEM,
    E901_NO_SUCH_EVIDENCE,
    E901_NO_SUCH_VISION_ITEM,
    E901_NOT_A_NUMBER,
    E901_NOT_A_ROUTE_KEY,
    E901_NOT_A_TABLE,
    E901_NOT_A_VALUE,
    E901_NOT_FINITE,
    E901_NOT_KEY_VALUE,
    E901_TAM,
    E901_UNCLOSED_QUOTE,
    E901_UNKNOWN_VISION_KEY,
    E901_VISION_NEGATIVE,
    E901_VISION_RATIO,
    E901_WEIGHT,
    phrase,
)
from pcsc.lang.ir import Route
from pcsc.lang.syntax.literals import parse_number
from pcsc.policy.load import PolicyError, PolicyStore, _jsonable, structure
from pcsc.policy.model import LoadedPolicy

ROUTE_KEYS = ("tam", "capture", "defensibility")  # the default formula's fields
POLICY_VISION_KEYS = ("value", "fields")  # `[vision]` keys of the policy, never a field's name


class OverrideError(Exception):
    """An override that cannot be applied; ``messages`` are addressed by key path."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


@attrs.frozen
class Override:
    text: str  # as given: `priors."devtools/scale".p=0.2`
    path: tuple[str, ...]  # the key's segments, unquoted
    value: Any
    target: str  # "policy" | "route"

    @property
    def key(self) -> str:
        return format_path(self.path)

    def json(self) -> dict[str, Any]:
        return {"set": self.text, "key": self.key, "path": list(self.path), "value": self.value,
                "applies_to": self.target}


_BARE = re.compile(r"[A-Za-z0-9_-]+")
# a segment of a --set key may also hold `/` unquoted: a shell strips the quotes of
# `priors."devtools/scale".p`, and a class name never holds a `.`
_SEGMENT = re.compile(r"[A-Za-z0-9_/-]+")


def format_path(path: Sequence[str]) -> str:
    return ".".join(p if _BARE.fullmatch(p) else '"' + p.replace('"', '\\"') + '"' for p in path)


def split_key(key: str) -> tuple[str, ...]:
    """`priors."devtools/scale".p` -> ("priors", "devtools/scale", "p")."""
    parts: list[str] = []
    i, n = 0, len(key)
    while i < n:
        if key[i] == '"':
            end = key.find('"', i + 1)
            if end < 0:
                raise OverrideError([phrase(E901_UNCLOSED_QUOTE, key=key)])
            parts.append(key[i + 1 : end])
            i = end + 1
        else:
            m = _SEGMENT.match(key, i)
            if m is None:
                raise OverrideError([phrase(E901_BAD_SEGMENT_START, key=key, char=key[i])])
            parts.append(m.group())
            i = m.end()
        if i < n:
            if key[i] != ".":
                raise OverrideError([phrase(E901_NO_DOT, key=key)])
            i += 1
            if i == n:
                raise OverrideError([phrase(E901_ENDS_WITH_DOT, key=key)])
    if not parts:
        raise OverrideError([phrase(E901_EMPTY_KEY)])
    return tuple(parts)


_NUMBER = re.compile(r"\s*([-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?[kMB]?%?)(?:\s*([A-Za-z]+))?\s*")


def parse_value(text: str) -> Any:
    """A TOML literal, else a number as the route language writes it, else a bare word."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        pass
    m = _NUMBER.fullmatch(text)
    if m is not None:
        raw = m.group(1)
        sign = -1.0 if raw.startswith("-") else 1.0
        value, _ = parse_number(raw.lstrip("+-"))
        return sign * value
    if _BARE.fullmatch(text):
        return text
    raise OverrideError([phrase(E901_NOT_A_VALUE, text=text)])


def finite_value(key: str, value: Any) -> Any:
    """``value``, when every number in it is finite; else an `OverrideError` (TOML reads
    `nan`, `inf` and `1e309` as floats, and no policy or route number may be one)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise OverrideError([phrase(E901_NOT_FINITE, key=key, value=value)])
    for item in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        finite_value(key, item)
    return value


def parse_override(text: str) -> Override:
    key, eq, value = text.partition("=")
    key = key.strip()
    if not eq or not key:
        raise OverrideError([phrase(E901_NOT_KEY_VALUE, text=text)])
    path = split_key(key)
    parsed = finite_value(key, parse_value(value.strip()))
    if path[0] == "route":
        path = path[1:]
        if path and path[0] in ("transitions", "evidence"):
            return _route_item(text, key, ("route", *path), parsed)
        if not path or path[0] != "vision":
            raise OverrideError([phrase(E901_NOT_A_ROUTE_KEY, key=key)])
    if path[0] == "vision" and path[1:2] in (("value",), ("fields",)) and not key.startswith("route."):
        return Override(text, path, parsed, "policy")  # the policy's formula and its fields
    if path[0] == "vision":
        if len(path) != 2 or path[1] in POLICY_VISION_KEYS:
            raise OverrideError([phrase(E901_UNKNOWN_VISION_KEY, key=key)])
        if isinstance(parsed, bool) or not isinstance(parsed, (int, float)):
            raise OverrideError([phrase(E901_NOT_A_NUMBER, key=key)])
        number = float(parsed)
        if path[1] == "tam" and not 0.0 <= number < float("inf"):
            raise OverrideError([phrase(E901_TAM, key=key, number=number)])
        if path[1] in ROUTE_KEYS[1:] and not 0.0 <= number <= 1.0:
            raise OverrideError([phrase(E901_VISION_RATIO, key=key, item=path[1], number=number)])
        if not 0.0 <= number < float("inf"):  # the policy's kind of the field is checked when the route binds
            raise OverrideError([phrase(E901_VISION_NEGATIVE, key=key, item=path[1], number=number)])
        return Override(text, path, number, "route")
    return Override(text, path, parsed, "policy")


def _route_item(text: str, key: str, path: tuple[str, ...], parsed: Any) -> Override:
    """`route.transitions.T.cost.ITEM=AMOUNT` (usd, at least 0) or `route.evidence.E.weight=W` (in [0, 1])."""
    cost = path[1] == "transitions" and len(path) == 5 and path[3] == "cost"
    weight = path[1] == "evidence" and len(path) == 4 and path[3] == "weight"
    if not (cost or weight):
        raise OverrideError([phrase(E901_NOT_A_ROUTE_KEY, key=key)])
    if isinstance(parsed, bool) or not isinstance(parsed, (int, float)):
        raise OverrideError([phrase(E901_NOT_A_NUMBER, key=key)])
    number = float(parsed)
    if cost and not number >= 0.0:
        raise OverrideError([phrase(E901_NEGATIVE_COST, key=key, number=number)])
    if weight and not 0.0 <= number <= 1.0:
        raise OverrideError([phrase(E901_WEIGHT, key=key, number=number)])
    return Override(text, path, number, "route")


def parse_overrides(texts: Iterable[str]) -> tuple[Override, ...]:
    """Every override; an `OverrideError` with one message per bad one."""
    out: list[Override] = []
    problems: list[str] = []
    for text in texts:
        try:
            out.append(parse_override(text))
        except OverrideError as exc:
            problems.extend(exc.messages)
    if problems:
        raise OverrideError(problems)
    return tuple(out)


# ---------------------------------------------------------------------- policies
def set_key(document: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set ``path`` in ``document``, creating tables on the way (validation judges them)."""
    node: Any = document
    for i, part in enumerate(path[:-1]):
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        elif not isinstance(nxt, dict):
            raise OverrideError([phrase(E901_NOT_A_TABLE, key=format_path(path[: i + 1]))])
        else:
            nxt = node[part] = dict(nxt)
        node = nxt
    node[path[-1]] = value


def override_policy(loaded: LoadedPolicy, overrides: Sequence[Override]) -> LoadedPolicy:
    """``loaded`` with the policy overrides set in its resolved document, validated and
    hashed again; unchanged when there is none. Raises `OverrideError`."""
    chosen = [o for o in overrides if o.target == "policy"]
    if not chosen:
        return loaded
    document: dict[str, Any] = _jsonable(loaded.resolved)
    for o in chosen:
        if o.path[0] == "policy" and len(o.path) == 2 and o.path[1] in ("id", "version", "extends"):
            raise OverrideError([phrase(E901_NAMES_THE_POLICY, key=o.key)])
        set_key(document, o.path, o.value)
    try:
        policy = structure(document, f"{loaded.path} with --set")
    except PolicyError as exc:
        raise OverrideError(list(exc.messages)) from None
    return LoadedPolicy(policy, loaded.path, hash_json(document), document, loaded.found)


@attrs.define
class OverridingStore(PolicyStore):
    """A policy store whose every policy a route pins comes with the overrides applied
    (the policies it extends are read as they are). Raises `OverrideError`."""

    overrides: tuple[Override, ...] = ()
    _overridden: dict[str, LoadedPolicy] = attrs.field(factory=dict)

    def load_ref(self, ref: str, _chain: tuple[str, ...] = ()) -> LoadedPolicy:
        loaded = super().load_ref(ref, _chain)
        if _chain:
            return loaded
        if ref not in self._overridden:
            self._overridden[ref] = override_policy(loaded, self.overrides)
        return self._overridden[ref]


# ---------------------------------------------------------------------- routes
def override_route(route: Route, overrides: Sequence[Override]) -> Route:
    """``route`` with the route overrides set: vision values, cost amounts and evidence
    weights (an override naming a transition, item or evidence the route does not have
    leaves it as it is; `unmatched` reports one that no route has)."""
    chosen = [o for o in overrides if o.target == "route"]
    if not chosen:
        return route
    values = {o.path[1]: o.value for o in chosen if o.path[0] == "vision"}
    costs = {(o.path[2], o.path[4]): o.value for o in chosen if o.path[:2] == ("route", "transitions")}
    weights = {o.path[2]: o.value for o in chosen if o.path[:2] == ("route", "evidence")}
    if values:
        route = attrs.evolve(route, vision=route.vision.replace(values))
    if costs:
        route = attrs.evolve(route, transitions=tuple(
            attrs.evolve(t, cost=tuple(
                attrs.evolve(i, unit_cost=costs[t.name, i.name]) if (t.name, i.name) in costs else i
                for i in t.cost
            ))
            for t in route.transitions
        ))
    if weights:
        route = attrs.evolve(route, evidence=tuple(
            attrs.evolve(e, weight=weights[e.name]) if e.name in weights else e for e in route.evidence
        ))
    return route


def unmatched(routes: Sequence[Route], overrides: Sequence[Override]) -> list[str]:
    """A message for each cost or evidence override that no route of ``routes`` has."""
    out: list[str] = []
    for o in overrides:
        if o.path[:2] == ("route", "transitions"):
            t, item = o.path[2], o.path[4]
            if not any(i.name == item for r in routes for tr in r.transitions if tr.name == t for i in tr.cost):
                out.append(phrase(E901_NO_SUCH_COST_ITEM, key=o.key, transition=t, item=item))
        elif o.target == "route" and o.path[0] == "vision" and routes:
            if not any(i.name == o.path[1] for r in routes for i in r.vision.items):
                out.append(phrase(E901_NO_SUCH_VISION_ITEM, key=o.key, item=o.path[1]))
        elif o.path[:2] == ("route", "evidence"):
            if not any(e.name == o.path[2] for r in routes for e in r.evidence):
                out.append(phrase(E901_NO_SUCH_EVIDENCE, key=o.key, evidence=o.path[2]))
    return out
