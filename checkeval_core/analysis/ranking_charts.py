"""Plotly figures for the Rankings page (pure functions of a rankings report).

Kept apart from :mod:`checkeval_core.analysis.charts` so the ranking features stay in one
place; the figures take the dict of :func:`checkeval_core.analysis.rankings.rankings_report`
and never touch the database.
"""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go


def _fmt(x: Any, nd: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{nd}f}"


def correlation_title(report: dict[str, Any]) -> str:
    """``ρ = 0.90 [0.70, 1.00] · τ = 0.76 [...] · n = 12 systems`` or the reason it is
    undefined."""
    rho, tau = report["spearman"], report["kendall"]
    if rho["value"] is None or (isinstance(rho["value"], float) and math.isnan(rho["value"])):
        return f"ρ, τ undefined: {rho['reason'] or 'no data'}"
    return (f"Spearman ρ = {_fmt(rho['value'])} [{_fmt(rho['ci'][0])}, {_fmt(rho['ci'][1])}]"
            f" · Kendall τ = {_fmt(tau['value'])} [{_fmt(tau['ci'][0])}, {_fmt(tau['ci'][1])}]"
            f" · n = {rho['n']} systems, 95% bootstrap over {report['n_queries']} queries")


def score_vs_reference(report: dict[str, Any]) -> go.Figure:
    """Scatter of each system's judge score (x, with its bootstrap interval) against its
    reference rating (y, with lower/upper when known), labelled with the system id; ρ/τ with
    n and intervals in the title. Systems without a reference rating are left out."""
    pts = [s for s in report["systems"] if s["reference"] is not None
           and not (isinstance(s["reference"], float) and math.isnan(s["reference"]))
           and s["score"] is not None and not math.isnan(s["score"])]
    x = [s["score"] for s in pts]
    y = [s["reference"] for s in pts]

    def err(lo_hi: list[Any], v: float, side: int) -> float:
        b = lo_hi[side]
        if b is None or (isinstance(b, float) and math.isnan(b)):
            return 0.0
        return abs(b - v)

    fig = go.Figure(go.Scatter(
        x=x, y=y, mode="markers+text", text=[s["system"] for s in pts],
        textposition="top center", textfont={"size": 10},
        marker={"size": 9},
        error_x={"type": "data", "symmetric": False,
                 "array": [err(s["ci"], s["score"], 1) for s in pts],
                 "arrayminus": [err(s["ci"], s["score"], 0) for s in pts], "thickness": 1},
        error_y={"type": "data", "symmetric": False,
                 "array": [err([s["reference_lower"], s["reference_upper"]], s["reference"], 1)
                           for s in pts],
                 "arrayminus": [err([s["reference_lower"], s["reference_upper"]],
                                    s["reference"], 0) for s in pts], "thickness": 1},
        hovertemplate="%{text}<br>judge score %{x:.3f}<br>reference %{y:.1f}<extra></extra>"))
    fig.update_layout(
        title={"text": correlation_title(report), "font": {"size": 13}},
        xaxis_title=f"judge score ({report['aggregation']}, mean over queries)",
        yaxis_title=f"reference rating ({report.get('reference_source') or 'none'})",
        height=460, margin={"t": 60, "l": 60, "r": 20, "b": 50})
    return fig


def elo_bars(report: dict[str, Any]) -> go.Figure:
    """The judge's Bradley–Terry Elo per system with its bootstrap interval."""
    sys_ = report["elo"]["systems"]
    fig = go.Figure(go.Bar(
        x=[s["rating"] for s in sys_], y=[s["system"] for s in sys_], orientation="h",
        error_x={"type": "data", "symmetric": False,
                 "array": [0 if s["ci"][1] is None or math.isnan(s["ci"][1]) else
                           s["ci"][1] - s["rating"] for s in sys_],
                 "arrayminus": [0 if s["ci"][0] is None or math.isnan(s["ci"][0]) else
                                s["rating"] - s["ci"][0] for s in sys_]}))
    fig.update_layout(title=f"Judge Elo (tie when |Δ| < {report['tie_margin']})",
                      yaxis={"autorange": "reversed"}, height=60 + 28 * max(len(sys_), 1),
                      margin={"t": 40, "l": 10, "r": 10, "b": 30})
    return fig
