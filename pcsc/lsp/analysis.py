"""What the language server knows about one open document, without pygls.

`analyse` compiles the document's text in memory through the passes `pcsc check` runs
on the file (`Session.check_route`: libraries resolve from the document's folder, then
the configured and shipped ones), so that its diagnostics are the command's, and keeps
each route's pass results (`RouteUnit`) so that hover can show its numbers. The queries (`hover`,
`definition`, `completion`) take PCSC positions: 1-based lines, 1-based columns
counted in characters (code points). The server converts to and from LSP positions.

Queries read the text around the position with small regular expressions rather than
the parse tree, so they keep working while the text does not parse.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

import attrs

from pcsc.base.files import BOM, Unreadable, read_text
from pcsc.base.humanize import money, number, probability, significant
from pcsc.base.modes import Mode
from pcsc.base.resources import data_dir
from pcsc.compiler.session import RouteUnit, Session, library_from_text
from pcsc.coverage import discharge_route
from pcsc.diagnostics.model import Diagnostics, Finding, Span
from pcsc.lang.ir import FieldDecl, Library, Obligation, Transition
from pcsc.policy.load import PolicyError, PolicyStore
from pcsc.policy.model import LoadedPolicy
from pcsc.score.route import RouteNumbers, TransitionNumbers

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_USES = re.compile(r"^\s*uses\s+([^#\n]*)", re.M)
_POLICY = re.compile(r'^\s*policy\s+"([^"]*)"', re.M)
_STATE_DEF = r"\b(?:state)\s+({name})\b"
_TRANSITION_DEF = r"\btransition\s+({name})\s*:"


@attrs.frozen
class Location:
    """A region of a file, in PCSC terms (1-based, end exclusive); ``path`` None is
    the analysed document itself."""

    path: Path | None
    line: int
    column: int
    end_line: int
    end_column: int


@attrs.frozen
class Completion:
    label: str
    kind: str  # field | class | obligation | unit
    detail: str
    replace_from: int  # the column (1-based) where the text the completion replaces starts


@attrs.frozen
class Symbol:
    """A declaration of the document, for its outline: ``where`` is the whole
    declaration, ``name_at`` its name (both PCSC spans: 1-based, end exclusive)."""

    name: str
    kind: str  # route | state | vision | transition | obligation | evidence
    detail: str
    where: tuple[int, int, int, int]
    name_at: tuple[int, int, int, int]
    children: tuple[Symbol, ...] = ()


@attrs.define
class Analysis:
    """One compilation of one document, and the queries on it."""

    text: str
    shown: str  # the name the document's diagnostics carry
    folder: Path
    diagnostics: list[Finding]
    routes: list[RouteUnit]
    libraries: list[Library]
    policies: list[LoadedPolicy]
    store: PolicyStore

    # ------------------------------------------------------------------ lookups
    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def fields(self) -> dict[str, FieldDecl]:
        return {f.name: f for lib in self.libraries for f in lib.fields}

    def obligations(self) -> dict[str, Obligation]:
        return {o.name: o for lib in self.libraries for o in lib.obligations}

    def classes(self) -> dict[str, tuple[LoadedPolicy, float, float, str]]:
        """Reference class -> (policy, prior p, floor_usd, source)."""
        out: dict[str, tuple[LoadedPolicy, float, float, str]] = {}
        for loaded in self.policies:
            for name, prior in loaded.policy.priors.items():
                out.setdefault(name, (loaded, prior.p, prior.floor_usd, prior.source))
        return out

    def route_at(self, line: int) -> RouteUnit | None:
        for r in self.routes:
            if r.route.span.line <= line <= r.route.span.end_line:
                return r
        return self.routes[0] if len(self.routes) == 1 else None

    def transition(self, name: str, line: int) -> tuple[RouteUnit, Transition] | None:
        chosen = self.route_at(line)
        for r in [chosen] if chosen is not None else self.routes:
            for t in r.route.transitions:
                if t.name == name:
                    return r, t
        return None

    # ------------------------------------------------------------------ queries
    def hover(self, line: int, column: int) -> str | None:
        """Markdown for what is at the position: a transition, field, obligation,
        state or reference class; None for anything else."""
        text = self._line(line)
        cls = class_string_at(text, column)
        if cls is not None:
            return self._class_hover(cls)
        word = word_at(text, column)
        if word is None:
            return None
        name = word[0]
        keyword = first_word(text)
        found = self.transition(name, line)
        if found is not None and keyword in ("transition", "supports", "contradicts"):
            return transition_hover(*found)
        fields, obligations = self.fields(), self.obligations()
        if keyword == "discharges" and name in obligations:
            return self._obligation_hover(obligations[name])
        if name in fields and keyword not in ("transition", "vision", "discharges"):
            return self._field_hover(fields[name])
        if found is not None:
            return transition_hover(*found)
        if name in obligations:
            return self._obligation_hover(obligations[name])
        facts = self.route_at(line)
        if facts is not None:
            for s in facts.route.states:
                if s.name == name:
                    values = ", ".join(f"{k} {number(v)}" for k, v in s.values)
                    return f"**state {s.name}**: {values}"
        return None

    def definition(self, line: int, column: int) -> Location | None:
        """Where the name at the position is defined: a state or transition in this
        document, an obligation or field in its `.obl` file, a reference class in the
        policy's TOML file."""
        text = self._line(line)
        cls = class_string_at(text, column)
        if cls is not None:
            return self._class_location(cls)
        word = word_at(text, column)
        if word is None:
            return None
        name = word[0]
        keyword = first_word(text)
        obligations, fields = self.obligations(), self.fields()
        if keyword == "discharges":
            return _decl_location(obligations[name].span, name) if name in obligations else None
        if keyword in ("threshold", "kill") and name in fields:
            return _decl_location(fields[name].span, name)
        if keyword in ("supports", "contradicts"):
            return self._find(_TRANSITION_DEF, name)
        if keyword == "state" and name in fields:
            return _decl_location(fields[name].span, name)
        return (
            self._find(_STATE_DEF, name)
            or self._find(_TRANSITION_DEF, name)
            or (_decl_location(obligations[name].span, name) if name in obligations else None)
            or (_decl_location(fields[name].span, name) if name in fields else None)
        )

    def completion(self, line: int, column: int) -> list[Completion]:
        """Fields inside state blocks, thresholds and kills; reference classes inside
        `class "…"`; obligations after `discharges`; units after a number."""
        text = self._line(line)
        before = text[: column - 1]
        m = re.search(r'\bclass\s+"([^"]*)$', before)
        if m is not None:
            start = m.start(1) + 1
            return [
                Completion(name, "class", f"p_prior {significant(p)}, floor {money(floor, 0)} "
                           f"{loaded.policy.units.label} ({loaded.ref})", start)
                for name, (loaded, p, floor, _) in sorted(self.classes().items())
            ]
        partial = re.search(r"[A-Za-z_0-9]*$", before)
        start = (partial.start() if partial else len(before)) + 1
        if re.match(r"^\s*discharges\b", before):
            return [
                Completion(o.name, "obligation", "covers " + ", ".join(o.covers), start)
                for o in self.obligations().values()
            ]
        out: list[Completion] = []
        if re.search(r"(?<![A-Za-z_])[0-9][0-9_.]*(?:[eE][+-]?[0-9]+)?[kMB]?[ \t]+[A-Za-z]*$", before):
            out += [Completion(u, "unit", "unit", start) for u in grammar_units()]
        if re.match(r"^\s*(threshold|kill)\b", before) or self._in_state_block(line, column):
            out += [
                Completion(f.name, "field", f"{f.type}, library {f.library}", start) for f in self.fields().values()
            ]
        return out

    def symbols(self) -> list[Symbol]:
        """The outline of the routes this document declares (none while it does not
        lower): each route with its states, vision, transitions (each with the
        obligations it discharges) and evidence, in source order."""
        out = []
        for unit in self.routes:
            r = unit.route
            if r.file != self.shown:
                continue
            children = [self._symbol(s.name, "state", "", s.span) for s in r.states]
            children.append(self._symbol(r.vision.state, "vision", "", r.vision.span, after="vision"))
            for t in r.transitions:
                discharged = tuple(self._discharged(t))
                children.append(self._symbol(t.name, "transition", f"{t.source} -> {t.target}", t.span, discharged))
            children += [self._symbol(e.name, "evidence", e.source or "", e.span) for e in r.evidence]
            children.sort(key=lambda c: c.where)
            out.append(self._symbol(r.name, "route", r.title or "", r.span, tuple(children)))
        return out

    def _symbol(
        self, name: str, kind: str, detail: str, span: Span, children: tuple[Symbol, ...] = (), after: str = ""
    ) -> Symbol:
        where = (span.line, span.column, span.end_line, span.end_column)
        text = self._line(span.line)
        m = re.compile(rf"\b{re.escape(after or kind)}\s+({re.escape(name)})\b").search(text, max(span.column - 1, 0))
        name_at = (span.line, m.start(1) + 1, span.line, m.end(1) + 1) if m else where
        return Symbol(name, kind, detail, where, name_at, children)

    def _discharged(self, t: Transition) -> list[Symbol]:
        """The obligations on the transition's `discharges` line, each where it is written."""
        out = []
        for line in range(t.span.line, t.span.end_line + 1):
            m = re.match(r"(\s*discharges\s+)([^#\n]*)", self._line(line))
            if m is None:
                continue
            for w in WORD.finditer(m.group(2)):
                at = (line, m.start(2) + w.start() + 1, line, m.start(2) + w.end() + 1)
                out.append(Symbol(w.group(), "obligation", "", at, at))
        return out

    # ------------------------------------------------------------------ helpers
    def _line(self, line: int) -> str:
        lines = self.lines
        return lines[line - 1] if 1 <= line <= len(lines) else ""

    def _in_state_block(self, line: int, column: int) -> bool:
        offset = sum(len(s) + 1 for s in self.lines[: line - 1]) + column - 1
        before = self.text[:offset]
        opened = list(re.finditer(r"\bstate\s+[A-Za-z_][A-Za-z0-9_]*\s*\{", before))
        return bool(opened) and "}" not in before[opened[-1].end() :]

    def _find(self, pattern: str, name: str) -> Location | None:
        m = re.search(pattern.format(name=re.escape(name)), self.text)
        if m is None:
            return None
        line = self.text.count("\n", 0, m.start(1)) + 1
        column = m.start(1) - (self.text.rfind("\n", 0, m.start(1)) + 1) + 1
        return Location(None, line, column, line, column + len(name))

    def _class_hover(self, name: str) -> str | None:
        known = self.classes().get(name)
        if known is None:
            return None
        loaded, p, floor, source = known
        out = (f'**class "{name}"** ({loaded.ref})\n\n- p_prior {significant(p)}\n- floor {money(floor, 0)} '
               f"{loaded.policy.units.label}")
        return out + (f"\n- source: {source}" if source else "")

    def _class_location(self, name: str) -> Location | None:
        """The `[priors."name"]` table of the pinned policy, or of a policy it extends."""
        header = re.compile(r'^[ \t]*\[[ \t]*priors[ \t]*\.[ \t]*"' + re.escape(name) + r'"[ \t]*\]', re.M)
        for loaded in self.policies:
            path: Path | None = Path(loaded.path).resolve()
            seen: set[Path] = set()
            while path is not None and path not in seen and path.is_file():
                seen.add(path)
                try:
                    text = read_text(path)
                except Unreadable:
                    break
                m = header.search(text)
                if m is not None:
                    line = text.count("\n", 0, m.start()) + 1
                    return Location(path, line, 1, line, len(m.group(0)) + 1)
                path = self._extended(text)
        return None

    def _extended(self, text: str) -> Path | None:
        try:
            ref = tomllib.loads(text).get("policy", {}).get("extends")
        except tomllib.TOMLDecodeError:
            return None
        if not isinstance(ref, str) or "@" not in ref:
            return None
        policy_id, _, version = ref.partition("@")
        found = self.store.find(policy_id, version)
        return found.resolve() if found is not None else None

    def _field_hover(self, f: FieldDecl) -> str:
        if f.material is None:
            material = "any change is material"
        elif f.material.relative:
            material = f"material at a change of {significant(f.material.amount * 100)}% of the value"
        else:
            material = f"material at a change of {number(f.material.amount)}"
        covering = [o.name for o in self.obligations().values() if f.name in o.covers]
        by = ", ".join(f"`{o}`" for o in covering) or "no obligation"
        return (
            f"**field {f.name}**: `{f.type}` (library {f.library}, {f.span.file}:{f.span.line})\n\n"
            f"- {material}\n- covered by {by}"
        )

    def _obligation_hover(self, o: Obligation) -> str:
        requires = "\n".join(f"- `{r.text}`" for r in o.requires) or "- (no require lines)"
        return (
            f"**obligation {o.name}** covers {', '.join(o.covers)} "
            f"(library {o.library}, {o.span.file}:{o.span.line})\n\n{requires}"
        )


