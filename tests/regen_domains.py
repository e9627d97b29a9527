"""The table of examples/domains/README.md, computed from the routes (tests/test_domains.py
checks the README against it, so the table cannot drift).

Rewrite it after changing a route, a planner policy or the fold:

    python3 tests/regen_domains.py

Each row is one route compiled under the policy it pins, beside the same route under
planner@1.0.0 (the paper's fold: no discount, no option to stop), which differs from
the planner-discount and planner-stop policies only in `[fold]`.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
DOMAINS = ROOT / "examples" / "domains"
README = DOMAINS / "README.md"
PAPER = "planner@1.0.0"
BEGIN = "<!-- table: python3 tests/regen_domains.py -->"
END = "<!-- end of table -->"


@attrs.frozen
class Row:
    route: str
    domain: str
    shape: str
    policy: str
    score: float
    binding: str
    last: bool  # the binding transition is the route's last step
    stops: bool  # every D is 0: the planner does not start (the option to stop)
    verdict: str
    paper_score: float
    paper_binding: str
    paper_last: bool


def routes() -> list[Path]:
    return sorted(DOMAINS.glob("*.route"))


def domain(path: Path) -> str:
    """The domain the file's first comment line names: `# Climate hardware, a chain …`."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    m = re.match(r"# ([^,]+),", first)
    if m is None:
        raise ValueError(f"{path}: the first line should read `# <domain>, a <shape> under <policy> …`")
    return m.group(1)


def shape(transitions: tuple[tuple[str, str], ...]) -> str:
    """`chain`, or `graph (k forks)` when some state has several outgoing transitions."""
    out = Counter(s for s, _ in transitions)
    forks = sum(1 for n in out.values() if n > 1)
    return "chain" if forks == 0 else f"graph ({forks} fork{'s' if forks > 1 else ''})"


def is_last(binding: str, transitions: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether ``binding`` enters the vision state (the end of the route)."""
    targets = {t for _, _, t in transitions}
    sources = {s for _, s, _ in transitions}
    end = (targets - sources).pop()
    return any(name == binding and t == end for name, _, t in transitions)


def row(path: Path) -> Row:
    import pcsc

    text = path.read_text(encoding="utf-8")
    here = pcsc.compile(path)
    assert here.ok and len(here.routes) == 1, [str(d) for d in here.diagnostics]
    r = here.routes[0]
    pinned = f"{r.policy.id}@{r.policy.version}"
    paper = r
    if pinned != PAPER:
        swapped = text.replace(f'policy  "{pinned}"', f'policy  "{PAPER}"')
        assert swapped != text, path
        other = pcsc.compile(swapped)
        assert other.ok and len(other.routes) == 1, [str(d) for d in other.diagnostics]
        paper = other.routes[0]
    edges = tuple((t.name, t.source, t.target) for t in r.transitions)
    assert r.binding is not None and paper.binding is not None
    score = r.score if r.score is not None else r.ungated_score
    paper_score = paper.score if paper.score is not None else paper.ungated_score
    return Row(
        route=r.name,
        domain=domain(path),
        shape=shape(tuple((s, t) for _, s, t in edges)),
        policy=pinned,
        score=score,
        binding=r.binding.transition,
        last=is_last(r.binding.transition, edges),
        stops=all(t.D == 0 for t in r.transitions),
        verdict=r.verdict,
        paper_score=paper_score,
        paper_binding=paper.binding.transition,
        paper_last=is_last(paper.binding.transition, edges),
    )


def rows() -> list[Row]:
    return [row(p) for p in routes()]


def _usd(x: float) -> str:
    return f"{x:,.0f}"


def _binding(name: str, last: bool, stops: bool) -> str:
    if stops:
        return f"`{name}` (every D is 0)"
    return f"`{name}`" + (" (last)" if last else "")


def table(found: list[Row] | None = None) -> str:
    """The README's counts and table, as Markdown (ends with a newline)."""
    found = rows() if found is None else found
    lines = [
        summary(found),
        "| route | domain | shape | policy | score (USD) | binding | verdict "
        f"| score under {PAPER} | binding under {PAPER} |",
        "|---|---|---|---|--:|---|---|--:|---|",
    ]
    for x in found:
        lines.append(
            f"| `{x.route}` | {x.domain} | {x.shape} | `{x.policy}` | {_usd(x.score)} "
            f"| {_binding(x.binding, x.last, x.stops)} | {x.verdict} "
            f"| {_usd(x.paper_score)} | {_binding(x.paper_binding, x.paper_last, False)} |"
        )
    return "\n".join(lines) + "\n"


def summary(found: list[Row]) -> str:
    """The counts the README states under the table (ends with a newline)."""
    n = len(found)
    graphs = sum(1 for x in found if x.shape != "chain")
    last = sum(1 for x in found if x.last and not x.stops)
    stops = sum(1 for x in found if x.stops)
    paper_last = sum(1 for x in found if x.paper_last)
    paper_negative = sum(1 for x in found if x.paper_score < 0)
    negative = sum(1 for x in found if x.score < 0)
    return (
        f"{n} routes, {graphs} of them graphs. Under {PAPER} (the paper's fold) {paper_negative} of {n} score "
        f"below zero and the binding transition is the last step in {paper_last} of {n}. Under the policies "
        f"the routes pin, {negative} of {n} score below zero; the binding transition is the last step in "
        f"{last}, and in {stops} the planner does not start (score 0, every D is 0, the binding transition "
        f"is the first step by the tie rule).\n"
    )


def readme_table(text: str) -> str:
    """The table between the README's markers."""
    start = text.index(BEGIN) + len(BEGIN) + 1
    return text[start : text.index(END)]


def main() -> int:
    text = README.read_text(encoding="utf-8")
    start = text.index(BEGIN) + len(BEGIN) + 1
    new = text[:start] + table() + text[text.index(END) :]
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"rewrote {README.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
