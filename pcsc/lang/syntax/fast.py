"""A lean LALR driver over the typed Lark parser's own tables, lexers and callbacks.

Lark's `parse` spends most of its time in its general machinery: a lexer object and a
generator per token, a line counter object, a `feed_token` call per token that looks
everything up again. `FastParser` runs the same automaton in one loop: the same
grammar (`grammar/pcsc.lark`), the same LALR table, each parser state's own compiled
terminal regex from Lark's contextual lexer (so a word is read as `UNIT`, `DATE` or
a keyword exactly where Lark reads it so), Lark's keyword retyping turned into a
dict, and the builder's (`ToSyntax`) methods behind Lark's child filters, done as
Lark's callbacks do them but with less in between: a unit reduction of a `?rule`
(`expr -> or_expr -> ... -> atom`) only changes the state on top of the stack, and an
inlined `_rule` hands its children to its parent as a list, not as a Lark `Tree`.

It only parses: at the first character no terminal matches, or the first token the
table has no action for, it returns `FAILED`, and the caller hands the text to Lark,
which reports the error (so diagnostics are Lark's, one way only). Anything in the
parser it does not reproduce (a lexer with several regexes, user lexer callbacks, a
keyword scanner with flags) makes `build` return None, and Lark parses as before.
`tests/test_parse_fast.py` checks that both ways give the same nodes and the same
diagnostics on every shipped route, the spec inputs and the fuzzer's inputs.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Lark, Token
from lark.lexer import BasicLexer, ContextualLexer, PatternStr, UnlessCallback
from lark.parsers.lalr_analysis import Shift

FAILED: Any = object()  # a syntax error somewhere: let Lark parse (and report) it

# per parser state: its terminal regex (an ignored run first), keyword retyping
# (NAME -> word -> keyword), the types that may hold a newline
_Lexer = tuple[re.Pattern[str], dict[str, dict[str, str]], frozenset[str]]


def _state_lexer(lexer: BasicLexer, ignored: str) -> _Lexer | None:
    """The state's regex: any run of what the grammar ignores (atomic: never given back
    to a terminal), then Lark's alternation of the state's other terminals, in Lark's
    order (so the same terminal wins where two match)."""
    scanner = lexer.scanner  # builds the regex and `lexer.callback`
    if len(scanner._mres) != 1 or lexer.g_regex_flags:
        return None
    retype: dict[str, dict[str, str]] = {}
    for name, callback in lexer.callback.items():
        if not isinstance(callback, UnlessCallback):
            return None
        words: dict[str, str] = {}
        for t in callback.scanner.terminals:
            if not isinstance(t.pattern, PatternStr) or t.pattern.flags or callback.scanner.g_regex_flags:
                return None
            words.setdefault(t.pattern.value, t.name)  # the first alternative that matches wins
        retype[name] = words
    alternatives = "|".join(
        f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in scanner.terminals if t.name not in lexer.ignore_types
    )
    return re.compile(f"(?>{ignored})(?:{alternatives})"), retype, lexer.newline_types


class FastParser:
    """The typed parser's automaton, driven in one loop (see the module)."""

    def __init__(
        self,
        states: dict[int, dict[str, int]],
        rules: list[tuple[int, str, Any]],
        lexers: dict[int, _Lexer],
        starts: dict[str, tuple[int, int]],
        skip: re.Pattern[str],
    ) -> None:
        self.states = states  # action >= 0: shift to that state; < 0: reduce rules[-1 - action]
        self.rules = rules  # (size, origin, callback or None for a unit `?rule`)
        self.lexers = lexers
        self.starts = starts  # start symbol -> (start state, end state)
        self.skip = skip  # any run of what the grammar ignores
        if sorted(states) != list(range(len(states))) or lexers.keys() != states.keys():
            raise ValueError("the LALR states are not numbered 0..n-1")
        self._states = [states[i] for i in range(len(states))]  # a list is indexed faster than a dict
        self._lexers = [lexers[i] for i in range(len(states))]

    @classmethod
    def build(cls, lark: Lark, builder: object) -> FastParser | None:
        """The driver for ``lark`` (a typed parser whose transformer is ``builder``),
        or None when it has anything this driver does not reproduce."""
        frontend: Any = lark.parser
        contextual = getattr(frontend.lexer, "lexer", frontend.lexer)
        if not isinstance(contextual, ContextualLexer) or lark.lexer_conf.callbacks:
            return None
        lalr = frontend.parser.parser
        callbacks = lalr.callbacks
        if any(isinstance(key, str) for key in callbacks):  # token callbacks: not reproduced
            return None
        if not lark.options.keep_all_tokens or not lark.options.maybe_placeholders or lark.options.ambiguity != "auto":
            return None
        table = lalr.parse_table
        index: dict[Any, int] = {}
        rules: list[tuple[int, str, Any]] = []
        states: dict[int, dict[str, int]] = {}
        for state, actions in table.states.items():
            coded: dict[str, int] = {}
            for symbol, (action, arg) in actions.items():
                if action is Shift:
                    coded[symbol] = arg
                    continue
                if arg not in index:
                    made = _callback(arg, builder)
                    if made is _UNSUPPORTED:
                        return None
                    index[arg] = len(rules)
                    rules.append((len(arg.expansion), arg.origin.name, made))
                coded[symbol] = -1 - index[arg]
            states[state] = coded
        skip = _skipper(lark)
        if skip is None:
            return None
        built: dict[int, _Lexer] = {}
        by_lexer: dict[int, _Lexer] = {}
        for state, basic in contextual.lexers.items():
            if id(basic) not in by_lexer:
                if not isinstance(basic, BasicLexer):
                    return None
                made = _state_lexer(basic, skip.pattern)
                if made is None:
                    return None
                by_lexer[id(basic)] = made
            built[state] = by_lexer[id(basic)]
        starts = {name: (table.start_states[name], table.end_states[name]) for name in table.start_states}
        try:
            return cls(states, rules, built, starts, skip)
        except ValueError:
            return None

    def parse(self, text: str, start: str) -> Any:
        """The value Lark's parse would return, or `FAILED` on a syntax error."""
        states, rules, lexers = self._states, self.rules, self._lexers
        start_state, end_state = self.starts[start]
        state_stack = [start_state]
        value_stack: list[Any] = []
        push_state, push_value = state_stack.append, value_stack.append
        new = str.__new__
        skip = self.skip.match
        pos, line, line_start, end = 0, 1, 0, len(text)
        while True:
            # the next token, read by the lexer of the state on top of the stack
            pattern, retype, newline_types = lexers[state_stack[-1]]
            m = pattern.match(text, pos)
            if m is not None:
                kind = m.lastgroup
                assert kind is not None  # one of the terminals' groups matched
                start_pos, token_end = m.span(kind)
                if start_pos != pos:  # an ignored run
                    breaks = text.count("\n", pos, start_pos)
                    if breaks:
                        line += breaks
                        line_start = text.rindex("\n", pos, start_pos) + 1
                value = text[start_pos:token_end]
                start_line, column = line, start_pos - line_start + 1
                pos = token_end
                if kind in newline_types:
                    breaks = value.count("\n")
                    if breaks:
                        line += breaks
                        line_start = start_pos + value.rindex("\n") + 1
                if kind in retype:
                    kind = retype[kind].get(value, kind)
                token = new(Token, value)
                token.type = kind
                token.start_pos = start_pos
                token.value = value
                token.line = start_line
                token.column = column
                token.end_line = line
                token.end_column = pos - line_start + 1
                token.end_pos = pos
            elif skip(text, pos).end() == end:  # type: ignore[union-attr]  # a `*` always matches
                kind = "$END"
                token = None
            else:
                return FAILED
            # shift it, after the reductions it calls for
            while True:
                action = states[state_stack[-1]].get(kind)
                if action is None:
                    return FAILED
                if action >= 0:
                    if token is None:
                        return FAILED  # Lark asserts this never happens
                    push_state(action)
                    push_value(token)
                    break
                size, origin, callback = rules[-1 - action]
                if size == 1:  # the value and state on top are replaced in place
                    if callback is _WRAP:  # an inlined `_rule` of one symbol: its children, a list
                        value_stack[-1] = [value_stack[-1]]
                    elif callback is not None:  # else a unit `?rule`: the value stays
                        value_stack[-1] = callback([value_stack[-1]])
                    state_stack[-1] = states[state_stack[-2]][origin]
                else:
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    push_value(callback(children))
                    push_state(states[state_stack[-1]][origin])
                if token is None and state_stack[-1] == end_state:
                    return value_stack[-1]


