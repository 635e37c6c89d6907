"""The coverage–agreement curve of an escalating run, as a pure function returning a plotly
figure (the Analysis and Versions pages render it)."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots


def _ok(x: Any) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def coverage_agreement_chart(view: dict[str, Any]) -> go.Figure:
    """Agreement with people (left axis, with 95 % group-resampled intervals) and judge time
    per decision (right axis) against the share the first judge keeps; the run's own
    threshold, the first judge alone (coverage 1) and the second alone (coverage 0) marked."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    pts = sorted([p for p in view["points"] if _ok(p["agreement"])],
                 key=lambda p: p["coverage"])
    err = [[p["agreement"] - p["ci"][0] if p["ci"] else 0 for p in pts],
           [p["ci"][1] - p["agreement"] if p["ci"] else 0 for p in pts]]
    fig.add_trace(go.Scatter(
        x=[p["coverage"] for p in pts], y=[p["agreement"] for p in pts], mode="lines+markers",
        name="cascade (held-out)" if view["which"] == "heldout" else f"cascade ({view['which']})",
        error_y={"type": "data", "symmetric": False, "array": err[1], "arrayminus": err[0]},
        hovertemplate="kept by A %{x:.0%} · agreement %{y:.3f}<extra></extra>"),
        secondary_y=False)
    cost = sorted([p for p in view["points"] if _ok(p["cost"])], key=lambda p: p["coverage"])
    fig.add_trace(go.Scatter(x=[p["coverage"] for p in cost], y=[p["cost"] for p in cost],
                             mode="lines", line={"dash": "dot", "color": "#888"},
                             name=view.get("cost_unit", "cost")), secondary_y=True)
    marks = (("run_point", "this run's threshold", "star", 14),
             ("a_alone", f"A alone: {view['judge_a']}", "circle", 11),
             ("b_alone", f"B alone: {view['judge_b']}", "square", 11))
    for key, name, symbol, size in marks:
        p = view.get(key)
        if p and _ok(p["agreement"]):
            fig.add_trace(go.Scatter(
                x=[p["coverage"]], y=[p["agreement"]], mode="markers", name=name,
                marker={"symbol": symbol, "size": size}), secondary_y=False)
    fig.update_layout(margin={"t": 30}, legend={"orientation": "h", "y": -0.2},
                      xaxis_title="share of decisions kept by the first judge (coverage)")
    fig.update_yaxes(title_text="agreement with people", secondary_y=False)
    fig.update_yaxes(title_text=view.get("cost_unit", "cost"), secondary_y=True,
                     tickformat=".2g", rangemode="tozero")
    fig.update_xaxes(tickformat=".0%", range=[-0.03, 1.03])
    return fig
