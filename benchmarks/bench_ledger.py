"""What checking the ledger costs (a script, not a test: nothing asserts a time).

    python3 benchmarks/bench_ledger.py [--sizes 1000,10000] [--repeats 3]

For each size N, builds a SQLite ledger of N forecasts whose payloads are the frozen
packet of `examples/feature_flags.route` (about 6.5 KB each, as `pcsc freeze` stores
it), in a temporary folder, then times, best of `--repeats`:

- `verify`: `Ledger.verify()`, what `pcsc ledger verify` runs;
- `first append`: one forecast appended by a newly opened ledger, what one `pcsc freeze`
  run does: the whole ledger verified, then the write, read back;
- `later append`: one more by the same open ledger: the schema and the rows appended
  since are checked, not the whole ledger.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pcsc.compiler.session import Session
from pcsc.forecast.ledger import ForecastRecord, Ledger, PolicyId
from pcsc.forecast.stores import open_ledger
from pcsc.render.packet import route_packet

ROOT = Path(__file__).resolve().parent.parent
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def packet() -> dict[str, object]:
    session = Session()
    compiled = session.compile_route(session.load_routes(ROOT / "examples" / "feature_flags.route")[0])
    assert compiled is not None
    doc: dict[str, object] = json.loads(json.dumps(route_packet(compiled)))
    return doc


def best(repeats: int, run: Callable[[], None]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(path: Path, n: int, payload: dict[str, object], repeats: int) -> tuple[float, float, float]:
    """(verify, first append, later append) seconds on a new ledger of ``n`` forecasts at ``path``."""
    policy = PolicyId("venture", "1.0.0", "0" * 64)
    with Ledger.open(path) as ledger:
        for start in range(0, n, 500):
            numbers = range(start, min(n, start + 500))
            batch = [ForecastRecord("r", "f.route", policy, {**payload, "i": i}) for i in numbers]
            ledger.append_forecasts(batch, inputs=[], frozen_at=T0)
    counter = iter(range(10**9))

    def one(ledger: Ledger) -> None:
        ledger.append_forecasts([ForecastRecord("r", "f.route", policy, {"n": next(counter)})], inputs=[])

    def verify() -> None:
        with open_ledger(path, create=False) as ledger:
            assert ledger.verify().ok

    def first_append() -> None:
        with open_ledger(path, create=False) as ledger:
            one(ledger)

    with open_ledger(path, create=False) as kept:
        one(kept)
        later = best(repeats, lambda: one(kept))
    return best(repeats, verify), best(repeats, first_append), later


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="ledger sizes, comma-separated (default 1000,10000)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    payload = packet()
    size = len(json.dumps(payload, separators=(",", ":")))
    print(f"payload: the packet of examples/feature_flags.route, {size:,} bytes; best of {args.repeats}")
    print(f"{'forecasts':>9} {'verify s':>9} {'ms/1,000':>9} {'first append s':>15} {'later append ms':>16}")
    with tempfile.TemporaryDirectory() as folder:
        for n in (int(part) for part in args.sizes.split(",")):
            checked, first, later = measure(Path(folder) / f"{n}.sqlite", n, payload, args.repeats)
            print(f"{n:>9,} {checked:>9.2f} {checked / n * 1e6:>9.0f} {first:>15.2f} {later * 1e3:>16.1f}")


if __name__ == "__main__":
    main()
