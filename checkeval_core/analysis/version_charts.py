"""The version-history chart as a pure function returning a plotly figure (the page renders it).

One line per judge · method · aggregation across checklist versions; error bars are the
group-bootstrap intervals. A point without an interval rests on too few groups to mean much
on its own, so it is drawn hollow and grey instead of as a solid point of the same weight.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.colors import qualitative

from checkeval_core.analysis.versions import EVIDENCE_NAMES, reference_rows, series_key
from checkeval_core.stats.values import Figure, nan_to_none

WEAK_COLOR = "#9e9e9e"
PART_NAMES = {"dev": "dev groups", "heldout": "held-out groups", "all": "all groups"}


_num = nan_to_none


def history_chart(report: dict[str, Any], part: str, evidence: str,
                  dimension: str, primary_only: bool = False) -> go.Figure:
    """Agreement per version on ``part`` for one evidence kind and dimension (with
    ``primary_only``, each run's own aggregation only).

    Each point's ``customdata`` is ``[N text, interval or reason, run label]``."""
    fig = go.Figure()
    by: dict[str, list[dict[str, Any]]] = {}
    statistic = ""
    for r in reference_rows(report, primary_only):
        if r["evidence"] == evidence and r["dimension"] == dimension and part in r["parts"]:
            by.setdefault(series_key(r), []).append(r)
            statistic = r["statistic"]
    palette = qualitative.Plotly
    for i, (series, rs) in enumerate(sorted(by.items())):
        rs.sort(key=lambda r: r["version"])
        figs = [r["parts"][part] for r in rs]
        color = palette[i % len(palette)]
        ys = [_num(f["value"]) for f in figs]
        plus = [(_num(f["ci"][1]) - y) if y is not None and not f["weak"] else None
                for f, y in zip(figs, ys)]
        minus = [(y - _num(f["ci"][0])) if y is not None and not f["weak"] else None
                 for f, y in zip(figs, ys)]
        custom = [[f"n = {f['n_items']} items, {f['n_groups']} groups, {f['n_systems']} "
                   "systems",
                   Figure.from_dict(f).ci_text(2, label="95% CI "),
                   r.get("run_label", f"#{r['run']}")]
                  for f, r in zip(figs, rs)]
        fig.add_scatter(
            name=series, x=[f"v{r['version']}" for r in rs], y=ys, mode="lines+markers",
            line={"color": color},
            marker={"size": 11, "symbol": ["circle-open" if f["weak"] else "circle"
                                           for f in figs],
                    "color": [WEAK_COLOR if f["weak"] else color for f in figs],
                    "line": {"width": 2}},
            error_y={"type": "data", "array": plus, "arrayminus": minus,
                     "visible": any(p is not None for p in plus), "color": color},
            customdata=custom,
            hovertemplate="%{x}: %{y:.3f}<br>%{customdata[1]}<br>%{customdata[0]}"
                          "<br>run %{customdata[2]}<extra>%{fullData.name}</extra>")
    bounded = evidence in ("human_scores", "reference_ratings")
    where = PART_NAMES.get(part, part)
    fig.update_layout(
        title={"text": f"{EVIDENCE_NAMES.get(evidence, evidence)} · {dimension} · read on "
                       f"{where}", "font": {"size": 14}},
        xaxis={"title": "checklist version", "type": "category",
               "categoryorder": "array",
               "categoryarray": [f"v{v['version']}" for v in report.get("versions", [])]},
        yaxis={"title": statistic or EVIDENCE_NAMES.get(evidence, evidence),
               "range": [-1.05, 1.05] if bounded else [-0.02, 1.02]},
        legend_title="judge · method · aggregation", margin={"t": 40, "b": 40}, height=380,
        showlegend=True)  # plotly hides the legend of a single series: it names the run
    return fig
