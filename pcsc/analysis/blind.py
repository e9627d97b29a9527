"""Leakage controls: blinded copies of route files, and the identity cues left in them.

A grader who recognises a company can grade from memory instead of from the route. A
blinded copy masks the identity cues in the route's free text (its title, each
transition's actor, mechanism and asset, each evidence item's source and excerpt) and in
its comments: names from a user list (companies, people, investors), e-mail addresses,
URLs, domain names and well-known investors. Each distinct cue (compared without case)
becomes one mask, ``[NAME-1]``, ``[DOMAIN-2]``…, the same everywhere in one run, so text
that was equal stays equal: ``grounded(asset)`` still finds the asset in the same
excerpts, repeated evidence is still repeated, and the blinded routes compile to the same
numbers. The private map from masks to cues is kept apart from the copies.

The copies' file names are masked too (without the brackets). Route, state, transition
and evidence names that carry a cue are renamed (``route_1``, ``state_2``…) at every
place they occur, so the copies compile to the same numbers; other names the compiler
reads (fields, cost items, libraries, obligations), reference classes, policy pins and
numbers are kept. `leakage_cues` finds the cues left anywhere in a text (a name counts inside an
identifier too, `_` separating words), for `pcsc check --leakage` and for the warnings of
`pcsc blind` about what it left.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

import attrs

#: The free-text strings that are masked: the string after one of these keywords (and a
#: route's title, the string after `route NAME`).
MASKED_KEYWORDS = ("actor", "mechanism", "asset", "source", "excerpt")

_TLDS = "com|io|org|net|co|ai|app|dev|ly|me|us|uk|de|fr|info|biz|tv|vc|xyz|so|sh|gg|to|eu|ca"
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("EMAIL", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")),
    ("URL", re.compile(r"\b(?:https?://|www\.)[^\s\"<>()]+[^\s\"<>().,;:!?]")),
    ("DOMAIN", re.compile(rf"\b(?:[A-Za-z0-9-]+\.)+(?:{_TLDS})\b(?:/[^\s\"<>()]*[^\s\"<>().,;:!?])?", re.IGNORECASE)),
    ("INVESTOR", re.compile(
        r"\b(?:Y Combinator|Sequoia(?: Capital)?|Andreessen Horowitz|a16z|Accel(?: Partners)?|Benchmark Capital|"
        r"Kleiner Perkins|Greylock(?: Partners)?|Index Ventures|Founders Fund|First Round(?: Capital)?|"
        r"Union Square Ventures|SV Angel|Techstars|500 Startups|Lightspeed(?: Venture Partners)?|"
        r"Khosla Ventures|Bessemer(?: Venture Partners)?|Tiger Global|SoftBank)\b"
    )),
)

#: The kinds of names `Blinder.rename_identifiers` renames, and the roles of the words
#: after each keyword that declares or references one (`transition NAME: SOURCE -> TARGET`).
_ROLES_NUMBERED = ("route", "state", "transition", "evidence")
_AFTER_KEYWORD: dict[str, tuple[str, ...]] = {
    "route": ("route",),
    "state": ("state",),
    "vision": ("state",),
    "transition": ("transition", "state", "state"),
    "evidence": ("evidence",),
}

_LEXEME = re.compile(r'(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<comment>#[^\n]*)|(?P<word>[A-Za-z_][A-Za-z0-9_]*)')


@attrs.frozen
class Cue:
    """An identity cue found in a text: its kind (NAME, EMAIL, URL, DOMAIN, INVESTOR), the
    text matched, and where (1-based line and column)."""

    kind: str
    text: str
    line: int
    column: int


def read_names(text: str) -> list[str]:
    """The names of a names file: one per line; blank lines and `#` comments skipped."""
    return [n for n in (line.split("#", 1)[0].strip() for line in text.splitlines()) if n]


def _name_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    chosen = sorted({n for n in names if n}, key=lambda n: (-len(n), n))  # longest first
    if not chosen:
        return None
    # a name is a whole word, and `_` separates words: `Smsly` is a cue in `smsly_api`
    return re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(n) for n in chosen) + r")(?![^\W_])", re.IGNORECASE)


def _spans(text: str, names: re.Pattern[str] | None) -> list[tuple[int, int, str]]:
    """Non-overlapping cue spans (start, end, kind), leftmost first, longer first at a tie."""
    found: list[tuple[int, int, str]] = []
    kinds = ([("NAME", names)] if names is not None else []) + list(PATTERNS)
    for kind, pattern in kinds:
        found += [(m.start(), m.end(), kind) for m in pattern.finditer(text)]
    found.sort(key=lambda s: (s[0], -(s[1] - s[0])))
    out: list[tuple[int, int, str]] = []
    end = -1
    for start, stop, kind in found:
        if start >= end:
            out.append((start, stop, kind))
            end = stop
    return out


def leakage_cues(text: str, names: Sequence[str] = ()) -> list[Cue]:
    """Every identity cue in ``text`` (names from ``names``, and the patterns), in order."""
    out = []
    for start, stop, kind in _spans(text, _name_pattern(names)):
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        out.append(Cue(kind, text[start:stop], line, column))
    return out


def in_identifier(text: str, cue: Cue) -> bool:
    """Whether ``cue`` (found in ``text``) is outside every string and comment: in a name
    the compiler reads, which blinding leaves as it is."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: cue.line - 1]) + cue.column - 1
    for m in _LEXEME.finditer(text):
        if m.start() <= offset < m.end():
            return m.lastgroup == "word"
        if m.start() > offset:
            break
    return True


