"""Control characters from inputs, made visible: the one escaping function of every
text PCSC prints.

A route's strings, a file name or a ledger row may hold bytes a terminal obeys (ESC
starts a sequence that can retitle the window, move the cursor or hide lines; BEL
rings) and bidirectional overrides that make a line display in another order than it
reads. Printed text never carries them raw: each is written as an escape a reader sees,
``\\x1b``, ``\\x07``, ``\\u202e``. Tab and line feed are kept (they are layout).
JSON keeps them too, as JSON escapes (``\\u001b``), which read back as the same
string: ``json.dumps`` already writes C0 so, and `escape_controls` with ``json=True``
does the same for DEL, C1 and the overrides.
"""

from __future__ import annotations

import re

#: C0 but tab and line feed, DEL, C1, and the bidirectional embeddings, overrides
#: (U+202A..U+202E) and isolates (U+2066..U+2069).
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def escape_controls(text: str, *, json: bool = False) -> str:
    """``text`` with every control character written as a visible escape (``\\x1b``);
    with ``json``, as a JSON escape (``\\u001b``), for JSON text, where such a
    character can stand only inside a string."""
    if not CONTROLS.search(text):
        return text
    return CONTROLS.sub(_json if json else _visible, text)
