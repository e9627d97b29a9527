"""`pcsc verify-cert CERT [--against FILE…]`: re-check a decision certificate with the
independent checker (`pcsc.certify.check`); exit 1 naming the first difference."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import EXIT_INPUT, Outcome


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("cert", metavar="CERT", help="a certificate written by `pcsc compile --cert`")
    p.add_argument(
        "--against",
        nargs="+",
        default=[],
        metavar="FILE",
        help="route, library or policy files to re-hash instead of the recorded paths (matched by file name)",
    )
    options.formats(p, "text", "json")
    options.output(p)


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.base.resources import data_dir
    from pcsc.certify.check import MAX_CERTIFICATE_BYTES, Mismatch, Refused, read_bounded, verify
    from pcsc.diagnostics.messages import E911_CANNOT_READ, E912_DIFFERS, E913_REFUSED, diag
    from pcsc.diagnostics.model import Span

    path = Path(args.cert)
    try:
        text = read_bounded(path, args.cert, MAX_CERTIFICATE_BYTES).decode("utf-8")
    except (Mismatch, UnicodeDecodeError) as exc:
        problem = exc.message if isinstance(exc, Mismatch) else exc
        unread = diag(E911_CANNOT_READ, Span.file_only(args.cert), file=args.cert, problem=problem)
        return Outcome("verify-cert", {"verified": False, "difference": None}, diagnostics=[unread],
                       exit_code=EXIT_INPUT)
    ctx.note_input(path, args.cert)
    bases = {
        "certificate": path.resolve().parent,
        "shipped-obligations": data_dir("obligations"),
        "shipped-policies": data_dir("policies"),
    }
    against = [Path(f) for f in args.against]
    _check_against(text, against)
    try:
        try:
            summary = verify(text, bases, against)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
            # a structure the checker cannot read: a key missing, a value of the wrong kind
            detail = f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
            raise Mismatch("certificate", f"malformed, not as `pcsc compile --cert` writes it ({detail})") from None
    except Refused as exc:
        refused = diag(E913_REFUSED, Span.file_only(args.cert), file=args.cert, what=exc.what, problem=exc.message)
        payload = {"verified": False, "difference": {"what": exc.what, "message": exc.message}}
        return Outcome("verify-cert", payload, diagnostics=[refused], exit_code=EXIT_INPUT)
    except Mismatch as exc:
        differs = diag(E912_DIFFERS, Span.file_only(args.cert), file=args.cert, what=exc.what, problem=exc.message)
        payload = {"verified": False, "difference": {"what": exc.what, "message": exc.message}}
        return Outcome("verify-cert", payload, diagnostics=[differs], exit_code=EXIT_INPUT)
    verdicts: dict[str, int] = {}
    for r in summary["routes"]:
        shown = r["verdict"]
        if r["lowered_from"] is not None:
            shown += f" (coverage {r['mode']}, lowered from the policy's {r['lowered_from']} on the command line)"
        verdicts[shown] = verdicts.get(shown, 0) + 1
    routes = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
    text_out = (
        f"verified {args.cert}: {len(summary['routes'])} route(s) ({routes}); {summary['steps']} numbers recomputed, "
        f"{summary['gate_rules']} gate rules and {summary['require_lines']} require lines evaluated, "
        f"{summary['coverage_decisions']} coverage decisions, {summary['inputs']} input(s), "
        f"{summary['libraries']} librar{'y' if summary['libraries'] == 1 else 'ies'}, "
        f"{summary['policies']} polic{'y' if summary['policies'] == 1 else 'ies'} re-hashed"
    )
    return Outcome("verify-cert", {"verified": True, "difference": None, "summary": summary}, text=text_out)


def _check_against(text: str, against: list[Path]) -> None:
    """A file given to --against that the certificate records under no name would be
    silently unused (and the recorded path read instead): a usage error."""
    import json

    from pcsc.cli.outcome import UsageError

    if not against:
        return
    try:
        cert = json.loads(text)
        entries = [*cert["inputs"], *cert["libraries"], *(f for p in cert["policies"] for f in p["files"])]
        names = {Path(str(e["path"])).name for e in entries}
    except (ValueError, KeyError, TypeError):
        return  # the checker reports what is wrong with the certificate
    unknown = [str(f) for f in against if f.name not in names]
    if unknown:
        raise UsageError(f"--against {', '.join(unknown)}: the certificate records no file of that name "
                         f"(it records {', '.join(sorted(names))})")
