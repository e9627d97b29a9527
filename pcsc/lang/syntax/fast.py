"""A lean LALR driver over the typed Lark parser's own tables, lexers and callbacks.

Lark's `parse` spends most of its time in its general machinery: a lexer object and a
generator per token, a line counter object, a `feed_token` call per token that looks
everything up again. `FastParser` runs the same automaton in one loop: the same
grammar (`grammar/pcsc.lark`), the same LALR table, each parser state's own compiled
terminal regex from Lark's contextual lexer (so a word is read as `UNIT`, `DATE` or
a keyword exactly where Lark reads it so), Lark's keyword retyping turned into a
dict, and Lark's rule callbacks (the `ToSyntax` methods behind Lark's child filters).
Only the unit reductions of `?rule`s (`expr -> or_expr -> ... -> atom`), where
Lark's callback returns the only child, skip the call.

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

# per parser state: (its terminal regex, keyword retyping for NAME-like terminals, ignored types, types that may hold a newline)
_Lexer = tuple[re.Pattern[str], dict[str, dict[str, str]], frozenset[str], frozenset[str]]


def _state_lexer(lexer: BasicLexer) -> _Lexer | None:
    scanner = lexer.scanner  # builds the regex and `lexer.callback`
    if len(scanner._mres) != 1:
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
    return scanner._mres[0], retype, lexer.ignore_types, lexer.newline_types


class FastParser:
    """The typed parser's automaton, driven in one loop (see the module)."""

    def __init__(
        self,
        states: dict[int, dict[str, int]],
        rules: list[tuple[int, str, Any]],
        lexers: dict[int, _Lexer],
        starts: dict[str, tuple[int, int]],
    ) -> None:
        self.states = states  # action >= 0: shift to that state; < 0: reduce rules[-1 - action]
        self.rules = rules  # (size, origin, callback or None for a unit `?rule`)
        self.lexers = lexers
        self.starts = starts  # start symbol -> (start state, end state)

    @classmethod
    def build(cls, lark: Lark) -> FastParser | None:
        frontend: Any = lark.parser
        contextual = getattr(frontend.lexer, "lexer", frontend.lexer)
        if not isinstance(contextual, ContextualLexer) or lark.lexer_conf.callbacks:
            return None
        lalr = frontend.parser.parser
        callbacks = lalr.callbacks
        if any(isinstance(key, str) for key in callbacks):  # token callbacks: not reproduced
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
                    index[arg] = len(rules)
                    rules.append((len(arg.expansion), arg.origin.name, _callback(arg, callbacks[arg])))
                coded[symbol] = -1 - index[arg]
            states[state] = coded
        built: dict[int, _Lexer] = {}
        by_lexer: dict[int, _Lexer] = {}
        for state, basic in contextual.lexers.items():
            if id(basic) not in by_lexer:
                if not isinstance(basic, BasicLexer):
                    return None
                made = _state_lexer(basic)
                if made is None:
                    return None
                by_lexer[id(basic)] = made
            built[state] = by_lexer[id(basic)]
        starts = {name: (table.start_states[name], table.end_states[name]) for name in table.start_states}
        return cls(states, rules, built, starts)

    def parse(self, text: str, start: str) -> Any:
        """The value Lark's parse would return, or `FAILED` on a syntax error."""
        states, rules, lexers = self.states, self.rules, self.lexers
        start_state, end_state = self.starts[start]
        state_stack = [start_state]
        value_stack: list[Any] = []
        push_state, push_value = state_stack.append, value_stack.append
        new = str.__new__
        pos, line, line_start, end = 0, 1, 0, len(text)
        while True:
            # the next token, read by the lexer of the state on top of the stack
            pattern, retype, ignore, newline_types = lexers[state_stack[-1]]
            match = pattern.match
            while pos < end:
                m = match(text, pos)
                if m is None:
                    return FAILED
                kind = m.lastgroup
                value = m.group()
                start_pos, start_line, column = pos, line, pos - line_start + 1
                pos = m.end()
                if kind in newline_types:
                    breaks = value.count("\n")
                    if breaks:
                        line += breaks
                        line_start = start_pos + value.rindex("\n") + 1
                if kind in ignore:
                    continue
                assert kind is not None
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
                break
            else:
                kind = "$END"
                token = None
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
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                push_value(callback(children) if callback is not None else children[0])
                push_state(states[state_stack[-1]][origin])
                if token is None and state_stack[-1] == end_state:
                    return value_stack[-1]


def _callback(rule: Any, callback: Any) -> Any:
    """Lark's callback for ``rule``, or None where it would only return the one child:
    a `?rule` of one symbol, not aliased, neither inlined nor with placeholders."""
    options = rule.options
    expansion = rule.expansion
    if (
        options.expand1
        and not rule.alias
        and len(expansion) == 1
        and (expansion[0].is_term or not expansion[0].name.startswith("_"))
        and not any(options.empty_indices or ())
    ):
        return None
    return callback


__all__ = ["FAILED", "FastParser"]
