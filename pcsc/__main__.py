"""`python -m pcsc` and the `pcsc` console script. `pcsc --version` answers here,
importing nothing but the version module; every other command goes to `pcsc.cli`."""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:] == ["--version"]:
        from pcsc._version import __version__

        sys.stdout.write(f"pcsc {__version__}\n")
        return 0
    from pcsc.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
