"""A compiled route as a picture, in DOT, Mermaid or SVG (`pcsc graph` draws with it).

States are nodes (their name and the fields that change on entering them; the start
state shows every field), transitions are edges (name, p, c and the coverage marker:
✓ covered, ✗ uncovered with the uncovered fields), the vision state carries V, the
binding transition is drawn bold and coloured (dotted, in another colour, when every
U·D is 0 and it is only the tie rule's pick), and each route's title says its score
and verdict (and, for a tie, compile's tie note). DOT and Mermaid are text for other
tools to lay out. SVG is laid out here, without Graphviz: a chain is one row of boxes
joined left to right by arrows, a graph route columns and lanes of equal boxes, sized
with fixed Helvetica/Arial font metrics (Liberation Sans shares them).

Several routes: DOT draws one cluster per route in one graph, Mermaid one subgraph
per route in one flowchart, SVG one block per route, stacked; `--route` picks one.
Every output is deterministic, byte for byte. This module reads compiled routes and
computes no number of its own.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from pcsc.base.escape import escape_controls
from pcsc.base.humanize import compact, money, probability, significant

if TYPE_CHECKING:  # drawing needs no pipeline: keep this module light
    from pcsc.compiler.session import Compiled

FORMATS = ("dot", "mermaid", "svg")

# colours: one palette for every format
INK, MUTED, BOX, BOX_EDGE = "#1a202c", "#4a5568", "#f7f9fc", "#718096"
VISION_FILL, VISION_EDGE = "#eef7f0", "#2f855a"
BINDING = "#c05621"
TIE = "#6b46c1"  # the tie rule's pick: no step binds
COVERED, UNCOVERED = "#2f855a", "#c53030"


# ---------------------------------------------------------------------- the graph model
@attrs.frozen
class Node:
    id: str  # unique in the document
    name: str
    fields: tuple[str, ...]  # "developers 5,000", the fields that change on entering it
    vision: str | None  # "V 600M = 10B × 10% × 0.6" on the vision state


@attrs.frozen
class Edge:
    source: str  # node ids
    target: str
    name: str
    numbers: str  # "p 0.5378 · c 99,000"
    covered: bool | None  # None when coverage is off
    uncovered: tuple[str, ...]  # the fields with an uncovered material change
    binding: str | None  # "binding · U 0.15 · D 96.03M" on the binding transition
    tie: bool = False  # the binding transition is only the tie rule's pick (every U·D is 0)

    @property
    def bold(self) -> bool:
        """Drawn as the binding edge: binding, and not merely by the tie rule."""
        return self.binding is not None and not self.tie

    @property
    def styled(self) -> tuple[tuple[str, str], ...]:
        """The label, line by line, each with its role: name, numbers, covered,
        uncovered, fields (the uncovered ones), off, binding, tie."""
        if self.covered is None:
            marker: tuple[tuple[str, str], ...] = (("coverage off", "off"),)
        elif self.covered:
            marker = (("✓ covered", "covered"),)
        else:
            marker = (("✗ uncovered", "uncovered"), (", ".join(self.uncovered), "fields"))
        out = ((self.name, "name"), (self.numbers, "numbers"), *marker)
        return out + (((self.binding, "tie" if self.tie else "binding"),) if self.binding else ())

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(text for text, _ in self.styled)


@attrs.frozen
class RouteGraph:
    key: str  # r0, r1, …: a safe id prefix
    name: str
    title: str  # "devtools_api — Developer API for SMS"
    summary: str  # "score 885,626.17 USD · released · policy venture@1.0.0"
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    # a route that forks and joins: each node's column (the longest run of transitions
    # from the start) and lane (its place in that column); None for a chain (one row)
    grid: tuple[tuple[int, int], ...] | None = None
    note: str | None = None  # compile's tie note (`RouteNumbers.tie_note`), when the binding edge is a tie pick

    @property
    def heading(self) -> tuple[str, ...]:
        return (self.title, self.summary, *((self.note,) if self.note else ()))


def route_graph(c: Compiled, index: int) -> RouteGraph:
    """The picture's content for one compiled route: labels, markers, the binding edge."""
    route, n, d = c.route, c.numbers, c.decision
    key = f"r{index}"
    ids = {s.name: f"{key}s{i}" for i, s in enumerate(route.states)}
    nodes = []
    previous: dict[str, float | bool] | None = None
    into: dict[str, list[str]] = {}
    for tr in route.transitions:
        into.setdefault(tr.target, []).append(tr.source)
    for s in route.states:
        values = dict(s.values)
        if route.shape is not None:  # a fork's branch shows what changed since its source; a join what it lists
            sources = into.get(s.name, [])
            previous = dict(route.state(sources[0]).values) if len(sources) == 1 else None
            if len(sources) > 1:
                previous = {f: (not v if isinstance(v, bool) else v) for f, v in s.values}
                previous.update((f, v) for f, v in s.values if f not in s.listed)
        shown = [f for f, v in s.values if previous is None or previous[f] != v]
        fields = tuple(f"{f} {compact(values[f], route.field(f).type)}" for f in shown)
        if s.payoff is not None:  # value credited on arrival (docs/formulas.md)
            fields += (f"payoff {compact(s.payoff)}",)
        vision = None
        if s.name == route.vision.state:
            v, vp = route.vision, c.policy.policy.vision
            if vp.is_default:
                vision = (
                    f"V {compact(n.value)} = {compact(v.tam)} × {compact(v.capture, 'ratio')} "
                    f"× {compact(v.defensibility)}"
                )
            else:
                vision = f"V {compact(n.value)} = {vp.value}"
        nodes.append(Node(ids[s.name], s.name, fields, vision))
        previous = values
    edges = []
    for i, t in enumerate(n.transitions):
        uncovered: tuple[str, ...] = ()
        covered: bool | None = None
        if c.coverage is not None:
            uncovered = tuple(dc.delta.field for dc in c.coverage.for_transition(t.name) if dc.covered is False)
            covered = not uncovered
        tie = i == n.binding and n.binding_by_tie is not None
        binding = None if i != n.binding else f"{'tie pick, not binding' if tie else 'binding'} · " \
            f"U {significant(t.U, 4)} · D {compact(t.D)}"
        numbers = f"p {probability(t.p)} · c {compact(t.cost.c)}"
        edges.append(Edge(ids[t.source], ids[t.target], t.name, numbers, covered, uncovered, binding, tie))
    title = escape_controls(route.name + (f" — {route.title}" if route.title else ""))
    unit = c.policy.policy.units.label
    if d.score is None:
        score = f"score withheld (ungated {money(n.score)} {unit})"
    elif d.docked:
        score = f"score {money(d.score)} {unit} (docked; ungated {money(n.score)} {unit})"
    else:
        score = f"score {money(d.score)} {unit}"
    verdict = "ungated (coverage off)" if d.verdict == "ungated" else d.verdict
    summary = f"{score} · {verdict}" + ("" if n.eligible else " · ineligible") + f" · policy {c.policy.ref}"
    grid = None
    if route.shape is not None:
        column: dict[str, int] = {route.states[0].name: 0}
        for tr in route.transitions:  # topological order: a source's column is final
            column[tr.target] = max(column.get(tr.target, 0), column[tr.source] + 1)
        # a branch keeps its fork's lane plus its place among the fork's transitions; a
        # join takes its highest branch's lane; a lane already taken in a column moves down
        lane: dict[str, int] = {route.states[0].name: 0}
        taken: set[tuple[int, int]] = {(0, 0)}
        leaving: dict[str, list[str]] = {}
        for tr in route.transitions:
            leaving.setdefault(tr.source, []).append(tr.target)
        for st in route.states[1:]:
            sources = into[st.name]
            if len(sources) > 1:
                want = min(lane[u] for u in sources)
            else:
                u = sources[0]
                want = lane[u] + leaving[u].index(st.name)
            col = column[st.name]
            while (col, want) in taken:
                want += 1
            lane[st.name] = want
            taken.add((col, want))
        grid = tuple((column[st.name], lane[st.name]) for st in route.states)
    return RouteGraph(key, route.name, title, summary, tuple(nodes), tuple(edges), grid, n.tie_note)


