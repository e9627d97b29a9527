"""The one reader of a user's files (routes, libraries, policies, configuration,
outcomes, score tables, packets, certificates, keys, test files), and the one error it
raises.

A file is read only if it is a regular file (a folder, a device, a FIFO or a socket is
refused before anything is read: a device or a FIFO may never end) of at most
`MAX_FILE_BYTES` (refused before it is read, and at the limit when it grows while it
is read). Text is UTF-8, a byte order mark dropped, with CRLF and a lone CR read as LF
(the offsets and columns of every character stay the same: a CR ends its line).

Whatever stops a read is an `Unreadable`, an OSError whose ``reason`` says why in words
a message can quote (`No such file or directory`, `it is a folder, not a regular file:
it is not read`, `the file is 12,000,000 bytes; the limit is 10,000,000 bytes`, `not
UTF-8 text: byte 0xFF cannot be decoded`, with its line and column). A diagnostic
says it with `pcsc.diagnostics.files.unreadable`; a command's own error (a policy's,
an outcomes file's) quotes ``reason``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, TextIO

#: How PCSC decodes the files it reads: UTF-8, a leading byte order mark (some editors
#: write one) dropped, so line 1, column 1 is the first character after it.
TEXT_ENCODING = "utf-8-sig"
BOM = "\ufeff"
MAX_FILE_BYTES = 10_000_000  # a .route, .obl, policy, outcomes or any other file PCSC reads

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


class Unreadable(OSError):
    """A file that is not read, and why: ``reason`` (also ``strerror``), and for text
    that is not UTF-8 the ``line`` and ``column`` of the first byte that is not."""

    def __init__(self, path: str, reason: str, code: int = errno.EIO,
                 line: int | None = None, column: int | None = None) -> None:
        super().__init__(code, reason, path)
        self.reason = reason
        self.line = line
        self.column = column


class NotAFile(Unreadable):
    """A path that names a folder, a device, a FIFO or a socket."""


class FileTooLarge(Unreadable):
    """A file over `MAX_FILE_BYTES` (``size`` None: a stream that went on past it)."""

    def __init__(self, path: str, size: int | None) -> None:
        limit = MAX_FILE_BYTES
        said = f"the file is {size:,} bytes" if size is not None else f"more than {limit:,} bytes"
        super().__init__(path, f"{said}; the limit is {limit:,} bytes", errno.EFBIG)
        self.size = size


class NotText(Unreadable):
    """Bytes that are not UTF-8 text: the first ``byte`` that cannot be decoded, at
    ``line`` and ``column`` (counted after a byte order mark)."""

    def __init__(self, path: str, byte: int, line: int, column: int) -> None:
        super().__init__(path, f"not UTF-8 text: byte 0x{byte:02X} cannot be decoded", errno.EILSEQ, line, column)
        self.byte = byte
        self.line: int = line
        self.column: int = column


def too_large(size: int) -> str | None:
    """The reason a file of ``size`` bytes is not read, or None within the limit."""
    return None if size <= MAX_FILE_BYTES else FileTooLarge("", size).reason


def read_bytes(path: Path | str) -> bytes:
    """The bytes of the regular file at ``path``, at most `MAX_FILE_BYTES` of them;
    raises `Unreadable` (open's own errors too, their ``reason`` the system's words).
    A FIFO is opened without waiting for a writer."""
    limit = MAX_FILE_BYTES
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise Unreadable(str(path), exc.strerror or str(exc), exc.errno or errno.EIO) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise NotAFile(str(path), f"it is {kind}, not a regular file: it is not read", errno.EINVAL)
        if info.st_size > limit:
            raise FileTooLarge(str(path), info.st_size)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            except OSError as exc:  # EIO, EISDIR on some systems
                raise Unreadable(str(path), exc.strerror or str(exc), exc.errno or errno.EIO) from None
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise FileTooLarge(str(path), size)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_stream(stream: TextIO, shown: str) -> str:
    """Standard input's text as `read_text` reads a file's: at most `MAX_FILE_BYTES`
    bytes, else `FileTooLarge`. A text stream without a binary buffer (tests, the API)
    gives its characters as UTF-8, invalid UTF-8 kept invalid."""
    limit = MAX_FILE_BYTES
    binary: BinaryIO | None = getattr(stream, "buffer", None)
    if binary is not None:
        data = binary.read(limit + 1)
    else:
        data = stream.read(limit + 1).encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise FileTooLarge(shown, None)
    return normalize_newlines(decode(data, shown))


def normalize_newlines(text: str) -> str:
    """CRLF and a lone CR read as LF; lines and columns are unchanged."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes, shown: str) -> str:
    """``data`` as UTF-8 text, a byte order mark dropped (line breaks as they are: the
    hash of a library's text reads only CRLF as LF); raises `NotText` (located) or
    `FileTooLarge`."""
    if len(data) > MAX_FILE_BYTES:
        raise FileTooLarge(shown, len(data))
    try:
        return data.decode(TEXT_ENCODING)
    except UnicodeDecodeError as exc:
        body = exc.object  # after the byte order mark, if any: positions count from there
        line = body.count(b"\n", 0, exc.start) + 1
        column = exc.start - body.rfind(b"\n", 0, exc.start)
        raise NotText(shown, body[exc.start], line, column) from None


def read_text(path: Path | str) -> str:
    """The text of a user's file: `read_bytes`, `decode`, line breaks read as LF;
    raises `Unreadable`."""
    return normalize_newlines(decode(read_bytes(path), str(path)))
