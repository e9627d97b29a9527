"""The input limits and the checks of a source text before it is parsed.

Every limit is a diagnostic, never a crash: a file over `MAX_FILE_BYTES` is not
read, an expression nested deeper than `MAX_DEPTH` is not lowered (so no recursive
pass meets it: lowering, the type checks, the interpreter, the printer and the
formatter recurse once per level, far below Python's recursion limit), a route over
`MAX_TRANSITIONS` or a file over `MAX_ROUTES` is refused, a line over `MAX_LINE`
characters is refused before it is lexed. docs/language.md lists them.

`prepare` reads line breaks as written (CRLF and a lone CR become LF: the offsets and
columns of every character stay the same) and reports what the parser would accept
but a reader should not: a NUL character (an error), other control characters (a
warning: a terminal obeys ESC and BEL, so PCSC prints them escaped) and the
bidirectional control characters of "Trojan Source" (a warning naming the code point:
they are legitimate in right-to-left excerpts, but they can make a line display
differently from what it says; outside strings and comments the parser refuses them
anyway). A CR sits at
the end of its line, so dropping it moves no column: spans are lines and columns.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from pathlib import Path

from pcsc.base.escape import CONTROLS, escape_controls
from pcsc.base.resources import TEXT_ENCODING
from pcsc.diagnostics.messages import (
    E110_NUL,
    E112_FILE_SIZE,
    E126_LINE_TOO_LONG,
    W606_BIDI_CONTROL,
    W620_CONTROL,
    phrase,
)
from pcsc.diagnostics.model import Diagnostics, Span

MAX_DEPTH = 100  # nested operators in one expression (parentheses alone do not count)
MAX_FILE_BYTES = 10_000_000  # a .route, .obl, policy or outcomes file
MAX_TRANSITIONS = 1_000  # transitions in one route
MAX_ROUTES = 10_000  # routes in one file
MAX_REPORTED = 20  # NUL, bidi or control characters reported per file
MAX_LINE = 10_000  # characters in one line: a longer one is refused before it is lexed

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_SPECIAL = re.compile(f"[\x00{BIDI_CONTROLS}]|{CONTROLS.pattern}")


def normalize_newlines(text: str) -> str:
    """CRLF and a lone CR read as LF; lines and columns are unchanged."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


class NotAFile(OSError):
    """A path that names a folder, a device, a FIFO or a socket: never read (a device
    or a FIFO may never end)."""


class FileTooLarge(OSError):
    """A file over `MAX_FILE_BYTES`, refused before it is read."""

    def __init__(self, path: str, size: int) -> None:
        super().__init__(errno.EFBIG, too_large(size) or "the file is too large", path)
        self.size = size


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def read_file(path: Path | str) -> bytes:
    """The bytes of the regular file at ``path``, at most `MAX_FILE_BYTES` of them.
    What is not a regular file (`NotAFile`: a link to /dev/zero, a FIFO, a folder) or is
    larger than the limit (`FileTooLarge`) is refused before anything is read, and a
    file that grows while it is read is refused at the limit; both are OSErrors, as
    open's own errors are. The FIFO is opened without waiting for a writer."""
    limit = MAX_FILE_BYTES
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise NotAFile(errno.EINVAL, f"it is {kind}, not a regular file: it is not read", str(path))
        if info.st_size > limit:
            raise FileTooLarge(str(path), info.st_size)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise FileTooLarge(str(path), size)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path | str) -> str:
    """`read_file` as UTF-8 text (a byte order mark dropped, CRLF and CR read as LF);
    raises OSError and UnicodeDecodeError."""
    return normalize_newlines(read_file(path).decode(TEXT_ENCODING))


def too_large(size: int) -> str | None:
    """The message for a file of ``size`` bytes over the limit, or None."""
    if size <= MAX_FILE_BYTES:
        return None
    return phrase(E112_FILE_SIZE, size=size, limit=MAX_FILE_BYTES)


def check_lines(text: str, file: str, diags: Diagnostics) -> bool:
    """Report the first line longer than `MAX_LINE` characters (and how many more there
    are); False when there is one. Nothing longer reaches the lexer, whose time and
    memory, and every diagnostic that shows the line, grow with it."""
    lines = text.split("\n")
    if max(map(len, lines)) <= MAX_LINE:
        return True
    over = [i for i, line in enumerate(lines) if len(line) > MAX_LINE]
    first = over[0]
    more = f" ({len(over) - 1:,} more line{'s are' if len(over) > 2 else ' is'} too)" if len(over) > 1 else ""
    diags.diag(
        E126_LINE_TOO_LONG,
        Span(file, first + 1, MAX_LINE + 1, first + 1, len(lines[first]) + 1),
        line=first + 1,
        length=len(lines[first]),
        limit=MAX_LINE,
        more=more,
    )
    return False


def check_characters(text: str, file: str, diags: Diagnostics) -> bool:
    """Report NUL (error), control (warning) and bidi control (warning) characters;
    False on a NUL."""
    ok = True
    for reported, m in enumerate(_SPECIAL.finditer(text)):
        ch = m.group()
        ok = ok and ch != "\x00"
        if reported >= MAX_REPORTED:
            if not ok:
                break
            continue
        pos = m.start()
        line = text.count("\n", 0, pos) + 1
        column = pos - text.rfind("\n", 0, pos)
        span = Span(file, line, column, line, column + 1)
        if ch == "\x00":
            diags.diag(E110_NUL, span)
        elif ch not in BIDI_CONTROLS:
            diags.diag(W620_CONTROL, span, point=ord(ch), escaped=escape_controls(ch))
        else:
            name = unicodedata.name(ch, "bidirectional control")
            diags.diag(W606_BIDI_CONTROL, span, point=ord(ch), name=name)
    return ok