# where an ignored run may start: no other terminal may match there, or skipping it first would change the tokens
_IGNORED_STARTS = (" x", "\tx", "\nx", "\rx", "\fx", "#x", " 1", "# 1")


def _skipper(lark: Lark) -> re.Pattern[str] | None:
    """One regex for any run of the ignored terminals, when they are whitespace and
    `#` comments that no other terminal can start with; else None (and no driver)."""
    conf = lark.lexer_conf
    ignored = [t for t in conf.terminals if t.name in conf.ignore]
    for t in ignored:
        if t.pattern.flags:
            return None
        if not any(re.match(t.pattern.to_regexp(), sample) for sample in _IGNORED_STARTS):
            return None  # ignores something else: not reproduced
    for t in conf.terminals:
        if t.name not in conf.ignore and any(re.match(t.pattern.to_regexp(), s) for s in _IGNORED_STARTS):
            return None
    if not ignored:
        return None
    return re.compile("(?:" + "|".join(t.pattern.to_regexp() for t in ignored) + ")*")


_UNSUPPORTED: Any = object()


def _callback(rule: Any, builder: object) -> Any:
    """What Lark's callback for ``rule`` does (`lark.parse_tree_builder`, with every
    token kept and placeholders on), done directly: None for a unit `?rule` (the
    value stays); a list of the children for an inlined `_rule`, which its parent
    splices in (Lark builds a `Tree` for the parent to take apart); else the builder's
    method behind Lark's child filter (the `[x]` placeholders, the inlined children)
    where that filter does anything. `_UNSUPPORTED` for a rule Lark would turn into a
    `Tree` or a method with a visit wrapper."""
    options = rule.options
    expansion = rule.expansion
    name = rule.alias or options.template_source or rule.origin.name
    expand1 = bool(options.expand1 and not rule.alias)
    method = getattr(builder, name, None)
    inline = rule.origin.name.startswith("_")
    if method is not None and (inline or getattr(method, "visit_wrapper", None) is not None):
        return _UNSUPPORTED
    if method is None and not inline and not (expand1 and len(expansion) == 1):
        return _UNSUPPORTED  # Lark would build a Tree here
    # Lark's `maybe_create_child_filter`
    empty = list(options.empty_indices or ())
    if empty:
        ones = "".join(str(int(b)) for b in empty).split("0")
        nones = [len(run) for run in ones]
    else:
        nones = [0] * (len(expansion) + 1)
    include: list[tuple[int, bool, int]] = []
    pending = 0
    for i, sym in enumerate(expansion):
        pending += nones[i]
        include.append((i, not sym.is_term and sym.name.startswith("_"), pending))
        pending = 0
    append_none = pending + nones[len(expansion)]
    plain = not append_none and not any(expand or add for _, expand, add in include)
    if plain and expand1 and len(expansion) == 1:
        return None  # Lark returns the only child
    build: Any = method if method is not None else _as_list
    if plain and not expand1:
        return _WRAP if build is _as_list and len(expansion) == 1 else build
    if method is None and not expand1 and not append_none and all(e and not a for _, e, a in include):
        return _join if len(expansion) == 2 else _filtered(tuple(include), 0, False, build)
    return _filtered(tuple(include), append_none, expand1, build)


