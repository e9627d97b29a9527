"""Rendering: every byte PCSC prints is made here.

- ``diagnostics``: diagnostics as text (source line and caret), JSON and SARIF;
- ``envelope``: the one JSON envelope every command's document is wrapped in;
- ``tables``: aligned plain-text tables;
- ``graph``: a compiled route as a picture (DOT, Mermaid, SVG).

Renderers take values (IR, numbers, diagnostics) and return strings or JSON-ready
dicts; they never read files or decide exit codes.
"""
