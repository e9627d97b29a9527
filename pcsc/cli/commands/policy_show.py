"""`pcsc policy show POLICY`: the policy, merged with what it extends."""

from __future__ import annotations

import argparse

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("policy", metavar="POLICY", help="id@version, or a path to a .toml file")
    options.formats(p, "text", "json")
    options.search_paths(p, libraries=False)
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    import tomli_w

    from pcsc.policy.load import canonical_document

    loaded = ctx.policy(args.policy)
    header = f"# {loaded.ref}  sha256 {loaded.sha256}\n# from {loaded.path}" + (
        " (with what it extends, merged)\n" if loaded.policy.policy.extends else "\n"
    )
    payload = {
        "id": loaded.policy.id,
        "version": loaded.policy.version,
        "sha256": loaded.sha256,
        "path": loaded.path,
        "policy": canonical_document(loaded.resolved),
    }
    return Outcome("policy-show", payload, text=header + tomli_w.dumps(loaded.resolved))
