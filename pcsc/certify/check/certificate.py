"""The certificate as a whole (`verify`): its format, the files it names, read and hashed,
the routes each file declares, the libraries against their pins, each route recomputed,
and last the digest of its body."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pcsc.certify.check.expressions import unquote
from pcsc.certify.check.library import library_file, why_not_a_library
from pcsc.certify.check.reading import (
    Files,
    Mismatch,
    canonical,
    lookup,
    policy_document,
    registry_tables,
    set_key,
    sha256_text,
    text_of,
)
from pcsc.certify.check.recompute import (
    RouteCheck,
    check_coverage_rows,
    check_evidence,
    check_material,
    check_written,
    check_written_states,
    library_fields,
)
from pcsc.certify.check.route_text import Source, declared_routes, layout_of, route_statement

FORMAT = "pcsc-decision-certificate"
VERSION = 8  # 2: gate rules and require lines carry their expression and typed operands; 3: the policy's fold;
# 4: every number the route's author wrote is bound to its place in the route file (`written`);
# 5: each operand taken from a step must name the step its rule reads; the states' field values are bound
# to the route file and the `material` amounts to the library file; 6: a require line's `horizon` and
# duration literals are in days; 7: the decision records where its mode came from (`mode_source`) and the
# policy's mode it was lowered from (`lowered_from`); the coverage rows, the admissible evidence, the steps,
# libraries and routes are recomputed; 8: payoffs along the way on chains and graphs (`v` steps and the rules
# that read them), and a gold registry's findings recorded under `report` too, each derived again


def unique(entries: Sequence[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], Any], field: str) -> None:
    seen: set[Any] = set()
    for i, e in enumerate(entries):
        k = key(e)
        if k in seen:
            raise Mismatch(f"{field}[{i}]", f"repeats {k!r}, recorded before")
        seen.add(k)


def check_routes_of_files(cert: Mapping[str, Any], texts: Mapping[tuple[str, str], str]) -> None:
    """The certificate's routes are exactly the routes its hashed route files declare:
    none left out, none recorded twice, none from elsewhere."""
    unique(cert["inputs"], lambda e: (e["base"], e["path"]), "inputs")
    unique(cert["routes"], lambda r: (r["file"], r["route"]), "routes")
    declared = {(e["path"], name) for e in cert["inputs"] for name in declared_routes(texts["input", e["path"]])}
    recorded = {(r["file"], r["route"]) for r in cert["routes"]}
    for file, name in sorted(declared - recorded):
        raise Mismatch("routes", f"{file} declares route `{name}`, which the certificate leaves out")
    for i, r in enumerate(cert["routes"]):
        if (r["file"], r["route"]) not in declared:
            raise Mismatch(f"routes[{i}]", f"route `{r['route']}` is not declared in {r['file']} (the certificate's "
                                           "hashed route files declare "
                                           f"{', '.join(sorted(n for _, n in declared)) or 'none'})")


def check_route_header(check: RouteCheck, policies: Mapping[str, Mapping[str, Any]]) -> None:
    """The route's `policy` (and its `sha256` pin) and `uses` as its file writes them."""
    text, name = check.route_file.text, check.name
    stated = route_statement(text, name, "policy") or []
    ref = unquote(stated[0][1]) if stated and stated[0][0] == "string" else None
    if check.route["policy"] != ref:
        raise check.fail("policy", f"is {check.route['policy']}, but {check.route['file']} names {ref}")
    if ref is not None and len(stated) >= 3 and stated[1][1] == "sha256" and stated[2][0] == "string":
        pin, recorded = unquote(stated[2][1]), policies[ref]["file_sha256"]
        if pin != recorded:
            raise check.fail("policy", f"the route pins sha256 {pin}, but policy {ref} has {recorded}")
    uses = [v for k, v in route_statement(text, name, "uses") or [] if k == "name"]
    if check.route["libraries"] != uses:
        raise check.fail("libraries", f"are {', '.join(check.route['libraries']) or 'none'}, but "
                                      f"{check.route['file']} writes `uses {', '.join(uses)}`")


