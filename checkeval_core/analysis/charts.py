"""Charts as pure functions returning plotly figures (the page only renders them)."""

from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go


def _nan(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def correlation_bars(per_run: dict[str, Any], level: str = "sample_level",
                     coef: str = "spearman") -> go.Figure:
    """Bars per dimension, one trace per run (or metric), with bootstrap-CI error bars.
    Each bar's ``customdata`` is ``[run key, dimension]`` for click-through."""
    fig = go.Figure()
    for key, r in per_run.items():
        dims = list(r["dimensions"])
        vals = [_nan(r["dimensions"][d][level][coef]) for d in dims]
        lo = [_nan(r["dimensions"][d][level]["ci"][coef][0]) for d in dims]
        hi = [_nan(r["dimensions"][d][level]["ci"][coef][1]) for d in dims]
        plus = [(h - v) if h is not None and v is not None else None for h, v in zip(hi, vals)]
        minus = [(v - low) if low is not None and v is not None else None
                 for low, v in zip(lo, vals)]
        ns = [r["dimensions"][d][level]["n"] for d in dims]
        ci = [f"[{a:.2f}, {b:.2f}]" if a is not None and b is not None else "none"
              for a, b in zip(lo, hi)]
        fig.add_bar(name=r.get("label", key), x=dims, y=vals,
                    error_y={"type": "data", "array": plus, "arrayminus": minus,
                             "visible": any(p is not None for p in plus)},
                    customdata=[[key, d, n, c] for d, n, c in zip(dims, ns, ci)],
                    hovertemplate=f"%{{x}}: {coef} %{{y:.2f}}<br>95% CI %{{customdata[3]}}"
                                  f"<br>n = %{{customdata[2]}} {_UNITS.get(level, '')}"
                                  "<extra>%{fullData.name}</extra>")
    # a correlation lives in [-1, 1]: a fixed axis, so an almost empty chart never shows -1…4
    fig.update_layout(barmode="group", yaxis_title=f"{coef} ({level.replace('_', ' ')})",
                      yaxis_range=[-1.05, 1.05], legend_title="run", margin={"t": 30},
                      clickmode="event+select")
    return fig


_UNITS = {"sample_level": "documents", "dataset_level": "items", "system_level": "systems"}


def agreement_heatmap(pairwise: dict[str, float], labels: dict[str, str]) -> go.Figure:
    """Judge × judge Cohen κ (symmetric; diagonal 1)."""
    keys = list(labels)
    z = [[1.0 if a == b else _nan(pairwise.get(f"{a}-{b}", pairwise.get(f"{b}-{a}",
                                                                          float("nan"))))
          for b in keys] for a in keys]
    names = [labels[k] for k in keys]
    fig = go.Figure(go.Heatmap(z=z, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu",
                               text=[[f"{v:.2f}" if v is not None else "" for v in row]
                                     for row in z], texttemplate="%{text}",
                               customdata=[[[a, b] for b in keys] for a in keys]))
    fig.update_layout(title="Cohen's κ on Yes/No answers", margin={"t": 40},
                      yaxis_autorange="reversed")  # the diagonal runs top-left to bottom-right
    return fig


def stability_violin(per_run: dict[str, Any], level: str = "sample_level",
                     coef: str = "spearman") -> go.Figure:
    """Distribution of per-dimension correlations across runs, per method (CheckEval Fig. 2)."""
    fig = go.Figure()
    by: dict[str, list[float]] = {}
    for r in per_run.values():
        for d in r["dimensions"].values():
            v = d[level][coef]
            if not math.isnan(v):
                by.setdefault(r["method"], []).append(v)
    for method, vals in by.items():
        fig.add_violin(y=vals, name=method, box_visible=True, points="all")
    fig.update_layout(yaxis_title=coef, margin={"t": 30}, showlegend=False)
    return fig


def diagnostics_scatter(diag: list[dict[str, Any]]) -> go.Figure:
    """Yes-rate vs discrimination per question; flagged questions in red."""
    fig = go.Figure(go.Scatter(
        x=[d["yes_rate"] for d in diag], y=[_nan(d["discrimination"]) for d in diag],
        mode="markers", text=[d["question"] for d in diag],
        marker={"color": ["crimson" if d["flags"] else "steelblue" for d in diag]},
        customdata=[d["question_id"] for d in diag]))
    fig.update_layout(xaxis_title="yes-rate", yaxis_title="discrimination (Spearman with "
                      "human score)", margin={"t": 30})
    return fig