def analyse(
    text: str,
    path: Path | None,
    *,
    lib_path: Sequence[Path] = (),
    policy_path: Sequence[Path] = (),
    coverage: Mode | None = None,
    config_coverage: Mode | None = None,
) -> Analysis:
    """Compile ``text`` (the document at ``path``, or an unsaved one) in memory;
    ``coverage`` is a flag's mode, ``config_coverage`` a configuration file's. A
    client may keep a file's byte order mark as the text's first character: it is
    compiled as a space, so every position stays where the client counts it."""
    document, text = text, " " + text[1:] if text.startswith(BOM) else text
    folder = path.parent if path is not None else Path.cwd()
    shown = str(path) if path is not None else "<untitled>"
    store = PolicyStore(list(policy_path))
    if path is not None and path.suffix == ".obl":
        return _analyse_library(document, text, shown, folder, store)
    session = Session(
        lib_path=list(lib_path), policies=store, coverage_mode=coverage, config_coverage=config_coverage
    )
    facts = [session.check_route(route) for route in session.routes_from_text(text, shown, folder)]
    return Analysis(
        text=document,
        shown=shown,
        folder=folder,
        diagnostics=_for_document(session.diags.items, shown),
        routes=facts,
        libraries=_libraries(text, folder, lib_path, store),
        policies=_policies(text, store),
        store=store,
    )


