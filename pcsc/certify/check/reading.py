"""What the checker reads and how it compares: the first difference (`Mismatch`), exact
arithmetic rounded as floats round, files read within their limits, canonical JSON and
hashes, the policy document (TOML, `extends` merged, overrides set) and its keys."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tomllib
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path, PurePosixPath
from typing import Any


class Mismatch(Exception):
    """The first difference: ``what`` names it (a file, a step, a coverage decision)."""

    def __init__(self, what: str, message: str) -> None:
        super().__init__(f"{what}: {message}")
        self.what = what
        self.message = message


# ---------------------------------------------------------------------- arithmetic
def rnd(x: Fraction) -> Fraction:
    """``x`` rounded to the nearest float (ties to even), as an exact rational."""
    return Fraction(x.numerator / x.denominator)


def parse_q(text: str) -> Fraction:
    n, _, d = text.partition("/")
    return Fraction(int(n), int(d))


def show(x: Fraction | None) -> str:
    return "none" if x is None else repr(float(x))


def clip(x: Fraction, lo: Fraction, hi: Fraction) -> Fraction:
    return lo if x < lo else hi if x > hi else x


# ---------------------------------------------------------------------- files
def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


MAX_FILE_BYTES = 10_000_000  # a recorded file: the compiler's limit on what it reads (a test keeps them equal)
MAX_CERTIFICATE_BYTES = 200_000_000


class Refused(Mismatch):
    """A file the certificate records that the checker will not read: a path that is
    absolute, holds `..` or leads out of its folder, or a file that is not a regular
    file or is over the size limit. ``what`` names the certificate's field."""


