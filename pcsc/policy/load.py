"""Read, merge (`extends`), validate and hash policy files.

Validation is strict: unknown keys and wrong types are refused with the path of the
offending key, e.g. `policies/venture/1.0.0.toml: reweighting.decay: expected a number`.
Numbers are never coerced from strings.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tomllib
import typing
from functools import cache
from pathlib import Path
from typing import Any

import attrs
import cattrs
import cattrs.gen
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)

from pcsc.base.canonical import hash_json
from pcsc.base.config import Config, ConfigError
from pcsc.base.files import NotText, Unreadable, read_bytes, read_text
from pcsc.base.resources import data_dir
from pcsc.base.resources import display_path as _display
from pcsc.diagnostics import codes
from pcsc.diagnostics.codes import Code
from pcsc.diagnostics.messages import E415_VISION_FORMULA, diag
from pcsc.diagnostics.model import Diagnostics, Finding, Span
from pcsc.lang.interp import BASE_FUNCTIONS
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.names import REFERENCE_RULE, is_name, is_sha256, is_version, split_policy_ref
from pcsc.lang.ir.visit import walk
from pcsc.lang.ir.vocabulary import EVIDENCE_NAMES, REQUIRE_FUNCTIONS, REQUIRE_NAMES
from pcsc.lang.lower.common import suggest
from pcsc.lang.lower.expr import lower_expression
from pcsc.lang.lower.units import GATE_DIMENSIONS, unit_problems
from pcsc.lang.lower.vision import VISION_KINDS, listed
from pcsc.lang.syntax import parse_expression
from pcsc.policy.model import Admission, Found, FoundIn, LoadedPolicy, Policy, PolicyValueError, Registry

MAX_EXTENDS = 32  # policies in one `extends` chain, the policy itself included


class PolicyError(Exception):
    """A policy cannot be used; ``messages`` are path-addressed, one per problem.
    ``located`` gives some of them a code of their own and the line of the policy file
    that wrote the key (the vision's formula, the units): (code, line)."""

    def __init__(self, path: str, messages: list[str], located: dict[str, tuple[Code, int]] | None = None) -> None:
        super().__init__("; ".join(f"{path}: {m}" for m in messages))
        self.path = path
        self.messages = messages
        self.located = located or {}


def located_policy_problem(exc: PolicyError, problem: str) -> Finding:
    """The diagnostic of one of ``exc``'s messages, at the policy file's line when it
    has one (a vision formula's problem: PCSC-E415, with its help)."""
    code, line = exc.located.get(problem, (codes.E403, 0))
    if code is codes.E415:
        return diag(E415_VISION_FORMULA, Span.file_only(exc.path, line), problem=problem)
    return Finding.of(code, problem, Span.file_only(exc.path, line))


class ExtendsCycle(PolicyError):
    """Policies that extend each other; reported at the policy that was asked for."""


class OutsideRoots(PolicyError):
    """A policy file that resolves (through a symbolic link) outside its search folder."""


class ExtendsTooLong(ExtendsCycle):
    """An `extends` chain longer than `MAX_EXTENDS`; reported, like a cycle, at the
    policy that was asked for."""


def _strict(kind: type, name: str) -> Any:
    def hook(value: Any, _: type) -> Any:
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            if abs(value) > 2**1023:  # float() would overflow
                raise ValueError("expected a finite number (at most about 1.8e308)")
            return float(value)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise TypeError(f"expected {name}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("expected a finite number")
        return value

    return hook


def _number_or_bool(value: Any, _: type) -> float | bool:
    if isinstance(value, bool):
        return value
    number: float = _strict(float, "a number or true or false")(value, float)
    return number


def _elements(conv: cattrs.Converter, items: Any, container: Any) -> list[Any]:
    """Structure (index or key, value, type) triples; errors carry cattrs' index notes."""
    out: list[Any] = []
    errors: list[Exception] = []
    for index, value, kind in items:
        try:
            out.append(conv.structure(value, kind))
        except Exception as exc:  # collected, then raised together as cattrs does
            exc.add_note(IterableValidationNote(f"Structuring @ index {index!r}", index, kind))
            errors.append(exc)
    if errors:
        raise IterableValidationError(f"While structuring {container}", errors, container)
    return out


def _container_hook(conv: cattrs.Converter, cl: Any) -> Any:
    """Containers are what they say: TOML strings are not arrays of characters, and an
    array is not a table. (cattrs alone would iterate a string as a list.)"""
    origin, args = typing.get_origin(cl), typing.get_args(cl)
    if origin is list:
        (kind,) = args

        def structure_list(value: Any, _: Any) -> list[Any]:
            if not isinstance(value, list):
                raise TypeError("expected an array")
            return _elements(conv, ((i, v, kind) for i, v in enumerate(value)), cl)

        return structure_list
    if origin is tuple:

        def structure_tuple(value: Any, _: Any) -> tuple[Any, ...]:
            if not isinstance(value, list) or len(value) != len(args):
                if args == (float, float):
                    raise TypeError("expected a pair [x, y] of numbers")
                raise TypeError(f"expected an array of {len(args)} values")
            return tuple(_elements(conv, ((i, v, k) for i, (v, k) in enumerate(zip(value, args, strict=True))), cl))

        return structure_tuple
    if origin is dict:
        _, kind = args

        def structure_dict(value: Any, _: Any) -> dict[str, Any]:
            if not isinstance(value, dict):
                raise TypeError("expected a table")
            values = _elements(conv, ((k, v, kind) for k, v in value.items()), cl)
            return dict(zip(value, values, strict=True))

        return structure_dict
    # an attrs class (a TOML table)
    derived: dict[str, Any] = {
        a.name: cattrs.gen.override(omit=True) for a in attrs.fields(cl) if a.metadata.get("derived")
    }
    base = cattrs.gen.make_dict_structure_fn(cl, conv, _cattrs_forbid_extra_keys=True, **derived)

    def structure_table(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise TypeError("expected a table")
        return base(value, cl)

    return structure_table


def _is_container(cl: Any) -> bool:
    return typing.get_origin(cl) in (list, tuple, dict) or attrs.has(cl)


def _converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(float, _strict(float, "a number"))
    conv.register_structure_hook(int, _strict(int, "a whole number"))
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_structure_hook(bool, _strict(bool, "true or false"))
    conv.register_structure_hook_func(lambda t: t == (float | bool), _number_or_bool)  # a registry value
    conv.register_structure_hook_factory(_is_container, lambda cl: _container_hook(conv, cl))
    return conv


CONVERTER = _converter()


def _format_path(path: list[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += ("." if out else "") + part
        else:
            out += ("." if out else "") + f'"{part}"'
    return out or "(top level)"


def _flatten(exc: BaseException, path: list[str | int], out: list[str]) -> None:
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            out.append(f"{_format_path([*path, key])}: unknown key")
        return
    if isinstance(exc, (ClassValidationError, IterableValidationError, ExceptionGroup)):
        for sub in exc.exceptions:
            note_path = list(path)
            for note in getattr(sub, "__notes__", []):
                # cattrs notes say where (attribute name, list index or mapping key);
                # plain-string notes only describe and add nothing to the path.
                if isinstance(note, AttributeValidationNote):
                    note_path.append(note.name)
                elif isinstance(note, IterableValidationNote):
                    index = note.index
                    note_path.append(index if isinstance(index, (int, str)) else str(index))
            _flatten(sub, note_path, out)
        return
    if isinstance(exc, KeyError):
        out.append(f"{_format_path(path)}: required key missing")
        return
    if isinstance(exc, PolicyValueError):
        out.append(f"{_format_path([*path, exc.key])}: {exc.message}")
        return
    message = str(exc)
    literal = re.search(r"not in literal typing\.Literal\[(.*)\]", message)
    if literal:
        choices = ", ".join(c.strip().strip("'") for c in literal.group(1).split(","))
        message = f"expected one of {choices}"
    out.append(f"{_format_path(path)}: {message}")


def structure(document: dict[str, Any], path: str, text: str | None = None) -> Policy:
    """The policy of a resolved ``document``; ``text``, the file's own TOML, locates the
    problems of its `[vision]` and `[units]` keys by line."""
    try:
        policy = CONVERTER.structure(document, Policy)
    except (ClassValidationError, ForbiddenExtraKeysError) as exc:
        messages: list[str] = []
        _flatten(exc, [], messages)
        raise PolicyError(path, messages) from None
    _semantic_checks(policy, path)
    located: dict[str, tuple[Code, int]] = {}
    value_line = key_line(text, "vision", "value") if text else 0
    for message in vision_problems(policy):
        located[message] = (codes.E415, value_line if message.startswith("vision.value") else
                            key_line(text, "vision", "fields") if text else 0)
    for message in units_problems(policy):
        *table, key = message.split(":")[0].split(".")  # `units.rates.usd`: the key `usd` of `[units.rates]`
        line = key_line(text, ".".join(table), key) or key_line(text, "units", table[-1] if len(table) > 1 else key)
        located[message] = (codes.E403, line)
    if located:
        raise PolicyError(path, list(located), located)
    # every rule passed `rule_problems`: compile each once, here, for scoring to evaluate
    gates = [attrs.evolve(g, expr=compile_rule(g.rule)) for g in policy.gates]
    vision = attrs.evolve(policy.vision, expr=compile_rule(policy.vision.value), line=value_line,
                          file=path if value_line else "")
    admission = {cls: attrs.evolve(a, checks=_admission_checks(a)) for cls, a in policy.admission.items()}
    return attrs.evolve(policy, gates=gates, vision=vision, admission=admission)


_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\" -]+?)\s*\]\s*(#.*)?$")


def key_line(text: str | None, table: str, key: str) -> int:
    """The line (1-based) of ``key = …`` in ``[table]`` of a policy file's TOML, or of
    `table.key = …` at the top; 0 when the file does not write it there."""
    if not text:
        return 0
    current = ""
    assign = re.compile(rf"^\s*{re.escape(key)}\s*=")
    dotted = re.compile(rf"^\s*{re.escape(table)}\s*\.\s*{re.escape(key)}\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            current = header.group(1).replace(" ", "")
        elif (current == table and assign.match(line)) or (current == "" and dotted.match(line)):
            return number
        elif current.startswith(f"{table}.") and current == f"{table}.{key}":
            return number - 1  # `[units.rates]`: the table's own header
    return 0


RESERVED_VISION_NAMES = ("value", "fields")  # `--set vision.value=…` sets the policy's formula
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNIT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: The units a route can write an amount in (the language's money unit).
ROUTE_AMOUNT_UNITS = ("usd",)


def vision_problems(policy: Policy) -> list[str]:
    """Why the vision's formula cannot compute a value: a field that is not a name or
    of no known kind; a formula that does not parse, reads a name `fields` does not
    declare, leaves a declared field unread, calls a function other than `min` and
    `max`, is not arithmetic, or divides by a literal 0."""
    vp = policy.vision
    problems: list[str] = []
    kinds = ", ".join(VISION_KINDS)
    for name, kind in vp.fields.items():
        key = _format_path(["vision", "fields", name])
        if not _FIELD_NAME.fullmatch(name):
            problems.append(f"{key}: a field name is a letter or `_`, then letters, digits and `_`")
        elif name in RESERVED_VISION_NAMES:
            problems.append(f"{key}: `{name}` is reserved (`--set vision.{name}` sets the policy's own key)")
        if kind not in VISION_KINDS:
            problems.append(f"{key}: `{kind}` is not a kind of number (the kinds are {kinds})")
    if not vp.fields:
        problems.append("vision.fields: declares no field, so a vision could state nothing")
    diags = Diagnostics()
    node = parse_expression(vp.value, "vision", diags)
    if node is None:
        return problems + [
            "vision.value: " + d.message.replace("file ends early", "formula ends early")
            .replace("end of the file", "end of the formula") + f" (column {d.span.column} of the formula)"
            for d in diags
        ]
    expr = lower_expression(node, diags)
    problems += [f"vision.value: {d.message}" for d in diags]
    read: list[str] = []
    for sub in walk(expr):
        where = f" (column {sub.span.column} of the formula)"
        if isinstance(sub, ex.Name):
            if sub.name not in vp.fields:
                hint = suggest(sub.name, vp.fields)
                problems.append(f"vision.value: unknown field `{sub.name}`{where}: the fields are "
                                f"{listed([f'`{f}`' for f in vp.fields])}" + (f"; {hint}" if hint else ""))
            elif sub.name not in read:
                read.append(sub.name)
        elif isinstance(sub, ex.Call):
            if sub.func not in ("min", "max"):
                problems.append(f"vision.value: unknown function `{sub.func}`{where} (the formula may call "
                                "`min` and `max`)")
        elif isinstance(sub, ex.Number):
            if sub.unit is not None:
                problems.append(f"vision.value: `{sub.value:g} {sub.unit}`{where}: a number in the formula takes "
                                "no unit (each field's kind says what it is)")
        elif isinstance(sub, ex.Binary):
            right = sub.right
            if sub.op == "/" and isinstance(right, ex.Number) and right.value == 0:
                problems.append(f"vision.value: division by zero (column {right.span.column} of the formula)")
        elif not isinstance(sub, ex.Neg):
            problems.append(f"vision.value: {_not_arithmetic(sub)}{where}: the formula computes a number from "
                            "numbers (`+ - * /`, `min`, `max`)")
    for name in vp.fields:
        if name not in read and not any(p.startswith("vision.value") for p in problems):
            problems.append(f"{_format_path(['vision', 'fields', name])}: declared but the formula "
                            f"`{vp.value}` does not read it")
    return problems


def _not_arithmetic(e: ex.Expr) -> str:
    if isinstance(e, ex.Compare):
        return f"`{e.op}` is a comparison"
    if isinstance(e, (ex.Logic, ex.Not)):
        return "`and`, `or` and `not` are logic"
    if isinstance(e, ex.Attribute):
        return f"`.{e.name}` reads a record"
    return "a string, date, `true`, `false` or `none` is not a number"


def units_problems(policy: Policy) -> list[str]:
    """The fold's unit is a name; each rate is of a unit a route can write, positive and
    finite, and a fold kept in usd needs none."""
    units = policy.units
    problems: list[str] = []
    if not _UNIT_NAME.fullmatch(units.fold):
        problems.append(f"units.fold: `{units.fold}` is not a unit name (a letter or `_`, then letters, digits, `_`)")
    for unit, rate in units.rates.items():
        key = _format_path(["units", "rates", unit])
        if unit == units.fold:
            problems.append(f"{key}: the fold is kept in {unit}; its own rate is 1 by definition")
        elif unit not in ROUTE_AMOUNT_UNITS:
            problems.append(f"{key}: a route writes amounts only in {listed(list(ROUTE_AMOUNT_UNITS))}; "
                            f"`{unit}` never appears in one")
        if not (rate > 0 and math.isfinite(rate)):
            problems.append(f"{key}: a rate must be a finite number above 0, got {rate!r}")
    return problems


def _semantic_checks(policy: Policy, path: str) -> None:
    problems: list[str] = []
    rw = policy.reweighting
    if rw.w_min > rw.w_max:
        problems.append("reweighting.w_min: must not exceed reweighting.w_max")
    for key, weight in policy.evidence.tier_weight.items():
        if not key.isdigit():
            problems.append(f"evidence.tier_weight.{key}: tier keys are whole numbers")
        if not weight >= 0:
            problems.append(f"evidence.tier_weight.{key}: must be at least 0")
    tables = [(f"floors.delta.{field}", table) for field, table in policy.floors.delta.items()]
    for cls, by_field in policy.floors.by_class.items():
        if cls not in policy.priors:
            problems.append(f'floors.by_class."{cls}": not a reference class of [priors]')
        tables += [(f'floors.by_class."{cls}".{field}', table) for field, table in by_field.items()]
    for where, table in tables:
        xs = [x for x, _ in table.points]
        ys = [y for _, y in table.points]
        if not table.points:
            problems.append(f"{where}.points: needs at least one breakpoint")
        if any(b <= a for a, b in zip(xs, xs[1:], strict=False)) or any(x <= 0 for x in xs):
            problems.append(f"{where}.points: |delta| breakpoints must be positive and increasing")
        if any(b < a for a, b in zip(ys, ys[1:], strict=False)) or any(y < 0 for y in ys):
            problems.append(f"{where}.points: floors must be non-negative and non-decreasing")
    for name, weight in policy.criteria.items():
        if not weight >= 0:
            problems.append(f"criteria.{name}: a weight must be at least 0")
    if policy.buckets is not None and policy.buckets.neg_below > policy.buckets.pos_from:
        problems.append("buckets.neg_below: must not exceed buckets.pos_from")
    windows = policy.forecast.windows
    if any(w < 1 for w in windows) or any(b <= a for a, b in zip(windows, windows[1:], strict=False)):
        problems.append("forecast.windows: days after as_of, positive and increasing, e.g. [30, 90, 180]")
    problems.extend(_calibration_problems(policy))
    ids = [g.id for g in policy.gates]
    for gid in sorted({g for g in ids if ids.count(g) > 1}):
        problems.append(f"gates: id `{gid}` is used twice")
    for i, gate in enumerate(policy.gates):
        problems.extend(f"gates[{i}].rule: {m}" for m in rule_problems(gate.rule))
    problems.extend(_admission_problems(policy))
    cov = policy.coverage
    if cov.registry_file is not None and (cov.registry_sha256 is None or not is_sha256(cov.registry_sha256)):
        problems.append("coverage.registry_sha256: required with coverage.registry_file: 64 lowercase hexadecimal "
                        "digits, the SHA-256 of the file's bytes")
    for name, pin in policy.libraries.items():
        key = _format_path(["libraries", name])
        if not is_name(name):
            problems.append(f"{key}: a library name is lowercase letters, digits, `_` and `-`")
        if pin.version is not None and not is_version(pin.version):
            problems.append(f"{key}.version: `{pin.version}` is not a version")
        if pin.sha256 is not None and not is_sha256(pin.sha256):
            problems.append(f"{key}.sha256: expected 64 lowercase hexadecimal digits (SHA-256)")
        for part in ("version", "sha256"):
            if getattr(pin, part) is None and not policy.policy.local_libraries:
                problems.append(
                    f"{key}.{part}: required key missing (only a policy with `local_libraries = true` may name "
                    "a library without pinning its content)"
                )
    if problems:
        raise PolicyError(path, problems)


def _admission_checks(a: Admission) -> tuple[tuple[str, str, ex.Expr], ...]:
    """The bounds (by field), then the `require` lines, compiled: ("" for a line)."""
    bounds = [(field, text, compile_rule(text)) for field, text in a.bounds.items()]
    return (*bounds, *(("", text, compile_rule(text)) for text in a.require))


def _admission_problems(policy: Policy) -> list[str]:
    """Each admission table names a reference class of the policy, and each of its
    expressions parses and uses only the names and functions its place binds."""
    problems = []
    for cls, a in policy.admission.items():
        key = _format_path(["admission", cls])
        if cls not in policy.priors:
            problems.append(f"{key}: `{cls}` is not a reference class of this policy (no [priors.\"{cls}\"])")
        for field, text in a.bounds.items():
            if field not in a.fields:
                problems.append(f"{key}.bounds.{field}: bounds a field the class may not change (not in `fields`)")
            problems.extend(f"{key}.bounds.{field}: {m}" for m in rule_problems(text, BOUND_NAMES, ADMISSION_FUNCTIONS))
        for i, text in enumerate(a.require):
            problems.extend(f"{key}.require[{i}]: {m}" for m in rule_problems(text, ADMIT_NAMES, ADMISSION_FUNCTIONS))
    return problems


def _calibration_problems(policy: Policy) -> list[str]:
    """The calibration map names a table it has, and an isotonic map is a function of
    [0, 1] into [0, 1] that never falls."""
    cal = policy.calibration
    if cal is None:
        return []
    problems = []
    if cal.method == "platt" and cal.platt is None:
        problems.append('calibration.platt: required when calibration.method = "platt" (a = …, b = …)')
    iso = cal.isotonic
    if cal.method == "isotonic" and iso is None:
        problems.append('calibration.isotonic: required when calibration.method = "isotonic" (x = […], y = […])')
    if iso is not None:
        if not iso.x or len(iso.x) != len(iso.y):
            problems.append("calibration.isotonic: x and y must hold the same number of breakpoints, at least one")
        if any(not 0 <= v <= 1 for v in iso.x) or any(b <= a for a, b in zip(iso.x, iso.x[1:], strict=False)):
            problems.append("calibration.isotonic.x: must be in [0, 1] and strictly increasing")
        if any(not 0 <= v <= 1 for v in iso.y) or any(b < a for a, b in zip(iso.y, iso.y[1:], strict=False)):
            problems.append("calibration.isotonic.y: must be in [0, 1] and non-decreasing")
    return problems


@cache
def compile_rule(rule: str) -> ex.Expr:
    """The expression of a gate rule, parsed once per process. Only rules that passed
    `rule_problems` (every loaded policy's rules have) reach this."""
    diags = Diagnostics()
    node = parse_expression(rule, "rule", diags)
    if node is None:
        raise ValueError(f"gate rule does not parse: {rule}")
    return lower_expression(node, diags)


#: What an admission bound may name (the one field's change) and call; a `require` line
#: of an admission table has an obligation's vocabulary, evidence's names inside `evidence(…)`.
BOUND_NAMES: tuple[str, ...] = ("delta", "source", "target", "relative")
ADMIT_NAMES: tuple[str, ...] = (*REQUIRE_NAMES, *EVIDENCE_NAMES)
ADMISSION_FUNCTIONS: tuple[str, ...] = (*REQUIRE_FUNCTIONS, "abs")


def rule_problems(rule: str, names: tuple[str, ...] | None = None,
                  functions: tuple[str, ...] | None = None) -> list[str]:
    """Why a gate rule (or, with ``names`` and ``functions``, an admission expression)
    cannot be evaluated, found before any route is scored: it does not parse, or it
    calls a function (or uses a name) its place does not have."""
    diags = Diagnostics()
    node = parse_expression(rule, "rule", diags)
    if node is None:
        return [
            d.message.replace("file ends early", "rule ends early").replace("end of the file", "end of the rule")
            + f" (column {d.span.column} of the rule)"
            for d in diags
        ]
    expr = lower_expression(node, diags)
    problems = [d.message for d in diags]
    allowed = tuple(BASE_FUNCTIONS) if functions is None else functions
    known = ", ".join(f"`{f}`" for f in sorted(allowed))
    for sub in walk(expr):
        if isinstance(sub, ex.Call) and sub.func not in allowed:
            problems.append(f"unknown function `{sub.func}` (a rule may call {known})")
        if names is not None and isinstance(sub, ex.Name) and sub.name not in names:
            problems.append(f"unknown name `{sub.name}` (this expression may name {', '.join(names)})")
    if names is None:
        problems += [f"{u.message} (column {u.span.column} of the rule): {u.help}"
                     for u in unit_problems(expr, GATE_DIMENSIONS)]
    return problems


def merge(base: dict[str, Any], child: dict[str, Any], top: bool = True) -> dict[str, Any]:
    """Key-by-key override; tables merge recursively; gates merge by id; arrays replace;
    `[vision]` replaces whole (a formula and the fields it reads go together)."""
    out = dict(base)
    for key, value in child.items():
        if top and key == "vision":
            out[key] = value
        elif key == "gates" and isinstance(value, list) and isinstance(base.get(key), list):
            by_id = {g.get("id"): g for g in base[key] if isinstance(g, dict)}
            order = [g.get("id") for g in base[key] if isinstance(g, dict)]
            for g in value:
                gid = g.get("id") if isinstance(g, dict) else None
                if gid not in by_id:
                    order.append(gid)
                by_id[gid] = g
            out[key] = [by_id[g] for g in order]
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = merge(base[key], value, top=False)
        else:
            out[key] = value
    return out


@attrs.define
class PolicyStore:
    """Finds `policies/<id>/<version>.toml` on the search path, then in the shipped
    folder. ``origins`` says who gave each search folder (`FoundIn`, and the
    configuration file that named it), for the packet's record of where each policy was
    found; a folder it does not list is a plain "search path"."""

    search_path: list[Path] = attrs.field(factory=list)
    origins: dict[Path, tuple[FoundIn, str | None]] = attrs.field(factory=dict)
    _cache: dict[str, LoadedPolicy] = attrs.field(factory=dict)

    def roots(self) -> list[Path]:
        return [*self.search_path, data_dir("policies")]

    def found(self, path: Path) -> Found:
        """Where the policy file at ``path`` was found: the search folder it is filed in
        (`<root>/<id>/<version>.toml`), else a file given by its path."""
        for root in self.roots():
            if path.parent.parent == root:
                if root == data_dir("policies"):
                    return Found("shipped", None)
                where, config = self.origins.get(root, ("search path", None))
                return Found(where, _display(path), config)
        return Found("file", _display(path))

    def find(self, policy_id: str, version: str) -> Path | None:
        """The first `<root>/<id>/<version>.toml`; raises `OutsideRoots` when that file
        resolves, through a symbolic link, outside its root."""
        for root in self.roots():
            candidate = root / policy_id / f"{version}.toml"
            if os.path.isfile(candidate):  # False, not OSError, for a name too long
                real = candidate.resolve()
                if not real.is_relative_to(root.resolve()):
                    raise OutsideRoots(
                        _display(candidate),
                        [
                            f"resolves to {real}, outside the policy folder {_display(root)}: "
                            "a policy is read only from inside the configured folders"
                        ],
                    )
                return candidate
        return None

    def available(self) -> list[str]:
        refs = set()
        for root in self.roots():
            if os.path.isdir(root):
                for f in root.glob("*/*.toml"):
                    refs.add(f"{f.parent.name}@{f.stem}")
        return sorted(refs)

    def load_ref(self, ref: str, _chain: tuple[str, ...] = ()) -> LoadedPolicy:
        parts = split_policy_ref(ref)
        if parts is None:
            raise PolicyError(ref, [f"`{ref}` is not a policy reference of the form id@version: {REFERENCE_RULE}"])
        if ref in self._cache:
            return self._cache[ref]
        path = self.find(*parts)
        if path is None:
            raise PolicyError(
                ref,
                [
                    f"no policy `{ref}` (looked for {parts[0]}/{parts[1]}.toml in "
                    + ", ".join(_display(r) for r in self.roots())
                    + ")"
                ],
            )
        loaded = self.load_path(path, _chain=(*_chain, ref), expect=parts)
        self._cache[ref] = loaded
        return loaded

    def load_path(
        self, path: Path, _chain: tuple[str, ...] = (), expect: tuple[str, str] | None = None
    ) -> LoadedPolicy:
        shown = _display(path)
        try:
            text = read_text(path)
            document = tomllib.loads(text)
        except NotText:
            raise PolicyError(shown, ["not UTF-8 text"]) from None
        except Unreadable as exc:
            raise PolicyError(shown, [f"cannot be read: {exc.reason}"]) from None
        except tomllib.TOMLDecodeError as exc:
            raise PolicyError(shown, [f"not valid TOML: {exc}"]) from None
        except RecursionError:  # tomllib recurses once per nested array or inline table
            raise PolicyError(shown, ["not usable: arrays or tables nested too deeply"]) from None
        except ValueError as exc:  # an integer of more than 4300 digits
            raise PolicyError(shown, [f"not usable: {exc}"]) from None
        header = document.get("policy")
        if not isinstance(header, dict):
            raise PolicyError(shown, ["policy: required table missing"])
        # The file's own header names it (an `extends` never lends its id or version),
        # and the name matches where it is filed: policies/<id>/<version>.toml. A file
        # given by a path that is not filed so (`broken.toml`, a draft) is checked for
        # its content only: nothing can find it by `id@version`.
        filed = path.stem[:1].isdigit()
        expect = expect or ((path.resolve().parent.name, path.stem) if filed else None)
        problems = []
        for key in ("id", "version"):
            if key not in header:
                problems.append(f"policy.{key}: required key missing")
            elif not isinstance(header[key], str):
                problems.append(f"policy.{key}: expected a string")
        if problems:
            raise PolicyError(shown, problems)
        if expect is not None and (header["id"], header["version"]) != expect:
            raise PolicyError(
                shown,
                [
                    f"policy: declares {header['id']}@{header['version']} "
                    f"but is filed as {expect[0]}@{expect[1]} (policies/<id>/<version>.toml)"
                ],
            )
        own = f"{header['id']}@{header['version']}"
        chain = _chain if _chain[-1:] == (own,) else (*_chain, own)
        resolved = document
        inherited: tuple[tuple[str, Found], ...] = ()  # where each policy it extends was found
        parent_ref = header.get("extends")
        if parent_ref is not None:
            if not isinstance(parent_ref, str):
                raise PolicyError(shown, ["policy.extends: expected a string"])
            if len(chain) >= MAX_EXTENDS:
                raise ExtendsTooLong(
                    shown, [f"policy.extends: a chain of more than {MAX_EXTENDS} policies extending each other"]
                )
            if parent_ref in chain:
                loop = " -> ".join([*chain[chain.index(parent_ref) :], parent_ref])
                raise ExtendsCycle(shown, [f"policy.extends: the policies extend each other in a cycle: {loop}"])
            try:
                parent = self.load_ref(parent_ref, chain)
            except ExtendsCycle as exc:
                raise ExtendsCycle(shown, exc.messages) from None
            except PolicyError as exc:
                where = "" if exc.path == parent_ref else f"in `{parent_ref}` ({exc.path}): "
                kind = OutsideRoots if isinstance(exc, OutsideRoots) else PolicyError
                raise kind(shown, [f"policy.extends: {where}{m}" for m in exc.messages]) from None
            base = dict(parent.resolved)
            parent_header = parent.resolved.get("policy")
            assert isinstance(parent_header, dict)
            base["policy"] = {k: v for k, v in parent_header.items() if k not in ("extends", "description")}
            resolved = merge(base, document)
            inherited = parent.found
        policy = structure(resolved, shown, text)
        own_vision = document.get("vision")
        if parent_ref is not None and not (isinstance(own_vision, dict) and "value" in own_vision):
            inherited_vision = parent.policy.vision  # `extends` keeps the parent's [vision]: cite its line
            policy = attrs.evolve(policy, vision=attrs.evolve(policy.vision, line=inherited_vision.line,
                                                              file=inherited_vision.file))
        policy = _with_registry_file(policy, document, path, shown, parent.policy if parent_ref is not None else None)
        found = ((own, self.found(path)), *inherited)
        return LoadedPolicy(policy, shown, hash_json(_jsonable(resolved)), resolved, found)


def _with_registry_file(policy: Policy, document: dict[str, Any], path: Path, shown: str,
                        parent: Policy | None) -> Policy:
    """The policy with the registry tables of the file its own `coverage.registry_file`
    names (beside it, its bytes matching `coverage.registry_sha256`), and those its
    parent had from a file of its own; tables of the policy itself win."""
    inherited = {} if parent is None else dict(parent.registry)
    own = document.get("coverage")
    name = own.get("registry_file") if isinstance(own, dict) else None
    from_file: dict[str, Registry] = {}
    if isinstance(name, str):
        key = "coverage.registry_file"
        folder = path.parent.resolve()
        target = (path.parent / name).resolve()
        if Path(name).is_absolute() or ".." in Path(name).parts or not target.is_relative_to(folder):
            raise PolicyError(shown, [f"{key}: `{name}` is not a file inside the policy's folder"])
        try:
            data = read_bytes(target)
        except Unreadable as exc:
            raise PolicyError(shown, [f"{key}: `{name}` cannot be read: {exc.reason}"]) from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != policy.coverage.registry_sha256:
            raise PolicyError(shown, [f"coverage.registry_sha256: `{name}` has sha256 {digest}, not the "
                                      f"{policy.coverage.registry_sha256} the policy pins"])
        try:
            table = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise PolicyError(shown, [f"{key}: `{name}` is not valid TOML: {exc}"]) from None
        extra = sorted(set(table) - {"registry"})
        if extra:
            raise PolicyError(shown, [f"{key}: `{name}`: {k}: unknown key (a registry file holds only "
                                      "[registry.<route>] tables)" for k in extra])
        try:
            from_file = CONVERTER.structure(table.get("registry", {}), dict[str, Registry])
        except (ClassValidationError, IterableValidationError, ForbiddenExtraKeysError, TypeError) as exc:
            messages: list[str] = []
            _flatten(exc, ["registry"], messages)
            raise PolicyError(shown, [f"{key}: `{name}`: {m}" for m in messages]) from None
        twice = sorted(set(from_file) & set(policy.registry))
        if twice:
            raise PolicyError(shown, [f"registry.{r}: also in `{name}`: a route has one registry" for r in twice])
    if not inherited and not from_file:
        return policy
    return attrs.evolve(policy, registry={**inherited, **from_file, **policy.registry})


def check_configured_policies(config: Config) -> None:
    """A configuration file's `policy_path` may add policies, never replace one PCSC
    ships: a `<id>/<version>.toml` there whose TOML document differs from the shipped
    policy of that id@version raises `ConfigError` (the file sits with the routes; only
    `--policy-path` on the command line replaces a shipped policy, on purpose)."""
    if config.path is None:
        return
    shipped = data_dir("policies")
    for root in config.policy_path:
        for found in sorted(root.glob("*/*.toml")):
            twin = shipped / found.parent.name / found.name
            if twin.is_file() and _document_or_none(found) != _document_or_none(twin):
                raise ConfigError(
                    config.path,
                    f"policy_path: {_display(found)} would replace the shipped policy "
                    f"{found.parent.name}@{found.stem} with other content; a configuration file may add policies, "
                    "never replace one (give yours another version, or pass --policy-path to replace it on purpose)",
                )


def _document_or_none(path: Path) -> dict[str, Any] | None:
    try:
        return tomllib.loads(read_text(path))
    except (Unreadable, tomllib.TOMLDecodeError, RecursionError, ValueError):
        return None


def load_policy_file(path: Path, store: PolicyStore | None = None) -> LoadedPolicy:
    return (store or PolicyStore()).load_path(path)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def canonical_document(doc: dict[str, Any]) -> dict[str, Any]:
    """A policy document as the JSON its hash is computed over (dates as ISO text)."""
    result: dict[str, Any] = _jsonable(doc)
    return result