def _analyse_library(document: str, text: str, shown: str, folder: Path, store: PolicyStore) -> Analysis:
    """An `.obl` library, as a route's `uses` loads it: parsed and lowered as a library
    (its syntax, its fields and obligations), never as a route file; the check
    `pcsc check` runs on one (`library_from_text`)."""
    diags = Diagnostics()
    library = library_from_text(text, shown, diags)
    return Analysis(
        text=document,
        shown=shown,
        folder=folder,
        diagnostics=_for_document(diags.items, shown),
        routes=[],
        libraries=[library] if library is not None else [],
        policies=[],
        store=store,
    )


def folds(text: str) -> list[tuple[int, int, str]]:
    """(first, last, kind) lines (1-based) of each `{ … }` block that spans lines
    (kind "block", outermost first) and of each run of two or more comment lines
    (kind "comment"). Read from the text alone, so
    folding works while the document does not parse; braces inside strings and
    comments do not count."""
    blocks: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    opened: list[int] = []
    for at, line in enumerate(text.split("\n"), 1):
        in_string = False
        for char in line:
            if char == '"':
                in_string = not in_string
            elif in_string:
                continue
            elif char == "#":
                break
            elif char == "{":
                opened.append(at)
            elif char == "}" and opened:
                first = opened.pop()
                if at > first:
                    blocks.append((first, at))
        if line.lstrip().startswith("#"):
            if comments and comments[-1][1] == at - 1:
                comments[-1] = (comments[-1][0], at)
            else:
                comments.append((at, at))
    return [(a, b, "block") for a, b in sorted(blocks)] + [(a, b, "comment") for a, b in comments if b > a]


