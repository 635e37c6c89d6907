"""Charts as pure functions returning plotly figures (the page only renders them)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from checkeval_core.stats.values import fmt_ci, nan_to_none

_nan = nan_to_none


#: How a value without an interval is drawn: hatched, pale, outlined — never with the weight
#: of a bar that has one.
HOLLOW = {"shape": "/", "opacity": 0.3, "line_width": 1.5}
HOLLOW_NOTE = "hatched, pale: no interval"
#: Plotly's default colour sequence, set explicitly so a hollow bar can be a pale version of
#: its run's colour.
PALETTE = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692",
           "#B6E880", "#FF97FF", "#FECB52")


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r}, {g}, {b}, {alpha})"


def _hollow_legend(fig: go.Figure) -> None:
    """A legend entry only: explains the hatched bars where the reader looks for meaning."""
    fig.add_bar(name=HOLLOW_NOTE, x=[None], y=[None], showlegend=True, hoverinfo="skip",
                marker={"color": _rgba("#808080", HOLLOW["opacity"]),
                        "pattern": {"shape": HOLLOW["shape"], "fgcolor": "#808080",
                                    "solidity": 0.3},
                        "line": {"color": "#808080", "width": HOLLOW["line_width"]}})


def correlation_bars(per_run: dict[str, Any], level: str = "sample_level",
                     coef: str = "spearman", pending: bool = False) -> go.Figure:
    """Bars per dimension, one trace per run (or metric), with bootstrap-CI error bars.
    Each bar's ``customdata`` is ``[run key, dimension, n, interval, items, groups,
    systems]`` for click-through and hover.

    A value without an interval (fewer groups than the bootstrap needs, or too few varied
    ones) is drawn hollow: hatched, at low opacity, outlined; a legend entry says what that
    means. ``pending``: the intervals are still being computed (the point figures of
    ``report.page_points``): no bar is hollow, the hover says so."""
    fig = go.Figure()
    any_hollow = False
    for key, r in per_run.items():
        dims = list(r["dimensions"])
        vals = [_nan(r["dimensions"][d][level][coef]) for d in dims]
        lo = [_nan(r["dimensions"][d][level]["ci"][coef][0]) for d in dims]
        hi = [_nan(r["dimensions"][d][level]["ci"][coef][1]) for d in dims]
        plus = [(h - v) if h is not None and v is not None else None for h, v in zip(hi, vals)]
        minus = [(v - low) if low is not None and v is not None else None
                 for low, v in zip(lo, vals)]
        ns = [r["dimensions"][d][level]["n"] for d in dims]
        sup = [r["dimensions"][d].get("support") or {} for d in dims]
        ci = [fmt_ci((a, b), reason=(r["dimensions"][d][level].get("ci_reasons") or {}).get(coef))
              for a, b, d in zip(lo, hi, dims)]
        hollow = [v is not None and (a is None or b is None) and not pending
                  for v, a, b in zip(vals, lo, hi)]
        any_hollow = any_hollow or any(hollow)
        color = PALETTE[len(fig.data) % len(PALETTE)]
        marker: dict[str, Any] = {"color": color}
        if any(hollow):
            # per-point colours (not a per-point opacity array, which breaks plotly's
            # click selection): pale, hatched and outlined where there is no interval
            marker = {"color": [_rgba(color, HOLLOW["opacity"]) if h else color
                                for h in hollow],
                      "pattern": {"shape": [HOLLOW["shape"] if h else "" for h in hollow],
                                  "fgcolor": color, "solidity": 0.3},
                      "line": {"color": color,
                               "width": [HOLLOW["line_width"] if h else 0 for h in hollow]}}
        fig.add_bar(name=r.get("label", key), x=dims, y=vals, marker=marker,
                    error_y={"type": "data", "array": plus, "arrayminus": minus,
                             "visible": any(p is not None for p in plus)},
                    customdata=[[key, d, n, c, s.get("n_items", ""), s.get("n_groups", ""),
                                 s.get("n_systems", "")]
                                for d, n, c, s in zip(dims, ns, ci, sup)],
                    hovertemplate=f"%{{x}}: {coef} %{{y:.2f}}<br>95% CI %{{customdata[3]}}"
                                  f"<br>n = %{{customdata[2]}} {_UNITS.get(level, '')}"
                                  "<br>%{customdata[4]} items · %{customdata[5]} groups · "
                                  "%{customdata[6]} systems<extra>%{fullData.name}</extra>")
    if any_hollow:
        _hollow_legend(fig)
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


def stability_violin(points: dict[str, list[dict[str, Any]]], coef: str = "spearman"
                     ) -> go.Figure:
    """Distribution of per-dimension correlations across distinct judges, per method
    (CheckEval Fig. 2); ``points`` is :func:`checkeval_core.analysis.report.stability_points`.
    The violins stop at the data (a kernel's tail past ±1 would draw impossible values) and
    the axis at ±1."""
    fig = go.Figure()
    for method, pts in points.items():
        fig.add_violin(y=[p["value"] for p in pts], name=method, box_visible=True,
                       points="all", spanmode="hard",
                       text=[f"{p['judge']} · {p['dimension']}" for p in pts],
                       hovertemplate="%{text}: %{y:.2f}<extra>%{fullData.name}</extra>")
    fig.update_layout(yaxis_title=coef, yaxis_range=[-1.05, 1.05], margin={"t": 30},
                      showlegend=False)
    return fig


def diagnostics_scatter(diag: list[dict[str, Any]]) -> go.Figure:
    """Yes-rate vs discrimination per question, one legend entry per kind: flagged,
    signs on too few groups to flag, no sign. Axes stop at their bounds ([0, 1], [-1, 1])."""
    kinds = (("flagged", "crimson", lambda d: bool(d["flags"])),
             ("sign on too few groups (not flagged)", "orange",
              lambda d: not d["flags"] and bool(d.get("weak_signs"))),
             ("not flagged", "steelblue", lambda d: not d["flags"] and not d.get("weak_signs")))
    fig = go.Figure()
    for name, color, test in kinds:
        part = [d for d in diag if test(d)]
        if not part:
            continue
        fig.add_scatter(
            x=[_nan(d["yes_rate"]) for d in part], y=[_nan(d["discrimination"]) for d in part],
            mode="markers", name=f"{name} ({len(part)})", marker={"color": color},
            text=[d["question"] for d in part], customdata=[d["question_id"] for d in part],
            hovertemplate="#%{customdata}: %{text}<br>yes-rate %{x:.2f} · discrimination "
                          "%{y:.2f}<extra>%{fullData.name}</extra>")
    fig.update_layout(xaxis_title="yes-rate", xaxis_range=[-0.03, 1.03],
                      yaxis_title="discrimination (Spearman with human score)",
                      yaxis_range=[-1.05, 1.05], margin={"t": 30}, showlegend=True,
                      legend_title="question")
    return fig


def judge_agreement_bars(rows: list[dict[str, Any]]) -> go.Figure:
    """Krippendorff α across judges per method (CheckEval's checklist-vs-Likert comparison):
    one bar on the raw scores, one on each judge's standardised scores; ``rows`` from
    :func:`checkeval_core.analysis.judge_agreement.judge_agreement`. A bar without an interval
    is drawn hollow; each bar's hover names its judges, items, groups and systems."""
    fig = go.Figure()
    hollow_any = False
    series = (("alpha", "ci", "reason", "on the scores"),
              ("alpha_z", "ci_z", "reason_z", "on each judge's standardised scores"))
    for i, (key, ci_key, why_key, name) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        xs, ys, plus, minus, hollow, data = [], [], [], [], [], []
        for r in rows:
            v, ci = r.get(key), r.get(ci_key)
            xs.append(f"{r['label']} (v{r['version']})")
            ys.append(v)
            plus.append(ci[1] - v if ci and v is not None else None)
            minus.append(v - ci[0] if ci and v is not None else None)
            hollow.append(v is not None and not ci)
            data.append([", ".join(r["judges"]),
                         f"{len(r['judges'])} judges · {r['n_items']} items · "
                         f"{r['n_groups']} groups · {r['n_systems']} systems",
                         fmt_ci(ci, reason=r.get(why_key))])
        hollow_any = hollow_any or any(hollow)
        marker: dict[str, Any] = {"color": color}
        if any(hollow):
            marker = {"color": [_rgba(color, HOLLOW["opacity"]) if h else color for h in hollow],
                      "pattern": {"shape": [HOLLOW["shape"] if h else "" for h in hollow],
                                  "fgcolor": color, "solidity": 0.3},
                      "line": {"color": color,
                               "width": [HOLLOW["line_width"] if h else 0 for h in hollow]}}
        fig.add_bar(name=f"α {name}", x=xs, y=ys, marker=marker, customdata=data,
                    error_y={"type": "data", "array": plus, "arrayminus": minus,
                             "visible": any(p is not None for p in plus)},
                    hovertemplate="α %{y:.2f}<br>95% CI %{customdata[2]}<br>%{customdata[1]}"
                                  "<br>judges: %{customdata[0]}<extra>%{fullData.name}</extra>")
    if hollow_any:
        _hollow_legend(fig)
    fig.update_layout(barmode="group", yaxis_title="Krippendorff α across judges",
                      yaxis_range=[-1.05, 1.05], margin={"t": 30}, legend_title="α",
                      showlegend=True)
    return fig
