"""`pcsc lsp`: the language server, over standard input and output (for editors).

The server is `pcsc.lsp.server`; it needs pygls, the optional extra `pcsc[lsp]`.
"""

from __future__ import annotations

import argparse

from pcsc.base.extras import require
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome
from pcsc.diagnostics.exits import EXIT_INPUT, EXIT_OK


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stdio",
        action="store_true",
        help="talk over standard input and output (the default; accepted because many clients pass it)",
    )
    options.search_paths(p)
    options.coverage(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    require("lsp", "pcsc lsp")
    from pcsc.lsp.server import Settings, serve

    settings = Settings(
        lib_path=tuple(ctx.search_path("lib_path")),
        policy_path=tuple(ctx.search_path("policy_path")),
        coverage=ctx.coverage,  # type: ignore[arg-type]
        config_coverage=ctx.config.coverage,  # type: ignore[arg-type]
        docs_url=ctx.docs_url,
    )
    refused = serve(settings)
    return Outcome("lsp", exit_code=EXIT_OK if refused is None else EXIT_INPUT)