def _for_document(items: Sequence[Finding], shown: str) -> list[Finding]:
    """The document's diagnostics; one about another file (a library, a policy) is
    moved to the document's first line, its message naming where it is."""
    out = []
    for d in items:
        if d.span.file == shown:
            out.append(d)
        else:
            where = d.span.file + (f":{d.span.line}" if d.span.line else "")
            out.append(attrs.evolve(d, message=f"{where}: {d.message}", span=Span(shown, 1, 1, 1, 1)))
    return out


def _libraries(text: str, folder: Path, lib_path: Sequence[Path], store: PolicyStore) -> list[Library]:
    """The libraries the document's `uses` lines name (found even when it does not lower)."""
    scratch = Session(lib_path=list(lib_path), policies=store)
    out: list[Library] = []
    for m in _USES.finditer(text):
        for name in WORD.findall(m.group(1)):
            lib = scratch.resolve_library(name, Span("<uses>", 1, 1, 1, 1), folder)
            if lib is not None and lib not in out:
                out.append(lib)
    return out


def _policies(text: str, store: PolicyStore) -> list[LoadedPolicy]:
    out: list[LoadedPolicy] = []
    for m in _POLICY.finditer(text):
        try:
            loaded = store.load_ref(m.group(1))
        except PolicyError:
            continue
        if loaded not in out:
            out.append(loaded)
    return out