# ---------------------------------------------------------------------- DOT
def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dot_label(lines: Sequence[str]) -> str:
    return _dot_str("\n".join(lines))


def to_dot(graphs: Sequence[RouteGraph]) -> str:
    """One digraph, one cluster per route; Graphviz lays it out left to right."""
    font = '"Helvetica,Arial,sans-serif"'
    out = [
        'digraph "pcsc" {',
        f"  graph [rankdir=LR, fontname={font}, fontsize=13, labeljust=l, nodesep=0.5, ranksep=0.9];",
        f'  node [shape=box, style="rounded,filled", fontname={font}, fontsize=11, '
        f'color="{BOX_EDGE}", fillcolor="{BOX}", fontcolor="{INK}"];',
        f'  edge [fontname={font}, fontsize=10, color="{MUTED}", fontcolor="{INK}"];',
    ]
    for g in graphs:
        out += [
            "",
            f"  subgraph {_dot_str('cluster_' + g.name)} {{",
            f"    label={_dot_label(g.heading)};",
            f'    color="{BOX_EDGE}";',
        ]
        names = {node.id: f"{g.name}/{node.name}" for node in g.nodes}
        for node in g.nodes:
            lines = (node.name, " · ".join(node.fields), *((node.vision,) if node.vision else ()))
            extra = f', peripheries=2, color="{VISION_EDGE}", fillcolor="{VISION_FILL}"' if node.vision else ""
            out.append(f"    {_dot_str(names[node.id])} [label={_dot_label([x for x in lines if x])}{extra}];")
        for e in g.edges:
            source, target = _dot_str(names[e.source]), _dot_str(names[e.target])
            attributes = ", ".join([f"label={_dot_label(e.lines)}", *_dot_edge_style(e)])
            out.append(f"    {source} -> {target} [{attributes}];")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_edge_style(e: Edge) -> list[str]:
    """The binding edge bold and coloured, a tie pick dotted in its own colour; an
    uncovered one dashed (and red unless binding or a tie pick)."""
    dashed = e.covered is False
    if e.tie:
        return ["penwidth=2", f'color="{TIE}"', f'fontcolor="{TIE}"', f'style="{"dashed" if dashed else "dotted"}"']
    if e.bold:
        style = "bold,dashed" if dashed else "bold"
        return ["penwidth=3", f'color="{BINDING}"', f'fontcolor="{BINDING}"', f'style="{style}"']
    if dashed:
        return [f'color="{UNCOVERED}"', f'fontcolor="{UNCOVERED}"', 'style="dashed"']
    return []


