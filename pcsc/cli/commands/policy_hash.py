"""`pcsc policy hash POLICY`: the canonical SHA-256 a route pins."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("policy", metavar="POLICY", help="id@version, or a path to a .toml file")
    options.formats(p, "text", "json")
    options.search_paths(p, libraries=False)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    loaded = ctx.policy(args.policy)
    payload = {"id": loaded.policy.id, "version": loaded.policy.version, "sha256": loaded.sha256}
    return Outcome("policy-hash", payload, text=f"{loaded.sha256}  {loaded.ref}")