def _decl_location(span: Span, name: str) -> Location:
    """The declared name on the first line of a declaration in another file (a
    library's `obligation NAME` or `field NAME`); the whole span if it is not found."""
    path = Path(span.file).resolve()
    try:
        line = read_text(path).split("\n")[span.line - 1]
    except (Unreadable, IndexError):
        return Location(path, span.line, span.column, span.end_line, span.end_column)
    m = re.search(r"\b" + re.escape(name) + r"\b", line[max(span.column - 1, 0) :])
    if m is None:
        return Location(path, span.line, span.column, span.end_line, span.end_column)
    start = max(span.column - 1, 0) + m.start() + 1
    return Location(path, span.line, start, span.line, start + len(name))


def word_at(line: str, column: int) -> tuple[str, int, int] | None:
    """The name under (or just before) the 1-based ``column``: (text, start, end), 1-based."""
    for m in WORD.finditer(line):
        if m.start() + 1 <= column <= m.end() + 1:
            return m.group(0), m.start() + 1, m.end() + 1
    return None


def first_word(line: str) -> str | None:
    m = WORD.match(line.lstrip())
    return m.group(0) if m else None


def class_string_at(line: str, column: int) -> str | None:
    """The reference class when the position is inside the string of `class "…"`."""
    m = re.match(r'^\s*class\s+"([^"]*)"', line)
    if m is None or not (m.start(1) <= column - 1 <= m.end(1)):
        return None
    return m.group(1)


def grammar_units() -> tuple[str, ...]:
    """The units the grammar accepts after a number (its UNIT terminal)."""
    grammar = (data_dir("grammar") / "pcsc.lark").read_text(encoding="utf-8")
    m = re.search(r"^UNIT[.0-9]*:\s*/\(([^)]*)\)", grammar, re.M)
    return tuple(m.group(1).split("|")) if m else ("usd", "days", "months", "years")