def words_of(text: str) -> set[str]:
    """The words of a route file outside its strings and comments."""
    return {m.group() for m in _LEXEME.finditer(text) if m.lastgroup == "word"}


def named_words(source: str) -> Iterator[tuple[re.Match[str], str]]:
    """The words of a route file that name a route, a state, a transition or an evidence
    item, declared or referenced (a transition's source and target, `vision`, `supports`
    and `contradicts`), each with its kind: what `Blinder.rename_identifiers` renames."""
    expect: list[str] = []  # the kinds of the next words
    list_kind: str | None = None  # `supports a, b`: a comma continues the list
    previous_end = 0
    for m in _LEXEME.finditer(source):
        if m.lastgroup == "comment":
            continue
        if m.lastgroup == "string":
            expect, list_kind = [], None
            previous_end = m.end()
            continue
        word = m.group()
        kind: str | None = None
        if expect:
            kind = expect.pop(0)
        elif list_kind is not None and source[previous_end:m.start()].strip() == ",":
            kind = list_kind
        else:
            list_kind = None
            expect = list(_AFTER_KEYWORD.get(word, ()))
            if word in ("supports", "contradicts"):
                expect, list_kind = ["transition"], "transition"
        previous_end = m.end()
        if kind is not None:
            yield m, kind


