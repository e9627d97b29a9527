"""The context a command runs in: settings (flags over configuration), sessions and
inputs, the choice of a route, progress, and the output buffer that ``emit`` fills.

Commands read their inputs through the context so that every command treats `-`
(standard input), folders, search paths and ``--route`` the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from pcsc.base.config import Config
from pcsc.cli.exits import UsageError

if TYPE_CHECKING:
    from pcsc.compiler.cohort import Settings
    from pcsc.compiler.parallel import Executor
    from pcsc.compiler.session import Compiled, PolicyRequirement, Session
    from pcsc.diagnostics.model import Finding
    from pcsc.diagnostics.suppress import Selection
    from pcsc.forecast.ledger import Ledger
    from pcsc.lang.ir import Route
    from pcsc.policy.model import LoadedPolicy

T = TypeVar("T")
STDIN = "-"
#: Reports read by programs: no progress bar beside them, even on a terminal.
MACHINE_FORMATS = frozenset({"json", "sarif", "junit", "github"})
STDIN_NAME = "<stdin>"


def colour_enabled(choice: str, stream: TextIO, environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """``--color auto|always|never``; in ``auto``, a non-empty NO_COLOR turns colour off
    and a non-empty FORCE_COLOR turns it on, else colour follows whether ``stream`` is a
    terminal (and TERM is not ``dumb``)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and environ.get("TERM") != "dumb"