# ---------------------------------------------------------------------- Mermaid
_MERMAID_ENTITIES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "\n": "<br/>"}


def _mm(s: str) -> str:
    return "".join(_MERMAID_ENTITIES.get(ch, ch) for ch in s)


def _mm_label(lines: Sequence[str]) -> str:
    return '"' + "<br/>".join(_mm(x) for x in lines if x) + '"'


def to_mermaid(graphs: Sequence[RouteGraph]) -> str:
    """One `flowchart LR`, one subgraph per route; text entity-escaped (#quot; #lt; …)."""
    out = ["flowchart LR"]
    styles: list[str] = []
    vision_nodes: list[str] = []
    link = 0
    for g in graphs:
        out.append(f"  subgraph {g.key}[{_mm_label(g.heading)}]")
        out.append("    direction LR")
        for node in g.nodes:
            lines = (node.name, " · ".join(node.fields), *((node.vision,) if node.vision else ()))
            out.append(f"    {node.id}[{_mm_label(lines)}]")
            if node.vision:
                vision_nodes.append(node.id)
        for e in g.edges:
            arrow = "==>" if e.bold else "-.->" if e.covered is False or e.tie else "-->"
            out.append(f"    {e.source} {arrow}|{_mm_label(e.lines)}| {e.target}")
            if e.tie:
                dash = "6 4" if e.covered is False else "2 3"
                styles.append(f"  linkStyle {link} stroke:{TIE},stroke-width:2px,color:{TIE},stroke-dasharray:{dash}")
            elif e.bold:
                dash = ",stroke-dasharray:6 4" if e.covered is False else ""
                styles.append(f"  linkStyle {link} stroke:{BINDING},stroke-width:3px,color:{BINDING}{dash}")
            elif e.covered is False:
                styles.append(f"  linkStyle {link} stroke:{UNCOVERED},color:{UNCOVERED},stroke-dasharray:6 4")
            link += 1
        out.append("  end")
    out.append(f"  classDef vision fill:{VISION_FILL},stroke:{VISION_EDGE},stroke-width:2px")
    if vision_nodes:
        out.append(f"  class {','.join(vision_nodes)} vision")
    out += styles
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- SVG
SLACK = 1.18  # room for a wider fallback font (see `fit`)
SVG_FONTS = "Helvetica, Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif"
FONT, EDGE_FONT, TITLE_FONT = 12.0, 11.0, 15.0
PAD_X, PAD_Y, MARGIN, GAP_MIN, ROW_GAP, ARROW = 14.0, 10.0, 24.0, 80.0, 36.0, 9.0
_ROLE_FILL = {"name": INK, "numbers": MUTED, "covered": COVERED, "uncovered": UNCOVERED, "fields": UNCOVERED,
              "off": MUTED, "binding": BINDING, "tie": TIE}
