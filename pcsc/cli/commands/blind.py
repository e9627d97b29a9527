"""`pcsc blind FILE…|DIR -o OUTDIR --map MAP.json [--names NAMES.txt]`: blinded copies of
route files, identity cues masked (`pcsc.analysis.blind`), and the private map from masks to
cues written to its own file, never inside OUTDIR and never printed."""

from __future__ import annotations

import argparse
from pathlib import Path

from pcsc.base.humanize import plural
from pcsc.cli import options
from pcsc.cli.context import Context
from pcsc.cli.outcome import Outcome, UsageError
from pcsc.diagnostics.messages import (
    E105_BLINDED_NAMES_CLASH,
    E105_CANNOT_READ_THE,
    E105_NOTHING_TO_BLIND,
    E108_CANNOT_WRITE_THE,
    W702_CUE_LEFT,
    diag,
)
from pcsc.diagnostics.model import Diagnostic, Diagnostics, Span
from pcsc.lang.syntax.limits import read_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    options.files(p)
    p.add_argument("-o", "--out-dir", required=True, metavar="OUTDIR", help="write the blinded route files here")
    p.add_argument("--map", required=True, metavar="MAP.json",
                   help="write the private map (mask -> what it hides) here; not inside OUTDIR")
    p.add_argument("--names", metavar="NAMES.txt",
                   help="names to mask besides the patterns (companies, people, investors): one per line")
    options.formats(p, "text", "json")


def run(ctx: Context, args: argparse.Namespace) -> Outcome:
    from pcsc.analysis.blind import Blinder, leakage_cues, read_names, words_of
    from pcsc.base import canonical
    from pcsc.compiler.session import expand_inputs

    out_dir, map_path = Path(args.out_dir), Path(args.map)
    if map_path.resolve().is_relative_to(out_dir.resolve()):
        raise UsageError(f"--map {map_path}: the private map must not be written inside {out_dir}")
    names: list[str] = []
    if args.names:
        try:
            names = read_names(read_text(args.names))
        except (OSError, UnicodeDecodeError) as exc:
            return _failed(diag(E105_CANNOT_READ_THE, Span.file_only(args.names), what="names", reason=exc))
        ctx.note_input(Path(args.names), args.names)
    blinder = Blinder(names)
    inputs: list[tuple[Path, str, Path, str]] = []
    walked = Diagnostics()  # a link out of a folder: not read, not copied
    for arg in args.files:
        base = Path(arg)
        for path, shown in expand_inputs([arg], walked):
            relative = path.relative_to(base) if base.is_dir() else Path(path.name)
            try:
                text = read_text(path)
            except (OSError, UnicodeDecodeError) as exc:
                return _failed(diag(E105_CANNOT_READ_THE, Span.file_only(shown), what="route file", reason=exc))
            ctx.note_input(path, shown)
            inputs.append((path, shown, relative, text))
            blinder.reserved |= words_of(text)
    if walked.has_errors:
        return Outcome("blind", {"ok": False, "error": walked.items[0].message}, diagnostics=walked.items)
    written: list[tuple[str, Path, int, dict[str, str]]] = []
    left: list[Diagnostic] = []
    for _path, shown, relative, text in inputs:
        renamed_text, renamed = blinder.rename_identifiers(text)
        blinded, masked = blinder.blind_route_text(renamed_text)
        name, in_name = blinder.blind_file_name(relative.name)
        target = out_dir / relative.parent / name
        clash = next((s for s, t, _, _ in written if t == target), None)
        if clash is not None:
            return _failed(diag(E105_BLINDED_NAMES_CLASH, Span.file_only(shown), target=target, clash=clash))
        written.append((shown, target, masked + in_name, renamed))
        for cue in leakage_cues(blinded, names):  # in what the compiler reads: not masked
            span = Span(str(target), cue.line, cue.column, cue.line, cue.column + len(cue.text))
            left.append(diag(W702_CUE_LEFT, span, cue=cue.text))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(blinded, encoding="utf-8")
        except OSError as exc:
            reason = exc.strerror or exc
            return _failed(diag(E108_CANNOT_WRITE_THE, Span.file_only(str(target)), what="blinded copy", reason=reason))
    if not written:
        return _failed(diag(E105_NOTHING_TO_BLIND, Span.file_only(" ".join(args.files))))
    private = {
        "format": "pcsc-blind-map",
        "version": 1,
        "masks": dict(sorted(blinder.masks.items())),
        "files": [{"source": s, "blinded": str(t), "renamed": r} for s, t, _, r in written],
        "routes": dict(sorted((new, old) for _, _, _, r in written for new, old in r.items()
                              if new.startswith("route_"))),
    }
    try:
        map_path.parent.mkdir(parents=True, exist_ok=True)
        map_path.write_text(canonical.dumps(private, pretty=True) + "\n", encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or exc
        return _failed(diag(E108_CANNOT_WRITE_THE, Span.file_only(str(map_path)), what="map", reason=reason))
    payload = {
        "ok": True,
        "out_dir": str(out_dir),
        "map": str(map_path),
        "files": [{"source": s, "blinded": str(t), "masked": n, "renamed": len(r)} for s, t, n, r in written],
        "cues": blinder.counts(),
    }
    total = sum(n for _, _, n, _ in written)
    kinds = ", ".join(f"{n} {k.lower()}" for k, n in blinder.counts().items()) or "none"
    text = (f"blinded {plural(len(written), 'route file')} into {out_dir}: "
            f"{plural(total, 'cue')} masked (distinct: {kinds}); private map: {map_path}")
    return Outcome("blind", payload, text=text, diagnostics=left)


def _failed(problem: Diagnostic) -> Outcome:
    return Outcome("blind", {"ok": False, "error": problem.message}, diagnostics=[problem])