def renamable(text: str, cue: Cue) -> bool:
    """Whether ``cue`` (found in ``text``) is inside a name `pcsc blind` renames."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: cue.line - 1]) + cue.column - 1
    return any(m.start() <= offset < m.end() for m, _ in named_words(text))


@attrs.define
class Blinder:
    """Masks cues consistently across every text it blinds: one mask per distinct cue
    (compared without case), numbered per kind in order of first appearance."""

    names: Sequence[str] = ()
    masks: dict[str, str] = attrs.field(factory=dict)  # mask -> the cue as first seen
    _by_cue: dict[str, str] = attrs.field(factory=dict)  # casefolded cue -> mask
    _counts: dict[str, int] = attrs.field(factory=dict)
    #: words no new name may take: every word of every input (route names are global)
    reserved: set[str] = attrs.field(factory=set)
    _routes: int = 0

    def mask_text(self, text: str) -> tuple[str, int]:
        """``text`` with every cue masked, and how many cues were masked."""
        pattern = _name_pattern(self.names)
        pieces: list[str] = []
        last = 0
        spans = _spans(text, pattern)
        for start, stop, kind in spans:
            pieces += [text[last:start], self._mask(kind, text[start:stop])]
            last = stop
        pieces.append(text[last:])
        return "".join(pieces), len(spans)

    def _mask(self, kind: str, cue: str) -> str:
        key = cue.casefold()
        if key not in self._by_cue:
            n = self._counts.get(kind, 0) + 1
            self._counts[kind] = n
            mask = f"[{kind}-{n}]"
            self._by_cue[key] = mask
            self.masks[mask] = cue
        return self._by_cue[key]

    def blind_route_text(self, source: str) -> tuple[str, int]:
        """A route file's text with the cues of its free-text strings and comments masked;
        everything the compiler reads is kept byte for byte. Returns the text and the
        number of cues masked."""
        out: list[str] = []
        last = 0
        words: list[str] = []
        masked = 0
        for m in _LEXEME.finditer(source):
            kind = m.lastgroup
            if kind == "word":
                words = [*words[-1:], m.group()]
                continue
            out.append(source[last:m.start()])
            text = m.group()
            free = kind == "comment" or (
                words and (words[-1] in MASKED_KEYWORDS or (len(words) == 2 and words[0] == "route"))
            )
            if free:
                head, body, tail = (text[:1], text[1:], "") if kind == "comment" else (text[:1], text[1:-1], text[-1:])
                body, n = self.mask_text(body)
                masked += n
                text = head + body + tail
            out.append(text)
            last = m.end()
            if kind == "string":
                words = []
        out.append(source[last:])
        return "".join(out), masked

    def rename_identifiers(self, source: str) -> tuple[str, dict[str, str]]:
        """A route file's text with every route, state, transition and evidence name that
        carries a cue renamed, at its declaration and at every reference (a transition's
        source and target, `vision`, `supports` and `contradicts`): ``route_1``,
        ``state_2``, ``transition_3``, ``evidence_1``, numbered per kind in order of first
        appearance (routes across the whole run, the others within the file), skipping
        any number whose name is already a word of an input. Returns the text and the
        renamings (new name -> old name; routes, states, transitions, evidence)."""
        pattern = _name_pattern(self.names)
        words = words_of(source) | self.reserved
        renamed: dict[str, dict[str, str]] = {kind: {} for kind in _ROLES_NUMBERED}
        counts = {kind: 0 for kind in _ROLES_NUMBERED}
        counts["route"] = self._routes
        out: list[str] = []
        last = 0
        for m, role in named_words(source):
            word = m.group()
            if not _spans(word, pattern):
                continue
            table = renamed[role]
            new = next((n for n, old in table.items() if old == word), None)
            if new is None:
                while True:
                    counts[role] += 1
                    new = f"{role}_{counts[role]}"
                    if new not in words:
                        break
                table[new] = word
                words.add(new)
            out += [source[last:m.start()], new]
            last = m.end()
        out.append(source[last:])
        self._routes = counts["route"]
        self.reserved |= set(renamed["route"])
        return "".join(out), {new: old for kind in _ROLES_NUMBERED for new, old in renamed[kind].items()}

    def blind_file_name(self, name: str) -> tuple[str, int]:
        """A file name with its cues masked like the text's, without the brackets
        (``smsly.route`` becomes ``NAME-1.route``): a copy's name must not name it either.
        Returns the name and the number of cues masked."""
        stem, dot, suffix = name.rpartition(".")
        if not dot:
            stem, suffix = name, ""
        masked, n = self.mask_text(stem)
        return masked.replace("[", "").replace("]", "") + dot + suffix, n

    def counts(self) -> dict[str, int]:
        """How many distinct cues of each kind were masked."""
        return dict(sorted(self._counts.items()))