LEGEND = ("bold orange arrow: the binding transition (largest U·D) · dashed red arrow: an uncovered material "
          "change · green box: the vision state")
BOLD_ROLES = ("name", "binding", "tie")  # the label lines set in bold
#: the legend's addition when a route's binding edge is only the tie rule's pick
LEGEND_TIE = " · dotted purple arrow: the tie rule's pick, where every U·D is 0 and no step binds"

# Helvetica / Arial advance widths in 1/1000 em for ASCII 32..126 (the standard AFM
# metrics; Arial and Liberation Sans are metric-compatible with Helvetica).
_WIDTHS = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
)  # fmt: skip
_OTHER_WIDTHS = {"·": 278, "×": 584, "—": 1000, "–": 556, "→": 1000, "✓": 834, "✗": 834, "…": 1000}


def text_width(s: str, size: float, bold: bool = False) -> float:
    """Estimated advance width of ``s`` at ``size`` px in Helvetica (bold about 8% wider)."""
    total = 0
    for ch in s:
        code = ord(ch)
        if 32 <= code <= 126:
            total += _WIDTHS[code - 32]
        elif ch in _OTHER_WIDTHS:
            total += _OTHER_WIDTHS[ch]
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            total += 1000
        else:
            total += 600
    return total * size / 1000 * (1.08 if bold else 1.0)


def fit(s: str, size: float, bold: bool = False) -> float:
    """The room to leave for ``s``: its Helvetica width plus the slack a wider fallback
    font needs (DejaVu Sans, where no Helvetica or Arial is installed, runs about 17% wider)."""
    return text_width(s, size, bold) * SLACK


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(s: str) -> str:
    """Text for XML content or a double-quoted attribute (characters XML 1.0 forbids
    become U+FFFD)."""
    s = _XML_BAD.sub("\ufffd", s)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _n(x: float) -> str:
    """A coordinate: one decimal at most, no trailing zeros, never `-0`."""
    s = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _line_h(size: float) -> float:
    return round(size * 1.35, 1)


@attrs.frozen
class _Row:
    """One route laid out: box widths, the gaps between boxes (wide enough for the
    edge labels), the common box height and the tallest edge label."""

    graph: RouteGraph
    box_w: tuple[float, ...]
    gaps: tuple[float, ...]
    box_h: float
    label_h: float  # the tallest edge label block
    width: float
    height: float

    @property
    def top_of_boxes(self) -> float:
        title = _line_h(TITLE_FONT) + (len(self.graph.heading) - 1) * _line_h(FONT) + 14
        return title + max(0.0, self.label_h + 8 - self.box_h / 2)


