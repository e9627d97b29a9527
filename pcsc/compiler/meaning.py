"""What a text means to the compiler, for `pcsc fmt`'s safety check
(`pcsc.lang.fmt.check_format`): its lowered IR and its diagnostics.

It lives apart from the formatter because it compiles (`pcsc.compiler.session`), and the
pipeline itself uses the formatter: a library's pin is taken over the text
`pcsc fmt` writes (`pcsc.lang.fmt.canonical_library`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pcsc.lang.fmt import Semantics, strip_ir


def semantics(
    text: str,
    file: str,
    library: bool,
    route_dir: Path,
    lib_path: Sequence[Path] = (),
    policy_path: Sequence[Path] = (),
) -> Semantics:
    """What ``text`` means to the compiler: its lowered IR and its diagnostics."""
    from pcsc.compiler.session import Session
    from pcsc.lang.lower.library import lower_library
    from pcsc.lang.lower.route import PolicyFacts
    from pcsc.lang.serialize import converter, ir_json
    from pcsc.lang.syntax import parse_source
    from pcsc.policy.load import PolicyStore

    session = Session(lib_path=list(lib_path), policies=PolicyStore(list(policy_path)))
    ir: dict[str, Any] = {}
    if library:
        tree = parse_source(text, file, session.diags)
        lib = None if tree is None else lower_library(tree, file, text, session.diags)
        if lib is not None:
            ir[lib.name] = strip_ir(converter().unstructure(lib))
    else:
        for route in session.routes_from_text(text, file, route_dir):
            ir[route.name] = strip_ir(ir_json(route))
            # what needs the policy (an unknown class, PCSC-E207) is reported for a route
            # that fails to lower; checked here, a route that lowers reports the same, so
            # a layout fix that lets a route lower (PCSC-E104) does not hide it
            session.check_policy(PolicyFacts.of(route))
    return Semantics(ir, Counter(d.code for d in session.diags.items))
