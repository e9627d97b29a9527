"""Links into a published copy of the docs: the URL of a page and the anchors the
generated pages carry (`python -m pcsc.tools.docs` writes the anchors; the SARIF
rules' `helpUri` links to them).

PCSC knows of no published copy unless told: the setting `docs_url` (`PCSC_DOCS_URL`,
docs/cli.md) gives its base URL, and without one no link is made.
"""

from __future__ import annotations

from pcsc.base.resources import data_dir

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


def code_doc_uri(code: str, docs_url: str | None) -> str | None:
    """Where ``code`` is explained: its anchor in the docs published at ``docs_url``;
    without one, in the docs/diagnostics.md of a source checkout (a `file:` URI); None
    when neither exists (an installed wheel carries no docs)."""
    if docs_url is not None:
        return doc_url(docs_url, "diagnostics", code_anchor(code))
    try:
        page = data_dir("docs") / "diagnostics.md"
    except FileNotFoundError:
        return None
    return f"{page.as_uri()}#{code_anchor(code)}" if page.is_file() else None