def _node_lines(node: Node) -> list[tuple[str, bool]]:
    return [(node.name, True), *((f, False) for f in node.fields), *(((node.vision, True),) if node.vision else ())]


def _layout(g: RouteGraph) -> _Row:
    if g.grid is not None:
        return _layout_grid(g)
    box_w = tuple(
        max(90.0, max(fit(s, FONT, bold) for s, bold in _node_lines(node)) + 2 * PAD_X) for node in g.nodes
    )
    box_h = max(len(_node_lines(node)) for node in g.nodes) * _line_h(FONT) + 2 * PAD_Y
    gaps = tuple(
        max(GAP_MIN, max(fit(s, EDGE_FONT, role in BOLD_ROLES) for s, role in e.styled) + 24)
        for e in g.edges
    )
    label_h = max((len(e.lines) for e in g.edges), default=0) * _line_h(EDGE_FONT)
    title_w = max(fit(g.title, TITLE_FONT, True), *(fit(x, FONT) for x in g.heading[1:]))
    width = max(sum(box_w) + sum(gaps), title_w)
    row = _Row(g, box_w, gaps, box_h, label_h, width, 0.0)
    return attrs.evolve(row, height=row.top_of_boxes + box_h)


def _layout_grid(g: RouteGraph) -> _Row:
    """A graph route: columns of equal boxes, one lane per branch."""
    assert g.grid is not None
    w = max(max(90.0, max(fit(s, FONT, bold) for s, bold in _node_lines(node)) + 2 * PAD_X) for node in g.nodes)
    box_h = max(len(_node_lines(node)) for node in g.nodes) * _line_h(FONT) + 2 * PAD_Y
    gap = max(
        [GAP_MIN, *(max(fit(s, EDGE_FONT, role in BOLD_ROLES) for s, role in e.styled) + 24 for e in g.edges)]
    ) + BEND
    label_h = max((len(e.lines) for e in g.edges), default=0) * _line_h(EDGE_FONT)
    columns = max(c for c, _ in g.grid) + 1
    lanes = max(lane for _, lane in g.grid) + 1
    title_w = max(fit(g.title, TITLE_FONT, True), *(fit(x, FONT) for x in g.heading[1:]))
    width = max(columns * w + (columns - 1) * gap, title_w)
    row = _Row(g, tuple(w for _ in g.nodes), (gap,), box_h, label_h, width, 0.0)
    return attrs.evolve(row, height=row.top_of_boxes + lanes * _lane_h(row))


BEND = 40.0  # the width in which a branch turns to or from its lane


def _lane_h(row: _Row) -> float:
    return row.box_h + row.label_h + 28


def _svg_heading(g: RouteGraph, x0: float, y0: float) -> list[str]:
    """The route's group opened, with its title, summary and tie note."""
    out = [f'<g id="route-{g.key}">', f"<title>{_x(g.title)}</title>"]
    out.append(_text(x0, y0 + TITLE_FONT, g.title, TITLE_FONT, anchor="start", bold=True))
    for k, line in enumerate(g.heading[1:], 1):
        out.append(_text(x0, y0 + TITLE_FONT + k * _line_h(FONT) + 2, line, FONT, anchor="start",
                         fill=MUTED if k == 1 else TIE))
    return out


