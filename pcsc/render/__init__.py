"""Rendering: every byte PCSC prints is made here.

- ``diagnostics``: diagnostics as text (source line and caret) and JSON;
- ``sarif``: SARIF 2.1.0 logs of diagnostics and GATE refusals, for code scanning;
- ``envelope``: the one JSON envelope every command's document is wrapped in;
- ``tables``: aligned plain-text tables;
- ``graph``: a compiled route as a picture (DOT, Mermaid, SVG).

Renderers take values (IR, numbers, diagnostics) and return strings or JSON-ready
dicts; they never read files or decide exit codes.
"""
