"""One module per command, each of one shape:

    def add_arguments(parser: argparse.ArgumentParser) -> None
    def run(ctx: Context, args: argparse.Namespace) -> Outcome

Modules are imported only when their command runs (see ``pcsc.cli.registry``).
"""