def _svg_grid(row: _Row, x0: float, y0: float) -> list[str]:
    g = row.graph
    assert g.grid is not None
    out = _svg_heading(g, x0, y0)
    top = y0 + row.top_of_boxes
    w, gap, lh = row.box_w[0], row.gaps[0], _line_h(FONT)
    corner = {node.id: (x0 + c * (w + gap), top + lane * _lane_h(row)) for node, (c, lane) in zip(g.nodes, g.grid,
                                                                                                   strict=True)}
    for node in g.nodes:
        x, y = corner[node.id]
        fill, stroke, sw = (VISION_FILL, VISION_EDGE, 2) if node.vision else (BOX, BOX_EDGE, 1)
        out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(row.box_h)}" rx="6" ry="6" '
                   f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')
        lines = _node_lines(node)
        first = y + row.box_h / 2 - (len(lines) - 1) * lh / 2 + FONT * 0.35
        for k, (s, bold) in enumerate(lines):
            colour = VISION_EDGE if node.vision and k == len(lines) - 1 else INK
            out.append(_text(x + w / 2, first + k * lh, s, FONT, bold=bold, fill=colour))
    elh = _line_h(EDGE_FONT)
    out_degree: dict[str, int] = {}
    for e in g.edges:
        out_degree[e.source] = out_degree.get(e.source, 0) + 1
    forks = {n for n, k in out_degree.items() if k > 1}
    seen: dict[tuple[str, str], int] = {}
    for e in g.edges:
        twin = seen.get((e.source, e.target), 0)  # a second transition between the same states sits lower
        seen[(e.source, e.target)] = twin + 1
        (sx, sy), (tx, ty) = corner[e.source], corner[e.target]
        y1 = sy + row.box_h / 2 + twin * 10
        y2 = ty + row.box_h / 2 + twin * 10
        x1, x2 = sx + w + 2, tx - 2
        colour, width, dash = _svg_stroke(e)
        # a fork's branch turns to its lane at once, a branch joins in the last gap; the
        # label sits on the level part
        if sy == ty:
            path, left, right, level = f"M {_n(x1)} {_n(y1)} L {_n(x2 - ARROW)} {_n(y2)}", x1, x2, y1
        elif sy < ty and e.source in forks:
            path = f"M {_n(x1)} {_n(y1)} L {_n(x1 + BEND)} {_n(y2)} L {_n(x2 - ARROW)} {_n(y2)}"
            left, right, level = x1 + BEND, x2, y2
        else:
            path = f"M {_n(x1)} {_n(y1)} L {_n(x2 - BEND)} {_n(y1)} L {_n(x2 - ARROW)} {_n(y2)}"
            left, right, level = x1, x2 - BEND, y1
        out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{_n(width)}"{dash}/>')
        half = ARROW / 2 + (1 if e.bold else 0)
        out.append(f'<polygon points="{_n(x2)},{_n(y2)} {_n(x2 - ARROW - 1)},{_n(y2 - half)} '
                   f'{_n(x2 - ARROW - 1)},{_n(y2 + half)}" fill="{colour}"/>')
        cx = (left + right) / 2
        styled = e.styled
        for k, (s, role) in enumerate(styled):
            y = level - 7 - (len(styled) - 1 - k) * elh + twin * (len(styled) + 1) * elh
            out.append(_text(cx, y, s, EDGE_FONT, bold=role in BOLD_ROLES, fill=_ROLE_FILL[role]))
    out.append("</g>")
    return out


def _svg_stroke(e: Edge) -> tuple[str, float, str]:
    """An edge's colour, width and dash: bold orange for the binding transition, dotted
    purple for a tie pick, dashed (red unless either) where a change is uncovered."""
    dash = ' stroke-dasharray="6 4"' if e.covered is False else ' stroke-dasharray="2 3"' if e.tie else ""
    if e.tie:
        return TIE, 2, dash
    return (BINDING if e.bold else UNCOVERED if e.covered is False else MUTED), 3 if e.bold else 1.5, dash


def _text(x: float, y: float, s: str, size: float, *, anchor: str = "middle", bold: bool = False,
          fill: str = INK) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" text-anchor="{anchor}" fill="{fill}"'
            f"{weight}>{_x(s)}</text>")


