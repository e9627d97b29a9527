"""`pcsc graph`: DOT, Mermaid and a self-laid-out SVG of compiled routes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

import pcsc.cli
from pcsc.base.humanize import compact
from pcsc.render.graph import Edge, Node, RouteGraph, text_width, to_svg
from tests.conftest import EXAMPLES, ROOT

SVG_NS = "{http://www.w3.org/2000/svg}"
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """`pcsc …` in process, through `pcsc.cli.main`, from the repository root."""
    monkeypatch.chdir(ROOT)

    def call(*argv: str) -> tuple[int, str, str]:
        code = pcsc.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def spliced(run: Run, tmp_path: Path) -> Path:
    """The spec route with seam 1 deleted: `launch` now claims every change of `monetize`."""
    target = tmp_path / "spliced.route"
    code, _, _ = run("splice", "examples/devtools_api.route", "--seam", "1", "-o", str(target))
    assert code == 0
    return target


def svg_root(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == f"{SVG_NS}svg" and root.get("version") == "1.1"
    return root


def count(root: ET.Element, tag: str) -> int:
    return len(root.findall(f".//{SVG_NS}{tag}"))


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG_NS}text")]


# ---------------------------------------------------------------------- labels
def test_compact_numbers_for_labels() -> None:
    assert compact(5000) == "5,000"
    assert compact(1.2e6) == "1.2M"
    assert compact(100e6) == "100M"
    assert compact(10e9) == "10B"
    assert compact(96_029_197.94) == "96.03M"
    assert compact(0.1, "ratio") == "10%"
    assert compact(2.5) == "2.5"
    assert compact(True) == "true"
    assert compact(-2_171_095.35) == "-2.17M"


def test_text_width_uses_proportional_metrics() -> None:
    assert text_width("iiii", 10) < text_width("MMMM", 10)
    assert text_width("MM", 10) == pytest.approx(2 * 8.33)
    assert text_width("ab", 12, bold=True) > text_width("ab", 12)


# ---------------------------------------------------------------------- DOT
def test_dot_of_the_spec_route(run: Run) -> None:
    code, out, err = run("graph", "examples/devtools_api.route")
    assert code == 0, err
    assert out.startswith('digraph "pcsc" {') and out.endswith("}\n")
    nodes = re.findall(r'^    "devtools_api/(\w+)" \[label=', out, re.M)
    assert nodes == ["garage", "wedge", "bridge", "scale"]
    edges = re.findall(r'^    "devtools_api/(\w+)" -> "devtools_api/(\w+)" \[(.*)\];$', out, re.M)
    assert [(a, b) for a, b, _ in edges] == [("garage", "wedge"), ("wedge", "bridge"), ("bridge", "scale")]
    assert 'subgraph "cluster_devtools_api"' in out
    assert "score 885,626.17 USD · released · policy venture@1.0.0" in out
    # the fields that change on entering a state; the start state shows all of them
    assert '"devtools_api/bridge" [label="bridge\\ndevelopers 5,000 · paying_teams 200 · arr 1.2M"]' in out
    assert '[label="wedge\\ndevelopers 500"]' in out
    assert '[label="garage\\ndevelopers 0 · paying_teams 0 · arr 0"]' in out
    # the vision on the last state
    assert re.search(r'"devtools_api/scale" \[label="[^"]*\\nV 600M = 10B × 10% × 0.6", peripheries=2', out)
    # edges: name, p, c, the coverage marker; only the binding one (expand) is bold
    labels = {a: attrs for a, _, attrs in edges}
    assert labels["garage"].startswith('label="launch\\np 0.5378 · c 99,000\\n✓ covered"')
    assert "✗" not in out
    bold = [a for a, _, attrs in edges if "penwidth=3" in attrs]
    assert bold == ["bridge"]
    assert "binding · U 0.15" in labels["bridge"] and 'style="bold"' in labels["bridge"]


def test_dot_marks_the_uncovered_changes_of_a_splice(run: Run, spliced: Path) -> None:
    code, out, _ = run("graph", str(spliced))
    assert code == 0  # a refused score is drawn, not an error
    assert "score withheld (ungated 3,996,422.76 USD) · suspend-and-ask" in out
    launch = re.search(r'"devtools_api/garage" -> "devtools_api/bridge" \[(.*)\];', out)
    assert launch is not None
    assert "✗ uncovered\\ndevelopers, paying_teams, arr" in launch.group(1)
    assert 'style="dashed"' in launch.group(1)
    assert out.count("✓ covered") == 1  # expand


# ---------------------------------------------------------------------- Mermaid
def test_mermaid_of_the_spec_route(run: Run) -> None:
    code, out, _ = run("graph", "examples/devtools_api.route", "--format", "mermaid")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "flowchart LR"
    assert sum(1 for x in lines if re.fullmatch(r"    r0s\d\[\".*\"\]", x)) == 4
    links = [x for x in lines if re.search(r" (-->|==>|-\.->)\|", x)]
    assert len(links) == 3
    assert [x for x in links if "==>" in x] == [links[2]] and "expand" in links[2]
    assert "  linkStyle 2 stroke:#c05621,stroke-width:3px,color:#c05621" in lines
    assert "  class r0s3 vision" in lines
    assert 'r0s2["bridge<br/>developers 5,000 · paying_teams 200 · arr 1.2M"]' in out


def test_mermaid_marks_the_splice(run: Run, spliced: Path) -> None:
    _, out, _ = run("graph", str(spliced), "--format", "mermaid")
    launch = 'r0s0 -.->|"launch<br/>p 0.5378 · c 613,333.33<br/>✗ uncovered<br/>developers, paying_teams, arr"| r0s1'
    assert launch in out
    assert "  linkStyle 0 stroke:#c53030,color:#c53030,stroke-dasharray:6 4" in out


# ---------------------------------------------------------------------- SVG
def test_svg_of_the_spec_route(run: Run) -> None:
    code, out, _ = run("graph", "examples/devtools_api.route", "--format", "svg")
    assert code == 0
    root = svg_root(out)
    assert count(root, "rect") == 1 + 4  # the background, one box per state
    assert count(root, "path") == 3  # one arrow per transition
    assert count(root, "polygon") == 3  # and its head
    words = texts(root)
    assert "devtools_api — Developer API for SMS" in words
    assert "score 885,626.17 USD · released · policy venture@1.0.0" in words
    assert words.count("✓ covered") == 3
    assert "V 600M = 10B × 10% × 0.6" in words
    assert "developers 5,000" in words and "arr 1.2M" in words
    binding = [p for p in root.iter(f"{SVG_NS}path") if p.get("stroke-width") == "3"]
    assert len(binding) == 1 and binding[0].get("stroke") == "#c05621"
    assert any(t == "binding · U 0.15 · D 96.03M" for t in words)
    # boxes lie left to right without overlapping, and fit in the picture
    boxes = [r for r in root.iter(f"{SVG_NS}rect")][1:]
    xs = [(float(r.get("x", "")), float(r.get("width", ""))) for r in boxes]
    assert all(x0 + w0 < x1 for (x0, w0), (x1, _) in zip(xs, xs[1:], strict=False))
    assert xs[-1][0] + xs[-1][1] < float(root.get("width", ""))


def test_svg_marks_the_splice(run: Run, spliced: Path) -> None:
    _, out, _ = run("graph", str(spliced), "--format", "svg")
    root = svg_root(out)
    assert count(root, "rect") == 1 + 3 and count(root, "path") == 2
    words = texts(root)
    assert "✗ uncovered" in words and "developers, paying_teams, arr" in words
    dashed = [p for p in root.iter(f"{SVG_NS}path") if p.get("stroke-dasharray")]
    assert len(dashed) == 1


def test_outputs_are_deterministic_and_o_writes_the_same_bytes(run: Run, tmp_path: Path) -> None:
    for fmt in ("dot", "mermaid", "svg"):
        _, first, _ = run("graph", "examples/feature_flags.route", "--format", fmt)
        _, second, _ = run("graph", "examples/feature_flags.route", "--format", fmt)
        target = tmp_path / f"g.{fmt}"
        code, out, _ = run("graph", "examples/feature_flags.route", "--format", fmt, "-o", str(target))
        assert code == 0 and out == ""
        assert first == second and target.read_bytes() == first.encode("utf-8")


# ---------------------------------------------------------------------- escaping
def test_markup_in_a_title_is_escaped_in_every_format(run: Run, tmp_path: Path) -> None:
    text = (EXAMPLES / "devtools_api.route").read_text(encoding="utf-8")
    text = text.replace('"Developer API for SMS"', '"R&D <beta> \\"API\\""')
    route = tmp_path / "markup.route"
    route.write_text(text, encoding="utf-8")
    title = 'devtools_api — R&D <beta> "API"'
    code, svg, err = run("graph", str(route), "--format", "svg")
    assert code == 0, err
    assert "&amp;" in svg and "&lt;beta&gt;" in svg and "<beta>" not in svg
    assert title in texts(svg_root(svg))
    _, dot, _ = run("graph", str(route), "--format", "dot")
    assert 'label="devtools_api — R&D <beta> \\"API\\"\\nscore' in dot
    _, mermaid, _ = run("graph", str(route), "--format", "mermaid")
    assert "R#amp;D #lt;beta#gt; #quot;API#quot;" in mermaid and "<beta>" not in mermaid


def test_svg_escapes_what_xml_forbids() -> None:
    node = Node("r0s0", "a", ("x 1",), None)
    vision = Node("r0s1", "b", ("x 2",), "V 1 = 1 × 100% × 1")
    edge = Edge("r0s0", "r0s1", "t", "p 0.5000 · c 1", False, ("x",), "binding · U 0.25 · D 1")
    graph = RouteGraph("r0", "r", 'r — "q" <&> \x01 \'s\'', "score 1 · released", (node, vision), (edge,))
    root = svg_root(to_svg([graph]))
    assert 'r — "q" <&> \ufffd \'s\'' in texts(root)
    assert count(root, "rect") == 3 and count(root, "path") == 1


# ---------------------------------------------------------------------- several routes
def test_several_routes_one_graph_each(run: Run) -> None:
    _, dot, _ = run("graph", "examples/feature_flags.route")
    assert re.findall(r'subgraph "cluster_(\w+)"', dot) == ["self_serve", "enterprise_first"]
    assert dot.count("penwidth=3") == 2  # one binding transition per route
    _, mermaid, _ = run("graph", "examples/feature_flags.route", "--format", "mermaid")
    assert re.findall(r"^  subgraph (r\d)\[", mermaid, re.M) == ["r0", "r1"]
    assert mermaid.count("flowchart LR") == 1 and mermaid.count("\n  end\n") == 2
    _, svg, _ = run("graph", "examples/feature_flags.route", "--format", "svg")
    root = svg_root(svg)
    groups = [g.get("id") for g in root.findall(f"{SVG_NS}g")]
    assert groups == ["route-r0", "route-r1"]
    assert count(root, "rect") == 1 + 4 + 4 and count(root, "path") == 3 + 3


def test_route_option_chooses_one(run: Run) -> None:
    code, dot, _ = run("graph", "examples/feature_flags.route", "--route", "enterprise_first")
    assert code == 0
    assert re.findall(r'subgraph "cluster_(\w+)"', dot) == ["enterprise_first"]
    assert "self_serve" not in dot
    code, out, err = run("graph", "examples/feature_flags.route", "--route", "self_serv")
    assert code == 2 and out == ""
    assert "no route `self_serv`" in err and "did you mean `self_serve`?" in err


def test_input_errors_exit_1(run: Run, tmp_path: Path) -> None:
    code, out, err = run("graph", str(tmp_path / "missing.route"))
    assert code == 1 and out == "" and "PCSC-E105" in err
    code, out, err = run("graph", "examples/devtools_api.route", "--format", "png")
    assert code == 2 and out == "" and "--format: invalid choice" in err


def test_the_documented_mermaid_is_what_the_command_prints(run: Run) -> None:
    doc = (ROOT / "docs" / "graph.md").read_text(encoding="utf-8")
    shown = doc.split("```\nflowchart LR\n", 1)[1].split("```", 1)[0]
    _, out, _ = run("graph", "examples/devtools_api.route", "--format", "mermaid")
    assert out == "flowchart LR\n" + shown


# ---------------------------------------------------------------------- -o and the format
@pytest.mark.parametrize(
    ("name", "fmt"),
    [("g.svg", "svg"), ("g.SVG", "svg"), ("g.dot", "dot"), ("g.gv", "dot"), ("g.mmd", "mermaid"),
     ("g.mermaid", "mermaid"), ("g", "dot")],
)
def test_o_infers_the_format_from_the_extension(run: Run, tmp_path: Path, name: str, fmt: str) -> None:
    _, expected, _ = run("graph", "examples/devtools_api.route", "--format", fmt)
    target = tmp_path / name
    code, out, err = run("graph", "examples/devtools_api.route", "-o", str(target))
    assert (code, out, err) == (0, "", "")
    assert target.read_bytes() == expected.encode("utf-8")


def test_an_explicit_format_wins_over_the_extension(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "g.svg"
    code, _, _ = run("graph", "examples/devtools_api.route", "--format", "mermaid", "-o", str(target))
    assert code == 0 and target.read_text(encoding="utf-8").startswith("flowchart LR\n")
    target = tmp_path / "g.png"
    code, _, _ = run("graph", "examples/devtools_api.route", "--format", "svg", "-o", str(target))
    assert code == 0 and target.read_text(encoding="utf-8").startswith("<?xml")


def test_o_is_left_alone_when_nothing_is_drawn(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "g.svg"
    target.write_text("an earlier picture", encoding="utf-8")
    code, out, err = run("graph", str(tmp_path / "missing.route"), "-o", str(target))
    assert (code, out) == (1, "") and "PCSC-E105" in err
    assert target.read_text(encoding="utf-8") == "an earlier picture"
    code, _, _ = run("graph", str(tmp_path / "missing.route"), "-o", str(tmp_path / "new.svg"))
    assert code == 1 and not (tmp_path / "new.svg").exists()


def test_an_unknown_extension_is_a_usage_error_naming_the_known_ones(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "g.png"
    code, out, err = run("graph", "examples/devtools_api.route", "-o", str(target))
    assert code == 2 and out == "" and not target.exists()
    assert err.startswith("pcsc graph: error: cannot tell the format from the extension of ")
    for known in (".dot", ".gv", ".mmd", ".mermaid", ".svg", "--format"):
        assert known in err


# ---------------------------------------------------------------------- a tie pick is not drawn as binding
TIE_ROUTE = "examples/domains/biochar_kilns.route"  # option to stop: the planner would not start


def test_a_tie_pick_is_not_drawn_as_the_binding_edge(run: Run) -> None:
    """When every U·D is 0 the binding transition is only the tie rule's pick: no format
    draws it as the bold orange binding edge; it is dotted purple, labelled a tie pick,
    and the route's title carries compile's tie note."""
    import json

    code, out, _ = run("compile", TIE_ROUTE, "--format", "json")
    [r] = json.loads(out)["routes"]
    assert all(t["U"] * t["D"] == 0 for t in r["transitions"])  # so nothing binds
    _, text, _ = run("compile", TIE_ROUTE)
    [note] = [x.strip() for x in text.splitlines() if "tie rule" in x]

    _, dot, _ = run("graph", TIE_ROUTE)
    assert "penwidth=3" not in dot and "#c05621" not in dot and 'style="bold"' not in dot
    [tie] = [x for x in dot.splitlines() if "tie pick" in x]
    assert '"biochar_kilns/yard" -> "biochar_kilns/demo"' in tie  # the earliest step
    assert 'style="dotted"' in tie and "tie pick, not binding · U " in tie and "\\nbinding · U" not in dot
    assert note in dot

    _, mermaid, _ = run("graph", TIE_ROUTE, "--format", "mermaid")
    assert "==>" not in mermaid and "#c05621" not in mermaid and note in mermaid
    assert "  linkStyle 0 stroke:#6b46c1,stroke-width:2px,color:#6b46c1,stroke-dasharray:2 3" in mermaid

    _, svg, _ = run("graph", TIE_ROUTE, "--format", "svg")
    root = svg_root(svg)
    strokes = [(p.get("stroke"), p.get("stroke-width"), p.get("stroke-dasharray")) for p in root.iter(f"{SVG_NS}path")]
    assert strokes[0] == ("#6b46c1", "2", "2 3") and all(s[1] != "3" and s[0] != "#c05621" for s in strokes)
    words = texts(root)
    assert note in words
    assert any("dotted purple arrow: the tie rule's pick" in w for w in words)
    # the note sits above every box
    y_note = next(float(t.get("y", "")) for t in root.iter(f"{SVG_NS}text") if t.text == note)
    assert all(float(b.get("y", "")) > y_note for b in list(root.iter(f"{SVG_NS}rect"))[1:])


def test_a_binding_edge_is_still_bold_and_the_legend_has_no_tie(run: Run) -> None:
    _, svg, _ = run("graph", "examples/devtools_api.route", "--format", "svg")
    words = texts(svg_root(svg))
    assert not any("tie" in w for w in words)
    _, dot, _ = run("graph", "examples/devtools_api.route")
    assert "dotted" not in dot and "#6b46c1" not in dot