def transition_hover(facts: RouteUnit, t: Transition) -> str:
    """A transition's numbers (p_prior, W, p, c and what bound it, U, D) and coverage."""
    head = f"**transition {t.name}**: {t.source} -> {t.target}, class `{t.ref_class}`"
    lines = [head, ""]
    n = _numbers(facts.numbers, t.name)
    if n is None:
        lines.append("no numbers: the route's policy or scoring has errors")
    else:
        c = n.cost
        policy = facts.policy.ref if facts.policy is not None else "?"
        unit = facts.policy.policy.units.label if facts.policy is not None else "USD"
        lines += [
            f"- p_prior {significant(n.p_prior, 4)} (policy {policy})",
            f"- W {probability(n.reweight.W)} (evidence reweighting)",
            f"- p {probability(n.p)}",
            f"- c {money(c.c)} {unit}, bound by {c.bound_by} "
            f"(budget {money(c.budget)}, class floor {money(c.floor_class)}, delta floor {money(c.floor_delta)})",
            f"- U {significant(n.U, 4)} ({n.U_rule}), D {money(n.D)}, R_next {money(n.R_next)}",
        ]
        if facts.route.shape is not None:  # a graph route (docs/graphs.md)
            lines.append(f"- reach {significant(n.reach, 4)} (the chance its source state is reached), "
                         "R_next with the other branches' chances")
        numbers = facts.numbers
        assert numbers is not None  # `_numbers` found this transition in them
        if numbers.transitions[numbers.binding].name == t.name:
            note = numbers.tie_note
            lines.append("- binding transition of the route" + ("" if note is None else f" — {note}"))
    lines.append("")
    lines.append(_coverage_text(facts, t))
    return "\n".join(lines)


def _numbers(numbers: RouteNumbers | None, name: str) -> TransitionNumbers | None:
    if numbers is None:
        return None
    return next((n for n in numbers.transitions if n.name == name), None)


def _coverage_text(facts: RouteUnit, t: Transition) -> str:
    if facts.policy is None:
        return "coverage: not discharged (the route's policy has errors)"
    # with coverage off nothing was discharged; hover still says what each change would need
    coverage = facts.coverage if facts.coverage is not None else discharge_route(facts.route, facts.policy.policy)
    rows = [d for d in coverage.for_transition(t.name) if d.covered is not None]
    mode = f" ({facts.mode})" if facts.mode else ""
    if not rows:
        return f"coverage{mode}: no material change"
    out = [f"coverage{mode}:"]
    for d in rows:
        change = f"{d.delta.field} {number(d.delta.source)} -> {number(d.delta.target)}"
        if d.covered:
            out.append(f"- {change}: covered by `{d.by}`")
        else:
            tried = ", ".join(f"`{a.obligation}`" for a in d.tried) or "no obligation covers the field"
            out.append(f"- {change}: **uncovered** (tried {tried})")
    for a in coverage.admission:
        if a.transition == t.name:
            what = "the transition" if a.field is None else a.field
            check = "" if a.check == "fields" else f"`{a.check}`: "
            out.append(f"- {what}: **not admitted** by class `{a.ref_class}` ({check}{a.reason})")
    return "\n".join(out)


def format_document(
    text: str, path: Path | None, *, lib_path: Sequence[Path] = (), policy_path: Sequence[Path] = ()
) -> str | None:
    """The document in `pcsc fmt`'s canonical layout; None when it is already
    canonical, does not parse, or when formatting would change its comments or IR
    (`pcsc.lang.fmt.check_format` refuses it)."""
    from pcsc.compiler.meaning import semantics
    from pcsc.lang.fmt import Semantics, check_format, format_source

    shown = str(path) if path is not None else "<untitled>"
    folder = path.parent if path is not None else Path.cwd()
    library = shown.endswith(".obl")
    text = text.removeprefix(BOM)  # as `pcsc fmt`: not a change of layout; a formatted text has none
    formatted = format_source(text, shown, Diagnostics())
    if formatted is None or formatted == text:
        return None

    def meaning(t: str) -> Semantics:
        return semantics(t, shown, library, folder, lib_path, policy_path)

    if check_format(text, formatted, shown, meaning) is not None:
        return None
    return formatted