def library_header(text: str) -> tuple[str, str] | None:
    """The `library NAME version "V"` statement of a library file: (NAME, V)."""
    toks = layout_of(text).toks
    for i, p in enumerate(toks):
        if p[1] == "library" and p[4] == () and i + 3 < len(toks) and toks[i + 2][1] == "version" \
                and toks[i + 3][0] == "string":
            return toks[i + 1][1], unquote(toks[i + 3][1])
    return None


def expected_pin(policy: Mapping[str, Any], ref: str, name: str, shipped: Callable[[str], str | None],
                 what: str) -> dict[str, Any]:
    """The pin under which ``policy`` (``ref``) lets a route use library ``name``: its
    `[libraries.<name>]` entry; under a policy that pins no library, the library PCSC
    ships under that name (its canonical hash). Any other name judges no route."""
    pins = lookup(policy, ["libraries"])
    pins = pins if isinstance(pins, dict) else {}
    entry = pins.get(name)
    if isinstance(entry, dict):
        return {"by": "policy", "version": entry.get("version"), "sha256": entry.get("sha256")}
    ships = shipped(name)
    if not pins and ships is not None:
        return {"by": "shipped", "version": None, "sha256": ships}
    local = " and allows no local library" if lookup(policy, ["policy", "local_libraries"]) is not True else \
        " (a policy that allows local libraries must still name each under [libraries])"
    why = f"it pins only {', '.join(f'`{n}`' for n in sorted(pins))}" if pins else \
        "PCSC ships no library of that name"
    raise Mismatch(what, f"policy {ref} pins no library `{name}`{local}; {why}")


def check_libraries(cert: Mapping[str, Any], policies: Mapping[str, Mapping[str, Any]],
                    texts: Mapping[tuple[str, str], str], shipped: Callable[[str], str | None]) -> None:
    """Each library is the one its file declares and the one the route's policy lets
    judge it: its canonical text (recomputed here) has the hash the policy pins under
    that name (`[libraries.<name>]` sha256, and its version); for a name the policy
    does not pin, under a policy that pins none, the library PCSC ships under that name;
    other content only from a local file under a policy with `local_libraries = true`.
    The recorded pin is the one the first route using the library was admitted by.
    ``shipped(name)`` is the canonical hash of the shipped library of that name, or None."""
    unique(cert["libraries"], lambda e: e["name"], "libraries")
    unique(cert["policies"], lambda p: p["ref"], "policies")
    by_name = {e["name"]: (i, e) for i, e in enumerate(cert["libraries"])}
    used = {name for r in cert["routes"] for name in r["libraries"]}
    for i, e in enumerate(cert["libraries"]):
        if e["name"] not in used:
            raise Mismatch(f"libraries[{i}]", f"no route uses library `{e['name']}`")
        header = library_header(texts["library", e["name"]])
        if header != (e["name"], e["version"]):
            stated = "no `library … version` statement" if header is None else \
                f"`library {header[0]} version \"{header[1]}\"`"
            raise Mismatch(f"libraries[{i}]", f"is `{e['name']}` version {e['version']!r}, but {e['path']} "
                                              f"writes {stated}")
    for ref in {p["ref"] for p in cert["policies"]} - {r["policy"] for r in cert["routes"]}:
        raise Mismatch("policies", f"no route is decided under policy {ref}")
    bound: set[str] = set()
    for r in cert["routes"]:
        policy, ref = policies[r["policy"]], r["policy"]
        local = lookup(policy, ["policy", "local_libraries"]) is True
        for name in r["libraries"]:
            if name not in by_name:
                raise Mismatch(f"route {r['route']}: library {name}", "is not among the certificate's libraries")
            i, e = by_name[name]
            what = f"route {r['route']}: library {name} (libraries[{i}])"
            pin = expected_pin(policy, ref, name, shipped, what)
            if name not in bound:
                bound.add(name)
                if e["pin"] != pin:
                    raise Mismatch(f"libraries[{i}].pin", f"is {canonical(e['pin'])}, but route {r['route']}'s "
                                                          f"policy {ref} admits `{name}` by {canonical(pin)}")
            expected = pin["sha256"] if pin["sha256"] is not None else shipped(name)
            if expected is not None and e["canonical_sha256"] != expected:
                if local and e["base"] != "shipped-obligations":
                    continue  # a local library the policy lets replace what it pins or PCSC ships
                if pin["by"] == "shipped":
                    raise Mismatch(what, f"policy {ref} pins no library `{name}` and allows no local library; "
                                         f"the library PCSC ships under that name has sha256 {expected}, this one "
                                         f"{e['canonical_sha256']} (canonical text)")
                raise Mismatch(what, f"has sha256 {e['canonical_sha256']} (canonical text; version {e['version']}), "
                                     f"but policy {ref} pins {expected} (version {pin['version']})")
            if pin["version"] is not None and e["version"] != pin["version"]:
                raise Mismatch(what, f"is version {e['version']}, but policy {ref} pins version {pin['version']} "
                                     "with its content")


