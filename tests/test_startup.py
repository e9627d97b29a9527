"""Start-up: `pcsc --version` and a plain `pcsc check` import only what they need
(benchmarks/bench_startup.py times them). Each runs in a fresh interpreter that prints
its `sys.modules` after the command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """\
import sys
sys.argv = ['pcsc', *sys.argv[1:]]
from pcsc.__main__ import main
rc = main()
sys.stdout.flush()
print('\\nMODULES', rc, ' '.join(sorted(sys.modules)))
"""


def modules_after(*argv: str) -> tuple[str, int, set[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    out, _, tail = proc.stdout.rpartition("\nMODULES ")
    rc, _, names = tail.strip().partition(" ")
    return out, int(rc), set(names.split())


def test_version_imports_only_the_version_module() -> None:
    out, rc, mods = modules_after("--version")
    from pcsc._version import __version__

    assert (out, rc) == (f"pcsc {__version__}\n", 0)
    assert {m for m in mods if m.startswith("pcsc")} == {"pcsc", "pcsc.__main__", "pcsc._version"}
    assert not {"attrs", "attr", "lark", "argparse"} & mods


def test_version_through_argparse_says_the_same() -> None:
    fast = subprocess.run([sys.executable, "-m", "pcsc", "--version"], capture_output=True, text=True, check=False)
    argparse_path = "import sys; from pcsc.cli import main; sys.exit(main(['--version']))"
    slow = subprocess.run([sys.executable, "-c", argparse_path],
                          capture_output=True, text=True, check=False)
    assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout) == (0, fast.stdout)
    assert fast.stdout.startswith("pcsc ")


def test_plain_check_imports_no_heavy_machinery() -> None:
    out, rc, mods = modules_after("check", "examples/devtools_api.route")
    assert rc == 0, out
    heavy = {"sympy", "numpy", "scipy", "jsonschema", "rich", "matplotlib", "jinja2", "cryptography", "dask",
             "multiprocessing", "concurrent"}
    assert not {m.split(".")[0] for m in mods} & heavy
    assert not {m for m in mods if m.startswith(("pcsc.forecast", "pcsc.analysis", "pcsc.certify", "pcsc.lsp",
                                                  "pcsc.api", "pcsc.render.report", "pcsc.render.sarif"))}
    # one process: no cohort machinery (worker settings, chunks, executors), no calibration
    # map (the route's policy has none), no packet, no progress bar
    assert not mods & {"pcsc.compiler.cohort", "pcsc.compiler.parallel", "pcsc.compiler.parallel_dask",
                       "pcsc.score.calibration", "pcsc.render.packet", "pcsc.render.text"}
    assert "pcsc.compiler.session" in mods  # it does check
