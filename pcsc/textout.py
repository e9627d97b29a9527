"""Plain-text views of compiled routes (deterministic; colour never changes content)."""

from __future__ import annotations

from pcsc.pipeline import Compiled


def money(x: float) -> str:
    return f"{x:,.2f}"


def compile_text(compiled: list[Compiled]) -> str:
    blocks = []
    for c in compiled:
        n, r = c.numbers, c.route
        b = n.transitions[n.binding]
        T = "—" if n.criteria_score is None else f"{n.criteria_score:.2f} ({n.bucket})"
        lines = [
            f"route {r.name}" + (f' "{r.title}"' if r.title else "") + f"  [{r.file}]",
            f"  policy      {c.policy.ref}  sha256 {c.policy.sha256}",
            "  verdict     ungated",
            f"  score       {money(n.score)} USD   (R_0 of the staged fold)",
            f"  value       {money(n.value)} USD",
            f"  criteria T  {T}",
            f"  eligible    {'yes' if n.eligible else 'no'}"
            + "".join(f"; gate {g.id} {'passed' if g.passed else 'FAILED'}" for g in n.gates),
            f"  binding     {b.name}  (U {b.U:.4g}, D {money(b.D)}, learning cost "
            + ("—" if b.learning_cost is None else money(b.learning_cost))
            + ")",
            f"  flat Π p    {n.flat_product:.6g}",
            "",
        ]
        header = ("transition", "class", "p_prior", "W", "p", "c", "bound by", "U", "D", "R_next")
        rows = [header] + [
            (
                t.name,
                t.ref_class,
                f"{t.p_prior:.4g}",
                f"{t.reweight.W:.4f}",
                f"{t.p:.4f}",
                money(t.cost.c),
                t.cost.bound_by,
                f"{t.U:.4g}",
                money(t.D),
                money(t.R_next),
            )
            for t in n.transitions
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for row in rows:
            cells = [
                cell.ljust(w) if i < 2 or i == 6 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ]
            lines.append("  " + "  ".join(cells).rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
