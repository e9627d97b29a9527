"""Project configuration: ``[tool.pcsc]`` in ``pyproject.toml`` or a ``pcsc.toml``.

The first of ``pcsc.toml`` or a ``pyproject.toml`` holding a ``[tool.pcsc]`` table,
found from the folder of a run's inputs upward (from the working folder when the
inputs have none above them, or the command takes no input), configures how the inputs
are judged (`config_for_inputs`); the run's own settings (``format``, ``ledger``,
``docs_url``) come from the working folder's file. A ``pcsc.toml`` holds the
keys at its top level (or under ``[tool.pcsc]``, so one table can be moved between
the two files unchanged). Paths in it are relative to the file's folder. Keys:

    lib_path    = ["obligations"]          # extra folders of .obl libraries
    policy_path = ["policies"]             # extra folders of <id>/<version>.toml
    coverage    = "gate"                   # gate | dock | off: raise the policy's mode
    require_policy = ["venture@1.0.0"]     # the only policies routes may name (id or id@version)
    format      = "text"                   # text | json | sarif: the default --format
    ledger      = ".pcsc/ledger.sqlite"    # the default --ledger (or a postgresql:// address)
    docs_url    = "https://docs.example/pcsc/"   # where the docs are published (SARIF links)
    ignore      = ["W604"]                 # warnings never reported (codes or prefixes: W6)
    select      = ["W"]                    # report only these warnings (errors always)

Command-line flags override the file; ``pcsc config`` prints the effective settings
and where each came from. Unknown keys and wrong types are errors, never ignored.

The two keys that only tighten a run, ``coverage`` and ``require_policy``, are also
read from every configuration file above the nearest one (`Config.above`), so a file
nearer the working folder (one a route's author could have put beside the route)
never drops what a file further up demands.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from pcsc.base.files import Unreadable, read_text
from pcsc.base.modes import MODES

CONFIG_FILE = "pcsc.toml"
#: A ledger given as one of these is a database server's address, not a file path.
DATABASE_SCHEMES = ("postgresql://", "postgres://")
#: The password of an address: in its user part (``scheme://user:PASSWORD@host``, also
#: after a path squeezed ``//`` to ``/``; up to the last ``@``, since libpq's own
#: messages quote an address it could not split) or a ``password=`` parameter.
_USER_PASSWORD = re.compile(r"""(\b[a-zA-Z][a-zA-Z0-9+.-]*:/{1,2}[^\s:/?#@"'<>]*):[^\s"'<>]*@""")
_PASSWORD_PARAMETER = re.compile(r"""(\b(?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s&"'<>]*)""", re.I)
FORMATS = ("text", "json", "sarif", "junit", "github")


def hide_credentials(text: str) -> str:
    """``text`` with the password of every address in it shown as ``***``: what PCSC
    prints of a ledger address, a diagnostic or an error message passes through here."""
    return _PASSWORD_PARAMETER.sub(r"\1***", _USER_PASSWORD.sub(r"\1:***@", text))


class ConfigError(Exception):
    """A configuration file that cannot be used: ``path`` and what is wrong."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@attrs.frozen
class Config:
    """The settings of a configuration file (empty when there is none)."""

    path: Path | None = None
    lib_path: tuple[Path, ...] = ()
    policy_path: tuple[Path, ...] = ()
    coverage: str | None = None
    format: str | None = None
    ledger: Path | str | None = None  # a file, or a database address (str) kept as written
    docs_url: str | None = None  # the published docs' base URL, ending in "/"
    require_policy: tuple[str, ...] = ()  # `id` or `id@version`, as written (checked by the caller)
    select: tuple[str, ...] | None = None  # warning codes or prefixes reported (None: every one)
    ignore: tuple[str, ...] = ()  # warning codes or prefixes never reported (checked by the caller)
    #: the configuration files above this one, nearest first: only their tightening keys count
    above: tuple[Config, ...] = ()

    def chain(self) -> tuple[Config, ...]:
        """This file's settings, then those of every file above it (none without a file)."""
        return (self, *self.above) if self.path is not None else ()

    def strictest_coverage(self) -> tuple[str, Path] | None:
        """The most demanding `coverage` any file of the chain asks for, and that file."""
        asked = [(MODES.index(c.coverage), c.coverage, c.path) for c in self.chain()
                 if c.coverage is not None and c.path is not None]
        if not asked:
            return None
        _, mode, path = min(asked, key=lambda a: a[0])  # nearest first among equals
        return mode, path

    def policy_requirements(self) -> tuple[tuple[Path, tuple[str, ...]], ...]:
        """Each file of the chain that sets `require_policy`, with its list: a route must
        satisfy every one of them."""
        return tuple((c.path, c.require_policy) for c in self.chain() if c.path is not None and c.require_policy)


def find_config(start: Path) -> Path | None:
    """The nearest ``pcsc.toml``, or ``pyproject.toml`` with ``[tool.pcsc]``, at or above ``start``."""
    return next(iter(find_configs(start)), None)


def find_configs(start: Path) -> list[Path]:
    """Every ``pcsc.toml``, or ``pyproject.toml`` with ``[tool.pcsc]``, at or above
    ``start``, nearest first (one per folder: a ``pcsc.toml`` before a ``pyproject.toml``)."""
    found = []
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_FILE
        pyproject = folder / "pyproject.toml"
        if candidate.is_file():
            found.append(candidate)
        elif pyproject.is_file() and _tool_table(pyproject, required=False) is not None:
            found.append(pyproject)
    return found


def load_config(start: Path | None = None) -> Config:
    """The configuration that applies in ``start`` (default: the working folder): the
    nearest file's settings, with the files above it in ``above``."""
    configs = []
    for path in find_configs((start or Path.cwd()).resolve()):
        table = _tool_table(path, required=True)
        assert table is not None
        configs.append(_structure(path, table))
    if not configs:
        return Config()
    return attrs.evolve(configs[0], above=tuple(configs[1:]))


class MixedConfigs(Exception):
    """Inputs of one run under different configuration files: each file and the first
    input it configures."""

    def __init__(self, found: list[tuple[Path | None, Path]]) -> None:
        super().__init__("inputs under different configuration files")
        self.found = found


def configs_for_inputs(inputs: Iterable[Path], cwd: Path | None = None) -> list[tuple[Config, list[Path]]]:
    """The configuration that judges each input (a file or a folder): the nearest file
    at or above it, else the working folder's; grouped, in the order of the inputs, each
    with the inputs it judges (none: the working folder's, with no input). The working
    folder's files are added to each one's ``above``: their tightening keys hold too."""
    here = load_config(cwd)
    groups: dict[Path | None, tuple[Config, list[Path]]] = {}
    seen: dict[Path, Config] = {}
    for given in inputs:
        try:
            start = (given if os.path.isdir(given) else given.parent).resolve()
            if start not in seen:
                found = load_config(start)
                seen[start] = found if found.path is not None else here
            cfg = seen[start]
        except OSError:  # a name too long, a folder not searchable: the command reports the path
            cfg = here
        groups.setdefault(cfg.path, (cfg, []))[1].append(given)
    if not groups:
        return [(here, [])]
    return [(_with_working_folder(cfg, here), given) for cfg, given in groups.values()]


def _with_working_folder(cfg: Config, here: Config) -> Config:
    known = {c.path for c in cfg.chain()}
    extra = tuple(c for c in here.chain() if c.path not in known)
    return attrs.evolve(cfg, above=cfg.above + extra) if extra and cfg.path is not None else cfg


def config_for_inputs(inputs: Iterable[Path], cwd: Path | None = None) -> Config:
    """The one configuration that judges every input (`configs_for_inputs`);
    `MixedConfigs` when they fall under different files."""
    groups = configs_for_inputs(inputs, cwd)
    if len(groups) > 1:
        raise MixedConfigs([(cfg.path, given[0]) for cfg, given in groups])
    return groups[0][0]


def _read_toml(path: Path) -> dict[str, Any]:
    """``path`` parsed as TOML, once per process for the same text (finding the
    configuration reads each ``pyproject.toml`` up the tree more than once, and the
    project's own is large). The parsed document is never changed by its readers."""
    text = read_text(path)
    doc = _TOML.get(text)
    if doc is None:
        doc = tomllib.loads(text)
        if len(_TOML) >= 64:
            _TOML.clear()
        _TOML[text] = doc
    return doc


_TOML: dict[str, dict[str, Any]] = {}


def _tool_table(path: Path, *, required: bool) -> dict[str, Any] | None:
    try:
        doc = _read_toml(path)
    except Unreadable as exc:
        if not required:
            return None
        raise ConfigError(path, f"cannot read: {exc.reason}") from None
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:  # deep nesting; 4300-digit integers
        if not required:
            return None
        reason = "arrays or tables nested too deeply" if isinstance(exc, RecursionError) else exc
        raise ConfigError(path, f"not valid TOML: {reason}") from None
    tool = doc.get("tool")
    table = tool.get("pcsc") if isinstance(tool, dict) else None
    if path.name == CONFIG_FILE:
        if table is None:
            table = {k: v for k, v in doc.items() if k != "tool"}
        elif set(doc) - {"tool"}:
            raise ConfigError(path, "keys both at the top level and under [tool.pcsc]; use one")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(path, "[tool.pcsc] must be a table")
    return table


def _structure(path: Path, table: dict[str, Any]) -> Config:
    base = path.parent
    known = ("lib_path", "policy_path", "coverage", "format", "ledger", "docs_url", "require_policy", "select",
             "ignore")
    for key in table:
        if key not in known:
            raise ConfigError(path, f"unknown key `{key}` in the pcsc settings (known: {', '.join(known)})")

    def paths(key: str) -> tuple[Path, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(path, f"`{key}` must be a list of folder paths")
        return tuple(base / v for v in value)

    def choice(key: str, options: tuple[str, ...]) -> str | None:
        value = table.get(key)
        if value is not None and value not in options:
            raise ConfigError(path, f"`{key}` must be one of {', '.join(options)}, not {value!r}")
        return value

    required = table.get("require_policy", [])
    if isinstance(required, str):
        required = [required]
    if not isinstance(required, list) or not all(isinstance(v, str) for v in required):
        raise ConfigError(path, "`require_policy` must be a list of policies (`id` or `id@version`)")
    if "require_policy" in table and not required:
        raise ConfigError(path, "`require_policy` lists no policy: name those routes may use, or remove the key")
    def codes(key: str) -> tuple[str, ...] | None:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(path, f"`{key}` must be a list of diagnostic codes or prefixes (such as W604 or W6)")
        return tuple(value)

    ledger = table.get("ledger")
    if ledger is not None and not isinstance(ledger, str):
        raise ConfigError(path, "`ledger` must be a file path or a postgresql:// address")
    docs_url = table.get("docs_url")
    if docs_url is not None:
        try:
            docs_url = docs_base_url(docs_url)
        except ValueError as exc:
            raise ConfigError(path, f"`docs_url` {exc}") from None
    return Config(
        path=path,
        docs_url=docs_url,
        lib_path=paths("lib_path"),
        policy_path=paths("policy_path"),
        coverage=choice("coverage", MODES),
        format=choice("format", FORMATS),
        require_policy=tuple(required),
        select=codes("select"),
        ignore=codes("ignore") or (),
        ledger=(ledger if ledger.startswith(DATABASE_SCHEMES) else base / ledger) if ledger else None,
    )


def key_line(path: Path, key: str) -> int | None:
    """The line of ``path`` that sets ``key`` (its first `key =`), for a diagnostic; None
    when no line does (or the file cannot be read)."""
    try:
        lines = read_text(path).splitlines()
    except Unreadable:
        return None
    pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
    return next((i for i, line in enumerate(lines, 1) if pattern.match(line)), None)


#: The environment variable that sets the published docs' base URL (over `docs_url`).
DOCS_URL_ENV = "PCSC_DOCS_URL"


def docs_base_url(value: object) -> str:
    """``value`` as the base URL of a published copy of the docs: http(s), a host, and a
    trailing slash added when missing. Raises ValueError saying what is wrong."""
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        raise ValueError("must be a URL (a string)")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"must be an http:// or https:// URL with a host and no query, not {value!r}")
    url = value.strip()
    return url if url.endswith("/") else url + "/"
