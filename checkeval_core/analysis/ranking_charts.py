"""Plotly figures for the Rankings page (pure functions of a rankings report).

Kept apart from :mod:`checkeval_core.analysis.charts` so the ranking features stay in one
place; the figures take the dict of :func:`checkeval_core.analysis.rankings.rankings_report`
and never touch the database.
"""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go

from checkeval_core.stats.values import Figure


def correlation_title(report: dict[str, Any]) -> str:
    """``ρ = 0.90 [0.70, 1.00] · τ = 0.76 [...] · n = 12 systems`` or the reason it is
    undefined."""
    rho, tau = report["spearman"], report["kendall"]
    if rho["value"] is None or (isinstance(rho["value"], float) and math.isnan(rho["value"])):
        return f"ρ, τ undefined: {rho['reason'] or 'no data'}"
    return (f"Spearman ρ = {Figure.from_dict(rho).text(2)}"
            f" · Kendall τ = {Figure.from_dict(tau).text(2)}"
            f" · n = {rho['n']} systems, 95% bootstrap over {report['n_queries']} queries")


#: Label positions tried around a point, in order (plotly ``textposition`` names).
LABEL_POSITIONS = ("top center", "bottom center", "middle right", "middle left", "top right",
                   "top left", "bottom right", "bottom left")
#: Plot area the label layout assumes (px) and the size of one label character / line.
PLOT_PX = (900.0, 380.0)
CHAR_PX, LINE_PX, MARKER_PX = 6.5, 13.0, 6.0


def _box(cx: float, cy: float, text: str, pos: str) -> tuple[float, float, float, float]:
    """The label's box (x0, y0, x1, y1 in px, y up) when placed at ``pos`` around a point."""
    w, h = CHAR_PX * len(text), LINE_PX
    vert, horiz = pos.split()
    x0 = {"center": cx - w / 2, "right": cx + MARKER_PX, "left": cx - MARKER_PX - w}[horiz]
    y0 = {"top": cy + MARKER_PX, "bottom": cy - MARKER_PX - h, "middle": cy - h / 2}[vert]
    return x0, y0, x0 + w, y0 + h


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def label_layout(xs: list[float], ys: list[float], texts: list[str]
                 ) -> list[tuple[str | None, tuple[float, float, float, float] | None]]:
    """Where to put each point's label so that no two labels overlap and no label covers a
    marker: ``[(textposition, box) or (None, None)]`` — None means the label would collide
    everywhere and is left to the hover. Greedy, in order of decreasing y (the strongest
    systems first); coordinates are scaled to :data:`PLOT_PX`."""
    if not xs:
        return []

    def scale(v: list[float], px: float) -> list[float]:
        lo, hi = min(v), max(v)
        return [px / 2 if hi == lo else (x - lo) / (hi - lo) * px for x in v]
    px, py = scale(xs, PLOT_PX[0]), scale(ys, PLOT_PX[1])
    markers = [(x - MARKER_PX, y - MARKER_PX, x + MARKER_PX, y + MARKER_PX)
               for x, y in zip(px, py)]
    Box = tuple[float, float, float, float]
    placed: list[Box] = []
    out: list[tuple[str | None, Box | None]] = [(None, None)] * len(xs)
    for i in sorted(range(len(xs)), key=lambda k: -py[k]):
        for pos in LABEL_POSITIONS:
            b = _box(px[i], py[i], texts[i], pos)
            if any(_overlap(b, o) for o in placed) or any(
                    _overlap(b, m) for j, m in enumerate(markers) if j != i):
                continue
            placed.append(b)
            out[i] = (pos, b)
            break
    return out


def score_vs_reference(report: dict[str, Any]) -> go.Figure:
    """Scatter of each system's judge score (x, with its bootstrap interval) against its
    reference rating (y, with lower/upper when known). Systems without a reference rating are
    left out. ρ/τ are not repeated in the title (the page prints them once, above).

    Labels never overlap: each goes where it collides with no other label or marker
    (:func:`label_layout`); one that fits nowhere is shown on hover only. A system whose
    score has no interval (one query) is drawn as an open circle."""
    pts = [s for s in report["systems"] if s["reference"] is not None
           and not (isinstance(s["reference"], float) and math.isnan(s["reference"]))
           and s["score"] is not None and not math.isnan(s["score"])]
    x = [s["score"] for s in pts]
    y = [s["reference"] for s in pts]
    layout = label_layout(x, y, [s["system"] for s in pts])

    def err(lo_hi: list[Any], v: float, side: int) -> float:
        b = lo_hi[side]
        if b is None or (isinstance(b, float) and math.isnan(b)):
            return 0.0
        return abs(b - v)

    def no_ci(s: dict[str, Any]) -> bool:
        return any(b is None or (isinstance(b, float) and math.isnan(b)) for b in s["ci"])

    fig = go.Figure(go.Scatter(
        x=x, y=y, mode="markers+text",
        text=[s["system"] if pos else "" for s, (pos, _) in zip(pts, layout)],
        hovertext=[s["system"] for s in pts],
        textposition=[pos or "top center" for pos, _ in layout], textfont={"size": 10},
        marker={"size": 9, "symbol": ["circle-open" if no_ci(s) else "circle" for s in pts]},
        error_x={"type": "data", "symmetric": False,
                 "array": [err(s["ci"], s["score"], 1) for s in pts],
                 "arrayminus": [err(s["ci"], s["score"], 0) for s in pts], "thickness": 1},
        error_y={"type": "data", "symmetric": False,
                 "array": [err([s["reference_lower"], s["reference_upper"]], s["reference"], 1)
                           for s in pts],
                 "arrayminus": [err([s["reference_lower"], s["reference_upper"]],
                                    s["reference"], 0) for s in pts], "thickness": 1},
        hovertemplate="%{hovertext}<br>judge score %{x:.3f}<br>reference %{y:.1f}"
                      "<extra></extra>"))
    hidden = sum(1 for pos, _ in layout if pos is None)
    fig.update_layout(
        xaxis_title=f"judge score ({report['aggregation']}, mean over queries)"
                    + (f" — {hidden} labels on hover only (no room)" if hidden else ""),
        yaxis_title=f"reference rating ({report.get('reference_source') or 'none'})",
        height=460, margin={"t": 20, "l": 60, "r": 20, "b": 50})
    return fig
