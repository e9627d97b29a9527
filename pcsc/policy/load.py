"""Read, merge (`extends`), validate and hash policy files.

Validation is strict: unknown keys and wrong types are refused with the path of the
offending key, e.g. `policies/venture/1.0.0.toml: reweighting.decay: expected a number`.
Numbers are never coerced from strings.
"""

from __future__ import annotations

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
from pcsc.base.files import NotText, Unreadable, read_text
from pcsc.base.resources import data_dir
from pcsc.base.resources import display_path as _display
from pcsc.diagnostics.model import Diagnostics
from pcsc.lang.interp import BASE_FUNCTIONS
from pcsc.lang.ir import expr as ex
from pcsc.lang.ir.names import REFERENCE_RULE, is_name, is_sha256, is_version, split_policy_ref
from pcsc.lang.ir.visit import walk
from pcsc.lang.lower.expr import lower_expression
from pcsc.lang.lower.units import GATE_DIMENSIONS, unit_problems
from pcsc.lang.syntax import parse_expression
from pcsc.policy.model import Found, FoundIn, LoadedPolicy, Policy, PolicyValueError

MAX_EXTENDS = 32  # policies in one `extends` chain, the policy itself included


class PolicyError(Exception):
    """A policy cannot be used; ``messages`` are path-addressed, one per problem."""

    def __init__(self, path: str, messages: list[str]) -> None:
        super().__init__("; ".join(f"{path}: {m}" for m in messages))
        self.path = path
        self.messages = messages


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


def structure(document: dict[str, Any], path: str) -> Policy:
    try:
        policy = CONVERTER.structure(document, Policy)
    except (ClassValidationError, ForbiddenExtraKeysError) as exc:
        messages: list[str] = []
        _flatten(exc, [], messages)
        raise PolicyError(path, messages) from None
    _semantic_checks(policy, path)
    # every rule passed `rule_problems`: compile each once, here, for scoring to evaluate
    gates = [attrs.evolve(g, expr=compile_rule(g.rule)) for g in policy.gates]
    return attrs.evolve(policy, gates=gates)


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


def rule_problems(rule: str) -> list[str]:
    """Why a gate rule cannot be evaluated, found before any route is scored: it does
    not parse, or it calls a function the rule language does not have."""
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
    known = ", ".join(f"`{f}`" for f in sorted(BASE_FUNCTIONS))
    for sub in walk(expr):
        if isinstance(sub, ex.Call) and sub.func not in BASE_FUNCTIONS:
            problems.append(f"unknown function `{sub.func}` (a rule may call {known})")
    problems += [f"{u.message} (column {u.span.column} of the rule): {u.help}"
                 for u in unit_problems(expr, GATE_DIMENSIONS)]
    return problems


def merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Key-by-key override; tables merge recursively; gates merge by id; arrays replace."""
    out = dict(base)
    for key, value in child.items():
        if key == "gates" and isinstance(value, list) and isinstance(base.get(key), list):
            by_id = {g.get("id"): g for g in base[key] if isinstance(g, dict)}
            order = [g.get("id") for g in base[key] if isinstance(g, dict)]
            for g in value:
                gid = g.get("id") if isinstance(g, dict) else None
                if gid not in by_id:
                    order.append(gid)
                by_id[gid] = g
            out[key] = [by_id[g] for g in order]
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = merge(base[key], value)
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
            document = tomllib.loads(read_text(path))
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
        policy = structure(resolved, shown)
        found = ((own, self.found(path)), *inherited)
        return LoadedPolicy(policy, shown, hash_json(_jsonable(resolved)), resolved, found)


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