def _svg_row(row: _Row, x0: float, y0: float) -> list[str]:
    g = row.graph
    if g.grid is not None:
        return _svg_grid(row, x0, y0)
    out = _svg_heading(g, x0, y0)
    top = y0 + row.top_of_boxes
    mid = top + row.box_h / 2
    x = x0
    lh = _line_h(FONT)
    lefts = []
    for i, node in enumerate(g.nodes):
        w = row.box_w[i]
        lefts.append(x)
        fill, stroke, sw = (VISION_FILL, VISION_EDGE, 2) if node.vision else (BOX, BOX_EDGE, 1)
        out.append(f'<rect x="{_n(x)}" y="{_n(top)}" width="{_n(w)}" height="{_n(row.box_h)}" rx="6" ry="6" '
                   f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/>')
        lines = _node_lines(node)
        first = mid - (len(lines) - 1) * lh / 2 + FONT * 0.35
        for k, (s, bold) in enumerate(lines):
            colour = VISION_EDGE if node.vision and k == len(lines) - 1 else INK
            out.append(_text(x + w / 2, first + k * lh, s, FONT, bold=bold, fill=colour))
        x += w + (row.gaps[i] if i < len(row.gaps) else 0)
    index = {node.id: i for i, node in enumerate(g.nodes)}
    elh = _line_h(EDGE_FONT)
    for e in g.edges:
        s_i, t_i = index[e.source], index[e.target]
        x1 = lefts[s_i] + row.box_w[s_i] + 2
        x2 = lefts[t_i] - 2
        colour, width, dash = _svg_stroke(e)
        out.append(f'<path d="M {_n(x1)} {_n(mid)} L {_n(x2 - ARROW)} {_n(mid)}" fill="none" stroke="{colour}" '
                   f'stroke-width="{_n(width)}"{dash}/>')
        half = ARROW / 2 + (1 if e.bold else 0)
        out.append(f'<polygon points="{_n(x2)},{_n(mid)} {_n(x2 - ARROW - 1)},{_n(mid - half)} '
                   f'{_n(x2 - ARROW - 1)},{_n(mid + half)}" fill="{colour}"/>')
        cx = (x1 + x2) / 2
        styled = e.styled
        for k, (s, role) in enumerate(styled):
            y = mid - 7 - (len(styled) - 1 - k) * elh
            out.append(_text(cx, y, s, EDGE_FONT, bold=role in BOLD_ROLES, fill=_ROLE_FILL[role]))
    out.append("</g>")
    return out


def to_svg(graphs: Sequence[RouteGraph]) -> str:
    """A standalone SVG 1.1 document: one block per route, stacked top to bottom."""
    rows = [_layout(g) for g in graphs]
    legend = LEGEND + (LEGEND_TIE if any(e.tie for g in graphs for e in g.edges) else "")
    legend_w = fit(legend, EDGE_FONT)
    width = 2 * MARGIN + max([legend_w, *(r.width for r in rows)])
    body: list[str] = []
    y = MARGIN
    for row in rows:
        body += _svg_row(row, MARGIN, y)
        y += row.height + ROW_GAP
    body.append(_text(MARGIN, y - ROW_GAP + 28, legend, EDGE_FONT, anchor="start", fill=MUTED))
    height = y - ROW_GAP + 28 + MARGIN
    title = "; ".join(g.title for g in graphs)
    head = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" font-family="{SVG_FONTS}">',
        f"<title>{_x(title)}</title>",
        f'<rect x="0" y="0" width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>',
    ]
    return "\n".join([*head, *body, "</svg>"]) + "\n"


RENDERERS = {"dot": to_dot, "mermaid": to_mermaid, "svg": to_svg}

#: File name extensions and the format each implies (`pcsc graph -o route.svg`).
EXTENSIONS = {".dot": "dot", ".gv": "dot", ".mmd": "mermaid", ".mermaid": "mermaid", ".svg": "svg"}


def render(compiled: Sequence[Compiled], fmt: str) -> str:
    """The picture of ``compiled`` (one route or several) in ``fmt``: dot, mermaid or svg."""
    return RENDERERS[fmt]([route_graph(c, i) for i, c in enumerate(compiled)])
