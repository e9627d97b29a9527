"""Certificates that bind everything (issue 18): the checker reads only files inside
the certificate's own folder, recomputes the coverage rows from the route and the
pinned library, holds every library to the policy's pin, the mode to the policy's and
the routes to those of the hashed files; and a forgery of any single field fails."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SPEC_ROUTE
from tests.test_decisions import Run, certify, project, run, tamper, verify

__all__ = ["project", "run"]  # the fixtures this module uses from test_decisions


def _set_input_path(path: str) -> Any:
    def edit(d: dict[str, Any]) -> None:
        d["inputs"][0]["path"] = path
        d["routes"][0]["file"] = path

    return edit


# ---------------------------------------------------------------------- what the checker reads
@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.route", "sub/../../outside.route", "C:/x.route"])
def test_a_path_outside_the_certificates_folder_is_refused_naming_the_field(run: Run, project: Path,
                                                                            path: str) -> None:
    (project.parent / "outside.route").write_text(SPEC_ROUTE.read_text())
    cert = certify(run, project)
    tamper(cert, _set_input_path(path), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "inputs[0].path" in out, out
    if path == "/etc/passwd":
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        assert digest not in out  # nothing of the file is disclosed


def test_a_symbolic_link_out_of_the_folder_is_refused(run: Run, project: Path) -> None:
    cert = certify(run, project)
    (project / "link.route").symlink_to("/etc/passwd")
    tamper(cert, _set_input_path("link.route"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "inputs[0].path" in out and "leads out" in out, out


def test_a_symbolic_link_inside_the_folder_is_read(run: Run, project: Path) -> None:
    cert = certify(run, project)
    (project / "same.route").symlink_to("devtools_api.route")
    tamper(cert, _set_input_path("same.route"), resign=True)
    code, out = verify(run, cert)
    assert "PCSC-E913" not in out, out


def test_a_fifo_or_device_is_refused_before_it_is_read(run: Run, project: Path) -> None:
    cert = certify(run, project)
    os.mkfifo(project / "pipe.route")  # reading it would block forever
    tamper(cert, _set_input_path("pipe.route"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "not a regular file" in out, out
    tamper(cert, _set_input_path("."), resign=True)  # the folder itself
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out, out


def test_a_file_over_the_size_limit_is_refused(run: Run, project: Path) -> None:
    from pcsc.certcheck import MAX_FILE_BYTES
    from pcsc.syntax.limits import MAX_FILE_BYTES as COMPILER_LIMIT

    assert MAX_FILE_BYTES == COMPILER_LIMIT
    cert = certify(run, project)
    with open(project / "huge.route", "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written
    tamper(cert, _set_input_path("huge.route"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "the limit is 10,000,000" in out, out


def test_an_unknown_base_is_refused_naming_the_field(run: Run, project: Path) -> None:
    cert = certify(run, project)
    tamper(cert, lambda d: d["libraries"][0].update(base="root"), resign=True)
    code, out = verify(run, cert)
    assert code == 1 and "PCSC-E913" in out and "libraries[0].base" in out, out


def test_a_certificate_that_is_not_a_regular_file_is_refused(run: Run, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "cert.json")
    code, out = verify(run, tmp_path / "cert.json")
    assert code == 1 and "PCSC-E911" in out and "not a regular file" in out, out


def test_a_route_outside_the_certificates_folder_is_not_certified(run: Run, project: Path, tmp_path: Path) -> None:
    """The writer refuses what the checker would refuse: a file outside the folder."""
    (tmp_path / "elsewhere").mkdir()
    code, _, err = run("compile", str(project / "devtools_api.route"), "--policy-path", str(project / "policies"),
                       "--cert", str(tmp_path / "elsewhere" / "c.json"))
    assert code == 1 and "PCSC-E911" in err and "outside the certificate's folder" in err, err
    assert not (tmp_path / "elsewhere" / "c.json").exists()


def test_a_shipped_policy_and_library_are_read_from_the_shipped_folders(run: Run, tmp_path: Path) -> None:
    shutil.copy(SPEC_ROUTE, tmp_path / "a.route")
    cert = tmp_path / "c.json"
    code, _, err = run("compile", str(tmp_path / "a.route"), "--cert", str(cert))
    assert code == 0, err
    doc = json.loads(cert.read_text())
    assert doc["libraries"][0]["base"] == "shipped-obligations"
    assert doc["policies"][0]["files"][0]["base"] == "shipped-policies"
    assert verify(run, cert)[0] == 0
