"""Signed checkpoints of a ledger's head: Ed25519 signatures through `cryptography`, an
optional extra (the extra ``pcsc[sign]``), imported only when a key is used.

A checkpoint is a JSON document::

    {"format": "pcsc-ledger-checkpoint", "version": 1,
     "head": {"token": "E.O:HASH", "entries": {"seq", "entry_sha256"},
              "outcomes": {"seq", "entry_sha256"}, "sha256": HASH},
     "ledger": {"file", "application_id", "schema", "first_forecast_sha256"},
     "created_at": "2026-05-09T07:35:25Z", "pcsc": "<version>",
     "signature": {"algorithm": "ed25519", "public_key_sha256", "value": "<base64>"}}

The signature covers the canonical JSON of every other key. Reading one checks the
signature with the given public key first, then that its head is self-consistent; the
caller then checks the head against the ledger (`Ledger.verify`).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from pcsc._version import __version__
from pcsc.base.canonical import dumps, sha256_hex
from pcsc.base.extras import require
from pcsc.base.files import NotText, Unreadable, read_bytes, read_text
from pcsc.diagnostics.messages import (
    E717_CANNOT_READ_CHECKPOINT,
    E717_CANNOT_READ_KEY,
    E717_CANNOT_WRITE_CHECKPOINT,
    E717_CANNOT_WRITE_KEYS,
    E717_HEAD_INCOMPLETE,
    E717_HEAD_SEQS,
    E717_HEAD_TOKEN,
    E717_KEY_EXISTS,
    E717_NO_FORMAT,
    E717_NO_SIGNATURE,
    E717_NOT_A_CHECKPOINT,
    E717_NOT_ED25519,
    E717_NOT_PEM,
    E717_SIGNATURE_FAILS,
    E717_VERSION,
    phrase,
)
from pcsc.forecast.ledger import Head, HeadToken, utc_stamp

FORMAT = "pcsc-ledger-checkpoint"
VERSION = 1


class CheckpointError(Exception):
    """A key or a checkpoint cannot be used: the message says why and names the file."""


@attrs.frozen
class Checkpoint:
    """A checkpoint whose signature verified."""

    path: Path
    head: Head
    ledger: Mapping[str, Any]
    created_at: str
    public_key_sha256: str

    @property
    def token(self) -> HeadToken:
        return self.head.token


def _crypto() -> Any:
    """The Ed25519 and serialization modules of `cryptography`, or `ExtraMissing`
    naming the extra."""
    require("sign", "signed checkpoints")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return ed25519, serialization


def _public_sha256(public: Any, serialization: Any) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256_hex(raw)


def generate_keys(name: Path | str) -> tuple[Path, Path]:
    """Write a new Ed25519 key pair: ``NAME.pem`` (private, PKCS#8 PEM, mode 0600, not
    encrypted: guard the file) and ``NAME.pub.pem`` (public). Refuses to replace a file."""
    ed25519, serialization = _crypto()
    name = Path(name)
    private_path, public_path = Path(f"{name}.pem"), Path(f"{name}.pub.pem")
    for each in (private_path, public_path):
        if each.exists():
            raise CheckpointError(phrase(E717_KEY_EXISTS, file=each))
    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(private)
        os.chmod(private_path, 0o600)  # whatever the umask
        with open(public_path, "xb") as out:
            out.write(public)
    except OSError as exc:
        for each in (private_path, public_path):
            if each.exists() and each.stat().st_size in (0, len(private), len(public)):
                each.unlink(missing_ok=True)
        raise CheckpointError(phrase(E717_CANNOT_WRITE_KEYS, private=private_path, public=public_path,
                                     reason=exc.strerror or exc)) from None
    return private_path, public_path


def _read_key(path: Path, private: bool) -> Any:
    ed25519, serialization = _crypto()
    what = "private" if private else "public"
    try:
        data = read_bytes(path)
    except Unreadable as exc:
        raise CheckpointError(phrase(E717_CANNOT_READ_KEY, path=path, what=what, reason=exc.reason)) from None
    try:
        if private:
            key = serialization.load_pem_private_key(data, password=None)
            wanted = ed25519.Ed25519PrivateKey
        else:
            key = serialization.load_pem_public_key(data)
            wanted = ed25519.Ed25519PublicKey
    except (ValueError, TypeError) as exc:
        raise CheckpointError(phrase(E717_NOT_PEM, path=path, what=what, reason=exc)) from None
    if not isinstance(key, wanted):
        raise CheckpointError(phrase(E717_NOT_ED25519, path=path, what=what))
    return key


def make_checkpoint(
    head: Head, ledger: Mapping[str, Any], key_path: Path | str, created_at: dt.datetime | None = None
) -> dict[str, Any]:
    """The signed checkpoint document of ``head`` (verify the ledger first)."""
    _, serialization = _crypto()
    key = _read_key(Path(key_path), private=True)
    body: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "head": head.as_json(),
        "ledger": dict(ledger),
        "created_at": utc_stamp(created_at),
        "pcsc": __version__,
    }
    signature = key.sign(dumps(body).encode("utf-8"))
    body["signature"] = {
        "algorithm": "ed25519",
        "public_key_sha256": _public_sha256(key.public_key(), serialization),
        "value": base64.b64encode(signature).decode("ascii"),
    }
    return body


def read_checkpoint(path: Path | str, public_key_path: Path | str) -> Checkpoint:
    """Read a checkpoint and verify its signature with the public key; raises
    `CheckpointError` for a file that is not a checkpoint, a wrong key or a change."""
    _, serialization = _crypto()
    path = Path(path)
    public = _read_key(Path(public_key_path), private=False)
    try:
        doc = json.loads(read_text(path))
    except NotText as exc:
        raise CheckpointError(phrase(E717_NOT_A_CHECKPOINT, path=path, reason=exc.reason)) from None
    except Unreadable as exc:
        raise CheckpointError(phrase(E717_CANNOT_READ_CHECKPOINT, path=path, reason=exc.reason)) from None
    except json.JSONDecodeError as exc:
        raise CheckpointError(phrase(E717_NOT_A_CHECKPOINT, path=path, reason=f"not JSON ({exc})")) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CheckpointError(phrase(E717_NO_FORMAT, path=path, format=FORMAT))
    if type(doc.get("version")) is not int or doc["version"] != VERSION:  # `true == 1` and `1.0 == 1`
        raise CheckpointError(phrase(E717_VERSION, path=path, version=doc.get("version"), reads=VERSION))
    signature: Any = doc.pop("signature", None)
    try:
        value = base64.b64decode(str(signature["value"]), validate=True)
    except (TypeError, KeyError, ValueError):
        raise CheckpointError(phrase(E717_NO_SIGNATURE, path=path)) from None
    try:
        body = dumps(doc).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise CheckpointError(phrase(E717_NOT_A_CHECKPOINT, path=path, reason=exc)) from None
    from cryptography.exceptions import InvalidSignature

    try:
        public.verify(value, body)
    except InvalidSignature:
        raise CheckpointError(phrase(E717_SIGNATURE_FAILS, path=path, key=public_key_path)) from None
    head = _head(doc.get("head"), path)
    return Checkpoint(path, head, dict(doc.get("ledger") or {}), str(doc.get("created_at")),
                      _public_sha256(public, serialization))


def _head(value: Any, path: Path) -> Head:
    """The signed head, checked for consistency (its token is its own hash)."""
    try:
        seqs = value["entries"]["seq"], value["outcomes"]["seq"]
        head = Head(int(seqs[0]), str(value["entries"]["entry_sha256"]),
                    int(seqs[1]), str(value["outcomes"]["entry_sha256"]))
        token = str(value["token"])
    except (TypeError, KeyError, ValueError):
        raise CheckpointError(phrase(E717_HEAD_INCOMPLETE, path=path)) from None
    if not all(type(seq) is int and seq >= 0 for seq in seqs):  # `int()` would take "٤", 4.9 and true
        raise CheckpointError(phrase(E717_HEAD_SEQS, path=path, entries=seqs[0], outcomes=seqs[1]))
    if str(head.token) != token:
        raise CheckpointError(phrase(E717_HEAD_TOKEN, path=path, token=token))
    return head


def write_checkpoint(doc: Mapping[str, Any], target: Path | str) -> None:
    """Write the checkpoint document as pretty canonical JSON."""
    try:
        Path(target).write_text(dumps(doc, pretty=True) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CheckpointError(phrase(E717_CANNOT_WRITE_CHECKPOINT, path=target, reason=exc.strerror or exc)) from None