# ---------------------------------------------------------------------- the certificate
def verify(text: str, bases: Mapping[str, Path], against: Sequence[Path] = ()) -> dict[str, Any]:
    """Check a certificate; a summary when it holds, else `Mismatch` naming the first
    difference. ``bases`` maps each recorded base (`certificate`, `shipped-obligations`,
    `shipped-policies`) to its folder; ``against`` are files to read instead of the
    recorded paths, matched by file name. A certificate missing a key, or holding a
    value of the wrong kind, is a `Mismatch` too."""
    try:
        cert = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Mismatch("certificate", f"not JSON: {exc}") from None
    if not isinstance(cert, dict) or cert.get("certificate") != FORMAT:
        raise Mismatch("certificate", f"not a {FORMAT}")
    if cert.get("version") != VERSION:
        raise Mismatch("certificate", f"a certificate of format version {cert.get('version')!r} (written by pcsc "
                                      f"{cert.get('pcsc')}); this checker reads version {VERSION}: write it again "
                                      "with `pcsc compile --cert`")
    try:
        return _verify(cert, bases, against)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise Mismatch("certificate", f"malformed: {type(exc).__name__} {exc} (a key is missing or a value is "
                                      "not of its kind)") from None


def _verify(cert: dict[str, Any], bases: Mapping[str, Path], against: Sequence[Path]) -> dict[str, Any]:
    files = Files(bases, against)
    policies: dict[str, dict[str, Any]] = {}
    file_policies: dict[str, dict[str, Any]] = {}
    registries: dict[str, dict[str, Any]] = {}
    for i, record in enumerate(cert["policies"]):
        document = policy_document(record, files, f"policies[{i}]")
        file_policies[record["ref"]] = json.loads(canonical(document))
        what = f"policy {record['ref']} ({record['files'][0]['path']})"
        if len(record["files"]) > 1:  # the document merges these files: any of them may have changed
            what += " and what it extends: " + ", ".join(f"{f['ref']} ({f['path']})" for f in record["files"][1:])
        digest = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
        if digest != record["file_sha256"]:
            raise Mismatch(what, f"its document has sha256 {digest}, the certificate records {record['file_sha256']}")
        for o in cert["overrides"]:
            if o["applies_to"] == "policy":
                set_key(document, o["path"], o["value"])
        digest = hashlib.sha256(canonical(document).encode("utf-8")).hexdigest()
        if digest != record["sha256"]:
            raise Mismatch(what, f"with the overrides, sha256 {digest}, the certificate records {record['sha256']}")
        policies[record["ref"]] = document
        if (lookup(document, ["coverage", "registry"]) or "off") != "off":  # else no registry is read
            registries[record["ref"]] = registry_tables(record, files, document, f"policies[{i}]")
    texts: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(cert["inputs"]):
        what, at = f"input {entry['path']}", f"inputs[{i}]"
        text_in = text_of(files.locate(entry, at), what, at).replace("\r\n", "\n").replace("\r", "\n")
        digest = sha256_text(text_in)
        if digest != entry["sha256"]:
            raise Mismatch(what, f"has sha256 {digest}, the certificate records {entry['sha256']}")
        texts["input", entry["path"]] = text_in
    for i, entry in enumerate(cert["libraries"]):
        what, at = f"library {entry['name']} ({entry['path']})", f"libraries[{i}]"
        text_lib, digest, canonical_digest = library_file(files.locate(entry, at), what, at)
        if digest != entry["sha256"]:
            raise Mismatch(what, f"has sha256 {digest}, the certificate records {entry['sha256']}")
        if canonical_digest is None:
            raise Mismatch(what, f"does not read as a library: {why_not_a_library(text_lib)}")
        digest = canonical_digest
        if digest != entry["canonical_sha256"]:
            raise Mismatch(f"{at}.canonical_sha256", f"its canonical text has sha256 {digest}, the certificate "
                                                     f"records {entry['canonical_sha256']}")
        texts["library", entry["name"]] = text_lib
    sources: dict[tuple[str, str], Source] = {}

    def source(kind: str, name: str) -> Source:
        if (kind, name) not in texts:
            raise Mismatch(f"{kind} {name}", "is not among the certificate's hashed files")
        if (kind, name) not in sources:
            sources[kind, name] = Source(texts[kind, name])
        return sources[kind, name]

    shipped_hashes: dict[str, str | None] = {}

    def shipped(name: str) -> str | None:
        folder = bases.get("shipped-obligations")
        if folder is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            return None  # a name is a word: nothing else is looked for in the shipped folder
        if name not in shipped_hashes:
            path = Path(folder) / f"{name}.obl"
            what = f"the shipped library {name}"
            shipped_hashes[name] = library_file(path, what, what)[2] if path.is_file() else None
        return shipped_hashes[name]

    check_routes_of_files(cert, texts)
    records = {p["ref"]: p for p in cert["policies"]}
    counts = {"gates": 0, "requires": 0}
    for route in cert["routes"]:
        if route["policy"] not in policies:
            raise Mismatch(f"route {route['route']}", f"policy {route['policy']} is not recorded")
        check = RouteCheck(route, policies[route["policy"]], source, file_policies[route["policy"]])
        check_route_header(check, records)
    check_libraries(cert, policies, texts, shipped)
    for route in cert["routes"]:
        check = RouteCheck(route, policies[route["policy"]], source, file_policies[route["policy"]])
        check.registry = registries.get(route["policy"], {})
        check.run()
        check_written(check, cert["overrides"])
        check_written_states(check)
        check_coverage_rows(check, library_fields(check))
        check_evidence(check)
        check_material(check)
        check.check_coverage_and_verdict()
        for key, n in check.counts.items():
            counts[key] += n
    body = {k: v for k, v in cert.items() if k != "digest"}
    digest = hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()
    if digest != cert.get("digest"):
        raise Mismatch("certificate", f"its body has sha256 {digest}, but its digest says {cert.get('digest')}: "
                                      "it was edited after it was written")
    steps = sum(len(r["steps"]) for r in cert["routes"])
    decisions = sum(1 for r in cert["routes"] for row in r["coverage"] if row["material"])
    return {
        "routes": [{"route": r["route"], "verdict": r["decision"]["verdict"], "mode": r["decision"]["mode"],
                    "lowered_from": r["decision"]["lowered_from"]} for r in cert["routes"]],
        "steps": steps,
        "coverage_decisions": decisions,
        "gate_rules": counts["gates"],
        "require_lines": counts["requires"],
        "inputs": len(cert["inputs"]),
        "libraries": len(cert["libraries"]),
        "policies": len(cert["policies"]),
    }