class Context:
    """Everything a command needs besides its own arguments."""

    def __init__(
        self,
        args: argparse.Namespace,
        config: Config,
        *,
        run_config: Config | None = None,
        groups: Sequence[tuple[Config, Sequence[Path]]] = (),
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        self.args = args
        self.config = config  # the inputs' configuration: it judges them
        self.run_config = config if run_config is None else run_config  # the working folder's: the run's own settings
        self.groups = list(groups) or [(config, [])]  # each configuration and the inputs it judges
        self._session_configs: list[Config] = []  # the configuration of each session, in order
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self.stdout = stdout or sys.stdout
        self.quiet: bool = bool(getattr(args, "quiet", False))
        self.wide: bool = bool(getattr(args, "wide", False))
        self.colour = colour_enabled(getattr(args, "color", "auto") or "auto", self.stderr)
        self.sessions: list[Session] = []
        self._extra_inputs: list[tuple[str, str]] = []
        self._out: list[str] = []
        self.loaded_count = 0  # routes the last `load` lowered
        self._executor: Executor | None = None

    # ------------------------------------------------------------------ settings
    @property
    def format(self) -> str:
        chosen: str | None = getattr(self.args, "format", None)
        if chosen:
            return chosen
        allowed: Sequence[str] = getattr(self.args, "_formats", ("text",))
        if self.run_config.format in allowed:
            return self.run_config.format or "text"
        return "text"

    @property
    def coverage(self) -> str | None:
        """``--coverage``: the one setting that may lower a policy's coverage mode."""
        chosen: str | None = getattr(self.args, "coverage", None)
        return chosen

    def policy_requirements(self) -> tuple[PolicyRequirement, ...]:
        """What the run demands of every route's policy: `--require-policy` (on the
        commands that take it) and each configuration file's `require_policy` (the
        nearest and every one above it, on every command); all of them hold."""
        from pcsc.base.resources import display_path
        from pcsc.compiler.session import PolicyRequirement

        given: list[str] = getattr(self.args, "require_policy", None) or []
        flags = (PolicyRequirement(tuple(given), "command line"),) if given else ()
        return flags + tuple(
            PolicyRequirement(allowed, display_path(path)) for path, allowed in self.config.policy_requirements()
        )

    def root_origins(self, name: str) -> dict[Path, tuple[Any, str | None]]:
        """Who gave each folder of `search_path` ``name``: the command line, or the
        configuration file (for the packet's record of where each file was found)."""
        from pcsc.base.resources import display_path

        configured: tuple[Path, ...] = getattr(self.config, name)
        origins: dict[Path, tuple[Any, str | None]] = {
            p: ("config", display_path(self.config.path)) for p in configured if self.config.path is not None
        }
        origins.update({Path(p): ("command line", None) for p in getattr(self.args, name, None) or []})
        return origins

    def config_beside_routes(self, route_files: Iterable[Path]) -> Finding | None:
        """PCSC-E407 when the configuration file that adds policy or library folders sits
        in the folder of a route the run reads, or below it: whoever wrote the route could
        have written the file, and the folders it names would decide who judges the
        route. None when it sits above every route's folder (or adds no folder)."""
        cfg = self.config
        keys = [k for k in ("policy_path", "lib_path") if getattr(cfg, k)]
        if cfg.path is None or not keys:
            return None
        home = cfg.path.parent.resolve()
        route = next((f for f in route_files if home.is_relative_to(f.resolve().parent)), None)
        if route is None:
            return None
        from pcsc.base.config import key_line
        from pcsc.base.resources import display_path
        from pcsc.diagnostics.messages import E407_CONFIG_BESIDE_ROUTE, diag
        from pcsc.diagnostics.model import Span

        shown = display_path(cfg.path)
        return diag(
            E407_CONFIG_BESIDE_ROUTE,
            Span.file_only(shown, key_line(cfg.path, keys[0]) or 0),
            keys=" and ".join(f"`{k}`" for k in keys),
            file=shown,
            route=display_path(route),
        )

    def search_path(self, name: str) -> list[Path]:
        """``--lib-path``/``--policy-path`` folders, then the configuration's; each must exist."""
        given = [Path(p) for p in getattr(self.args, name, None) or []]
        for folder in given:
            if not os.path.isdir(folder):  # False, not OSError, for a name too long
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{flag} {folder}: no such folder")
        configured: tuple[Path, ...] = getattr(self.config, name)
        return [*given, *(p for p in configured if p not in given)]

    @property
    def docs_url(self) -> str | None:
        """The published docs' base URL: `PCSC_DOCS_URL`, else the configuration's
        `docs_url`, else None (links into the docs are left out)."""
        from pcsc.base.config import DOCS_URL_ENV, docs_base_url

        given = os.environ.get(DOCS_URL_ENV)
        if not given:
            return self.run_config.docs_url
        try:
            return docs_base_url(given)
        except ValueError as exc:
            raise UsageError(f"{DOCS_URL_ENV} {exc}") from None

    def ledger_path(self) -> Path:
        from pcsc.forecast.ledger import DEFAULT_PATH, ledger_location

        given = getattr(self.args, "ledger", None) or self.run_config.ledger
        if given:
            return ledger_location(given)  # a postgresql:// address stays whole
        return DEFAULT_PATH

    def read_ledger(self, read: Callable[[Ledger], T]) -> T:
        """``read`` applied to the run's ledger, which must exist, opened and closed
        again; the ledger is then an input of the run. Raises ``LedgerError``."""
        from pcsc.forecast.stores import open_ledger

        path = self.ledger_path()
        with open_ledger(path, create=False) as ledger:
            found = read(ledger)
        self.note_input(Path(path))
        return found

    def selection(self, file: str) -> Selection:
        """The warnings the configuration that judged ``file`` leaves out (`select`, `ignore`)."""
        from pcsc.base.resources import display_path
        from pcsc.diagnostics.suppress import Selection

        cfg = next((c for session, c in zip(self.sessions, self._session_configs, strict=False)
                    if file in session.sources or any(file == shown for shown, _ in session.inputs)), self.config)
        return Selection(cfg.select, cfg.ignore, display_path(cfg.path) if cfg.path else None)

    def input_groups(self, files: Sequence[str]) -> list[tuple[Config, list[str]]]:
        """``files`` by the configuration that judges them, in the order they are given
        (`-`, standard input, with the first group, where it was given)."""
        out: list[tuple[Config, list[str]]] = []
        for cfg, given in self.groups:
            first = not out  # standard input goes with the first, in its place among the files
            mine = [f for f in files if (f == STDIN and first) or (f != STDIN and Path(f) in given)]
            if mine or first:
                out.append((cfg, mine))
        return [(cfg, mine) for cfg, mine in out if mine] or [(self.config, list(files))]

    def forget_sessions(self) -> None:
        """Drop the sessions run so far (`check --fix` checks the files it rewrote anew)."""
        self.sessions.clear()
        self._session_configs.clear()

    @contextlib.contextmanager
    def judged_by(self, config: Config) -> Iterator[None]:
        """Within the block, sessions use ``config`` (one group of `input_groups`)."""
        before, self.config = self.config, config
        try:
            yield
        finally:
            self.config = before

    # ------------------------------------------------------------------ sessions and inputs
    def session(self) -> Session:
        """A new compiler session with this run's search paths and coverage mode."""
        from pcsc.compiler.ircache import CacheSettingError, IRCache
        from pcsc.compiler.session import Session
        from pcsc.policy.load import PolicyStore

        try:
            ir_cache = IRCache.default()
        except CacheSettingError as exc:
            raise UsageError(str(exc)) from None
        strictest = self.config.strictest_coverage()
        session = Session(
            lib_path=self.search_path("lib_path"),
            policies=PolicyStore(self.search_path("policy_path"), self.root_origins("policy_path")),
            coverage_mode=self.coverage,  # type: ignore[arg-type]
            config_coverage=None if strictest is None else strictest[0],  # type: ignore[arg-type]
            required_policies=self.policy_requirements(),
            lib_origins=self.root_origins("lib_path"),
            ir_cache=ir_cache,
        )
        self.sessions.append(session)
        self._session_configs.append(self.config)
        return session

    @property
    def jobs(self) -> int:
        """``--jobs`` (1 for commands without it; 0 means one per CPU); with
        ``--scheduler``, the Dask cluster's worker threads (at least 2)."""
        if getattr(self.args, "scheduler", None):
            return self.executor().jobs
        jobs: int = getattr(self.args, "jobs", 1)
        return jobs

    def executor(self) -> Executor:
        """The executor for ``--jobs`` or ``--scheduler`` (`pcsc.compiler.parallel`), made once."""
        if self._executor is None:
            from pcsc.compiler.parallel import executor

            scheduler: str | None = getattr(self.args, "scheduler", None)
            jobs: int = getattr(self.args, "jobs", 1)
            if scheduler and jobs != 1:
                raise UsageError("--scheduler and --jobs exclude each other: the cluster's workers do the work")
            if scheduler:
                from pcsc.compiler.parallel_dask import SchedulerError

                try:
                    self._executor = executor(1, scheduler)
                except SchedulerError as exc:
                    raise UsageError(str(exc)) from None
            else:
                self._executor = executor(jobs)
        return self._executor

    def settings(self, session: Session, *, bind: bool = False, keep_routes: bool = True) -> Settings:
        """What a worker needs to rebuild ``session`` (`pcsc.compiler.cohort`)."""
        from pcsc.compiler.cohort import Settings

        return Settings(
            lib_path=tuple(session.lib_path),
            policy_path=tuple(session.policies.search_path),
            coverage_mode=session.coverage_mode,
            config_coverage=session.config_coverage,
            required_policies=session.required_policies,
            lib_origins=tuple(session.lib_origins.items()),
            policy_origins=tuple(session.policies.origins.items()),
            ir_cache=session.ir_cache is not None,
            cache_limits=None if session.ir_cache is None else session.ir_cache.limits,
            bind=bind,
            keep_routes=keep_routes,
        )

    def load(
        self, files: Sequence[str], *, bind: bool = False, keep_routes: bool = True
    ) -> tuple[Session, list[Route]]:
        """Read and lower the routes of ``files`` (folders recursively; `-` is standard
        input), with ``--jobs`` workers. ``bind`` also binds each route to its policy
        (for its diagnostics); ``keep_routes=False`` returns no routes, only their
        number in ``loaded_count`` (`pcsc check` needs no more)."""
        from pcsc.base.canonical import sha256_hex

        session = self.session()
        routes: list[Route] = []
        if list(files).count(STDIN) > 1:
            raise UsageError("standard input (`-`) can be read only once")
        from pcsc.compiler.session import expand_inputs
        from pcsc.diagnostics.model import Diagnostics

        beside = self.config_beside_routes(p for arg in files if arg != STDIN
                                           for p, _ in expand_inputs([arg], Diagnostics()))
        if beside is not None:  # nothing is read under folders the routes' author chose
            session.diags.items.append(beside)
            self.loaded_count = 0
            return session, routes
        # one process (no --jobs, no --scheduler): neither workers nor their settings are made
        serial = not getattr(self.args, "scheduler", None) and getattr(self.args, "jobs", 1) in (1, None)
        made: list[Settings] = []

        def load_files(pending: Sequence[tuple[Path, str]],
                       done: Callable[[int], None] | None = None) -> tuple[list[Route], int]:
            if serial:
                return session.load_files(pending, bind=bind, keep_routes=keep_routes, done=done)
            from pcsc.compiler.cohort import load_files as in_workers

            if not made:
                made.append(self.settings(session, bind=bind, keep_routes=keep_routes))
            return in_workers(session, made[0], pending, self.executor(), done)

        if not serial:
            self.executor()  # a usage error (--jobs with --scheduler, no scheduler) before anything is read
        self.loaded_count = 0
        pending: list[tuple[Path, str]] = []

        def take(got: list[Route], count: int) -> None:
            self.loaded_count += count
            if keep_routes:
                routes.extend(got)

        for arg in files:
            if arg == STDIN:
                take(*load_files(pending))
                pending.clear()
                text = session.read_stream(self.stdin, STDIN_NAME)
                if text is None:
                    continue
                session.inputs.append((STDIN_NAME, sha256_hex(text)))
                got = session.routes_from_text(text, STDIN_NAME, Path.cwd())
                if bind:
                    for route in got:
                        session.check_route(route)
                take(got, len(got))
            else:
                pending.extend(session.route_files(arg))
        with self.progress_bar(len(pending), "reading routes") as done:
            take(*load_files(pending, done))
        return session, routes

    def compile(self, files: Sequence[str]) -> tuple[Session, list[Compiled]]:
        session, routes = self.load(files)
        return session, session.compile_routes(routes)

    def routes_named(self, routes: Sequence[Route], name: str | None, where: Sequence[str]) -> list[Route]:
        """``routes``, or only those called ``name`` when one is given (`--route` on a
        command that takes every route by default); a usage error, with a suggestion,
        when routes were read and none is called ``name``."""
        if name is None:
            return list(routes)
        chosen = [r for r in routes if r.name == name]
        if not chosen and routes:
            self.choose_route(routes, name, where)  # raises the usage error, with a suggestion
        return chosen

    def choose_route(self, routes: Sequence[Route], name: str | None, where: Sequence[str]) -> Route | None:
        """The route called ``name``, or the only route; a usage error otherwise."""
        if not routes:
            return None
        names = [r.name for r in routes]
        if name is None:
            if len(routes) > 1:
                raise UsageError("the file holds several routes; choose one with --route: " + ", ".join(names))
            return routes[0]
        for r in routes:
            if r.name == name:
                return r
        from pcsc.lang.lower.common import suggest

        hint = suggest(name, names)
        raise UsageError(f"no route `{name}` in {', '.join(where)}" + (f"; {hint}" if hint else ""))

    def compile_one(
        self,
        files: Sequence[str],
        name: str | None,
        edit: Callable[[Session, list[Route]], list[Route]] | None = None,
    ) -> tuple[Session, list[Route], Compiled | None]:
        """Load ``files`` and compile the route ``--route`` names (or the only one). When
        the named route is the one that failed to lower, the session's errors say why and
        nothing is compiled; a name that matches nothing in clean files is a usage error.
        Returns the session, every route loaded, and the chosen route compiled;
        ``edit``, when given, first rewrites the routes (and may rebind the session)."""
        session, routes = self.load(files)
        if edit is not None:
            routes = edit(session, routes)
        try:
            chosen = self.choose_route(routes, name, files)
        except UsageError:
            if name is None or not session.diags.has_errors:
                raise
            chosen = None
        return session, routes, session.compile_route(chosen) if chosen is not None else None

    def policy(self, target: str) -> LoadedPolicy:
        """A policy named ``id@version`` on the policy path, or a ``.toml`` file (whose
        sibling folders resolve ``extends``). Raises ``PolicyError``."""
        from pcsc.policy.load import PolicyStore

        roots = self.search_path("policy_path")
        path = Path(target)
        if target.endswith(".toml") or os.path.isfile(path):
            self.note_input(path)
            return PolicyStore([path.parent.parent, *roots]).load_path(path)
        return PolicyStore(roots).load_ref(target)

    def note_input(self, path: Path, shown: str | None = None) -> None:
        """Record a file this run read (for the envelope's ``inputs``), if it can be read."""
        from pcsc.base.canonical import sha256_hex
        from pcsc.base.files import Unreadable, read_bytes

        try:
            data = read_bytes(path)
        except Unreadable:
            return
        self._extra_inputs.append((shown or str(path), sha256_hex(data)))

    def note_hashed_input(self, shown: str, sha256: str) -> None:
        """Record a text this run read and hashed itself (for the envelope's ``inputs``)."""
        self._extra_inputs.append((shown, sha256))

    @property
    def inputs(self) -> list[tuple[str, str]]:
        seen: dict[str, str] = {}
        for session in self.sessions:
            for p, h in session.inputs:
                seen.setdefault(p, h)
        for p, h in self._extra_inputs:
            seen.setdefault(p, h)
        return list(seen.items())

    @property
    def sources(self) -> dict[str, str]:
        merged: dict[str, str] = {}
        for session in self.sessions:
            merged.update(session.sources)
        return merged

    @property
    def diagnostics(self) -> list[Finding]:
        return [d for session in self.sessions for d in session.diags.items]

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    # ------------------------------------------------------------------ output
    def write(self, text: str) -> None:
        """Append to the command's output (standard output, or the ``-o`` file)."""
        self._out.append(text)

    def output(self) -> str:
        return "".join(self._out)

    def show_diagnostics(self, diagnostics: Sequence[Finding]) -> None:
        """Diagnostics in text form on standard error, coloured when allowed: at most
        ``--max-diagnostics`` of them, then a line that says how many more there are."""
        if not diagnostics:
            return
        from pcsc.render.diagnostics import cut_note, to_text

        limit: int = getattr(self.args, "max_diagnostics", 0) or len(diagnostics)
        text = to_text(diagnostics[:limit], self.sources)
        if len(diagnostics) > limit:
            text += "\n" + cut_note(diagnostics[limit:], "--max-diagnostics 0 prints them all")
        if not self.colour:
            self.stderr.write(text + "\n")
            return
        from rich.console import Console
        from rich.text import Text

        console = Console(file=self.stderr, highlight=False, force_terminal=True)
        for line in text.splitlines():
            styled = Text(line)
            styled.highlight_words([": error:"], "bold red")
            styled.highlight_words([": warning:"], "bold yellow")
            styled.highlight_regex(r"^\s+help:.*", "cyan")
            console.print(styled, soft_wrap=True)  # never wrap: editors parse these lines

    def shows_progress(self, total: int) -> bool:
        """Whether work of ``total`` steps shows a progress bar: on standard error, only
        when it is a terminal, the run is not ``--quiet``, there are at least two steps
        and the report is for people (text), never beside a JSON, SARIF, JUnit or GitHub
        report; so pipes, files, CI and tests see none."""
        return (not self.quiet and total >= 2 and self.format not in MACHINE_FORMATS
                and self.stderr.isatty())

    def progress(self, items: Iterable[T], total: int, description: str) -> Iterator[T]:
        """``items``, with a progress bar on standard error (`shows_progress`)."""
        if not self.shows_progress(total):
            yield from items
            return
        from rich.progress import Progress

        with Progress(console=_console(self.stderr), transient=True) as bar:
            task = bar.add_task(description, total=total)
            for item in items:
                yield item
                bar.advance(task)


    @contextlib.contextmanager
    def progress_bar(self, total: int, description: str) -> Iterator[Callable[[int], None] | None]:
        """A callable that advances a progress bar on standard error by its argument,
        while the block runs; None when no bar is shown (`shows_progress`)."""
        if not self.shows_progress(total):
            yield None
            return
        from rich.progress import Progress

        with Progress(console=_console(self.stderr), transient=True) as bar:
            task = bar.add_task(description, total=total)
            yield lambda n: bar.advance(task, n)


def _console(stream: TextIO) -> Any:
    from rich.console import Console

    return Console(file=stream)
