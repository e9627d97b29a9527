"""Write a gold registry file from honest routes, as a maintainer would before any
revision of them is scored (`python -m pcsc.tools.registry`).

    python -m pcsc.tools.registry examples/cohort/ --source "..." -o policies/cohort/registries/cohort.toml

For each route (by name) the file gets one `[registry.<route>]` table: the states of
its typed chain in the order its transitions visit them, and for each state the fields
the route's author wrote there (not the ones carried forward), with their values in
base units. The tool reads the routes as written and prints the same bytes for the
same routes; a policy pins the file by the SHA-256 this tool prints on standard error
(`coverage.registry_sha256`). It writes down the honest chain; it does not judge it:
what the registry guarantees is that a revision keeps the chain the registry's author
saw (docs/coverage.md), not that the chain is right.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from pcsc.compiler.session import Session
from pcsc.lang.ir import Route


def _value(v: float | bool) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if math.isfinite(v) and v == int(v) and abs(v) < 2**53:
        return f"{int(v):_}"
    return repr(float(v))


def _string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def chain_states(route: Route) -> list[str]:
    """The route's states in the order its transitions visit them, each once."""
    ts = route.transitions
    return list(dict.fromkeys((ts[0].source, *(t.target for t in ts)))) if ts else []


def registry_table(route: Route, source: str) -> str:
    lines = [f"[registry.{route.name}]", f"source = {_string(source)}", "states = ["]
    for name in chain_states(route):
        state = route.state(name)
        values = dict(state.values)
        fields = ", ".join(f"{f} = {_value(values[f])}" for f in state.listed if f in values)
        lines.append(f"    {{ name = {_string(name)}, fields = {{ {fields} }} }},")
    lines.append("]")
    return "\n".join(lines)


def registry_text(routes: Sequence[Route], source: str, header: Sequence[str] = ()) -> str:
    parts = [*(f"# {line}".rstrip() for line in header)]
    for route in sorted(routes, key=lambda r: r.name):
        parts += ["", registry_table(route, source)]
    return "\n".join(parts).lstrip("\n") + "\n"


def load_routes(paths: Sequence[str]) -> tuple[list[Route], list[str]]:
    """The routes of the files (folders: their `.route` files), and the errors reading them."""
    session = Session()
    routes = session.load_paths(list(paths))
    errors = [d.message for d in session.diags.sorted() if d.severity == "error"]
    return routes, errors


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pcsc.tools.registry", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="route files or folders of them")
    p.add_argument("--source", required=True, help="who writes the registry, and from what (its `source` line)")
    p.add_argument("--header", action="append", default=[], metavar="LINE", help="a comment line for the file's top")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="write here (default: standard output)")
    args = p.parse_args(argv)
    routes, errors = load_routes(args.files)
    if errors or not routes:
        for e in errors or ["no route in the files given"]:
            print(f"error: {e}", file=sys.stderr)
        return 1
    text = registry_text(routes, args.source, args.header)
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    print(f"sha256 {hashlib.sha256(text.encode('utf-8')).hexdigest()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
