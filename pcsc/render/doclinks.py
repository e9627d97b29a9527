"""Links into a published copy of the docs: the URL of a page and the anchors the
generated pages carry (`python -m pcsc.tools.docs` writes the anchors; the SARIF
rules' `helpUri` links to them).

PCSC knows of no published copy unless told: the setting `docs_url` (`PCSC_DOCS_URL`,
docs/cli.md) gives its base URL, and without one no link is made.
"""

from __future__ import annotations

#: The anchor of the section on GATE refusals in SARIF, in docs/diagnostics.md.
GATE_ANCHOR = "gate-refusals"
#: The anchor for the result "no obligation covers the field", in docs/diagnostics.md.
NO_OBLIGATION_ANCHOR = "no-obligation"


def doc_url(base: str, page: str, anchor: str | None = None) -> str:
    """The URL of `docs/<page>.md` in the copy published at ``base`` (MkDocs with
    directory URLs: `docs/diagnostics.md` is served at `<base>diagnostics/`)."""
    return f"{base}{page}/" + (f"#{anchor}" if anchor else "")


def code_anchor(code: str) -> str:
    """The anchor of a diagnostic code in docs/diagnostics.md: the code in lower case,
    which is also what MkDocs would make of a heading reading just the code."""
    return code.lower()
