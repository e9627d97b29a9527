"""Rendering: the documents and views PCSC prints are made here.

- ``packet``: the JSON packet of a compiled route (`compile`, `gate`, `seams`);
- ``text``: the text views of the same;
- ``diagnostics``: diagnostics as text (source line and caret) and JSON;
- ``sarif``: SARIF 2.1.0 logs of diagnostics and GATE refusals, for code scanning;
- ``envelope``: the one JSON envelope every command's document is wrapped in;
- ``schemas``: the JSON Schema of every document kind;
- ``graph``: a compiled route as a picture (DOT, Mermaid, SVG);
- ``report``: the HTML report, from ``templates/``;
- ``doclinks``: links into a published copy of the docs.

Renderers take values (IR, numbers, diagnostics, analyses) and return strings or
JSON-ready dicts; they never read the user's files or decide exit codes.
"""