_WRAP: Any = object()  # see `FastParser.parse`


def _join(children: list[Any]) -> list[Any]:
    """`_rule: _a _b`, both inlined: the left one's list, grown in place (as Lark's filter)."""
    joined: list[Any] = children[0]
    joined += children[1]
    return joined


def _as_list(children: list[Any]) -> list[Any]:
    return children


def _filtered(include: tuple[tuple[int, bool, int], ...], append_none: int, expand1: bool, build: Any) -> Any:
    """Lark's `ChildFilterLALR` for one rule (then `ExpandSingleChild` where ``expand1``),
    written out as straight-line code: the placeholders, the children kept, the lists of
    inlined children spliced in."""
    lines = ["def callback(c):", "    out = []"]
    for i, expand, add_none in include:
        if add_none:
            lines.append(f"    out += [None] * {add_none}")
        if expand:  # the first into an empty list is taken as it is (Lark grows a left-recursive list in place)
            lines.append(f"    if out:\n        out += c[{i}]\n    else:\n        out = c[{i}]")
        else:
            lines.append(f"    out.append(c[{i}])")
    if append_none:
        lines.append(f"    out += [None] * {append_none}")
    if expand1:
        lines.append("    if len(out) == 1:\n        return out[0]")
    lines.append("    return build(out)")
    namespace: dict[str, Any] = {"build": build}
    exec("\n".join(lines), namespace)  # noqa: S102  # our own code, from the grammar's rules
    return namespace["callback"]


__all__ = ["FAILED", "FastParser"]