def read_bounded(path: Path, what: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` (a device, a folder or a FIFO is
    refused before it is opened, so nothing can make the read hang or run unbounded)."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(what, f"{path.name} is not a regular file")
        if st.st_size > limit:
            raise Refused(what, f"{path.name} is {st.st_size:,} bytes; the limit is {limit:,}")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise Mismatch(what, f"cannot be read from {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise Refused(what, f"{path.name} is over the limit of {limit:,} bytes")
    return data


def text_of(path: Path, what: str, field: str) -> str:
    data = read_bounded(path, field)
    try:
        return data.decode("utf-8-sig")  # a leading byte order mark is not text
    except UnicodeDecodeError as exc:
        raise Mismatch(what, f"cannot be read from {path}: {exc}") from None


def jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def merge(base: dict[str, Any], child: dict[str, Any], top: bool = True) -> dict[str, Any]:
    """Key-by-key override; tables merge recursively; gates merge by id; arrays replace;
    the top-level `[vision]` replaces whole (a formula goes with its fields)."""
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


class Files:
    """Where the recorded files are read: ``--against`` files by name first (the
    verifier chose them), else the recorded path under its base (the certificate's own
    folder or a shipped folder), which must stay inside that folder: a relative path
    without `..`, no symbolic link out of the folder, a regular file."""

    def __init__(self, bases: Mapping[str, Path], against: Sequence[Path]) -> None:
        self.bases = bases
        self.against = list(against)

    def locate(self, entry: Mapping[str, Any], field: str) -> Path:
        recorded, base_name = entry["path"], entry["base"]
        if not isinstance(recorded, str) or not isinstance(base_name, str):
            raise Refused(field, "a recorded file is {\"base\": text, \"path\": text}")
        name = PurePosixPath(recorded).name
        for given in self.against:
            if given.name == name:
                return given
        base = self.bases.get(base_name)
        if base is None:
            raise Refused(f"{field}.base", f"`{base_name}` is not a base ({', '.join(sorted(self.bases))})")
        pure = PurePosixPath(recorded)
        if not recorded or pure.is_absolute() or ".." in pure.parts or "\\" in recorded or "\x00" in recorded \
                or re.match(r"[A-Za-z]:", recorded):
            raise Refused(f"{field}.path", f"`{recorded}` is not a relative path inside the {base_name} folder "
                                           "(absolute, or with `..`)")
        root = Path(base).resolve()
        try:
            real = (root / recorded).resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise Mismatch(f"{field}.path", f"`{recorded}` cannot be read in the {base_name} folder: "
                                            f"{getattr(exc, 'strerror', None) or exc}") from None
        if not real.is_relative_to(root):
            raise Refused(f"{field}.path", f"`{recorded}` leads out of the {base_name} folder "
                                           "(through a symbolic link)")
        return real


def policy_document(record: Mapping[str, Any], files: Files, field: str) -> dict[str, Any]:
    """The resolved document of a recorded policy (``field``: where the certificate
    records it): its files (top first) read as TOML and merged from the root of the
    `extends` chain down."""
    resolved: dict[str, Any] | None = None
    for j, entry in reversed(list(enumerate(record["files"]))):
        what, at = f"policy {entry['ref']} ({entry['path']})", f"{field}.files[{j}]"
        try:
            doc = tomllib.loads(text_of(files.locate(entry, at), what, at))
        except tomllib.TOMLDecodeError as exc:
            raise Mismatch(what, f"not valid TOML: {exc}") from None
        header: dict[str, Any] = doc["policy"] if isinstance(doc.get("policy"), dict) else {}
        extends = header.get("extends")
        below = record["files"][j + 1]["ref"] if j + 1 < len(record["files"]) else None
        if f"{header.get('id')}@{header.get('version')}" != entry["ref"] or extends != below \
                or (j == 0 and entry["ref"] != record["ref"]):
            raise Mismatch(f"{at}.ref", f"{entry['path']} is policy {header.get('id')}@{header.get('version')} "
                                        f"extending {extends or 'nothing'}; the certificate records {entry['ref']} "
                                        f"extending {below or 'nothing'} (of policy {record['ref']})")
        if resolved is not None:
            header = resolved.get("policy", {})
            base = dict(resolved)
            base["policy"] = {k: v for k, v in header.items() if k not in ("extends", "description")}
            doc = merge(base, doc)
        resolved = doc
    if resolved is None:
        raise Mismatch(f"{field}.files", "records no policy file")
    out: dict[str, Any] = jsonable(resolved)
    return out


def registry_tables(record: Mapping[str, Any], files: Files, document: Mapping[str, Any],
                    field: str) -> dict[str, Any]:
    """The gold registry of a recorded policy, by route: the `[registry.<route>]` tables of
    the registry file each of its files names (`coverage.registry_file`, in that file's
    folder, its bytes hashing to the `coverage.registry_sha256` in force there), a nearer
    file's over its parent's, and the policy document's own tables over them all."""
    out: dict[str, Any] = {}
    pin: Any = None
    for j, entry in reversed(list(enumerate(record["files"]))):
        what, at = f"policy {entry['ref']} ({entry['path']})", f"{field}.files[{j}]"
        own = tomllib.loads(text_of(files.locate(entry, at), what, at)).get("coverage")
        own = own if isinstance(own, dict) else {}
        pin = own.get("registry_sha256", pin)
        name = own.get("registry_file")
        if not isinstance(name, str):
            continue
        place = {"base": entry["base"], "path": (PurePosixPath(entry["path"]).parent / name).as_posix()}
        where = f"{what}: coverage.registry_file `{name}`"
        data = read_bounded(files.locate(place, f"{at}: coverage.registry_file"), where)
        digest = hashlib.sha256(data).hexdigest()
        if digest != pin:
            raise Mismatch(where, f"has sha256 {digest}, but the policy pins {pin}")
        try:
            tables = tomllib.loads(data.decode("utf-8")).get("registry")
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise Mismatch(where, f"not valid TOML: {exc}") from None
        out.update(tables if isinstance(tables, dict) else {})
    inline = document.get("registry")
    out.update(inline if isinstance(inline, dict) else {})
    return out


def set_key(document: dict[str, Any], path: Sequence[str], value: Any) -> None:
    node = document
    for part in path[:-1]:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[path[-1]] = value


def lookup(document: Mapping[str, Any], path: Sequence[str]) -> Any:
    node: Any = document
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


_PIECES = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|\s+|[^"#\s]+|"')


def squeeze(text: str) -> str:
    """Source text with its comments dropped and its whitespace collapsed (outside texts)."""
    out: list[str] = []
    for piece in _PIECES.findall(text):
        if piece.startswith("#") or piece.isspace():
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(piece)
    return "".join(out).strip()
