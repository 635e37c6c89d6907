"""Unit tests of what the figures rest on: hollow bars without an interval, labels that never
overlap, comparison on shared items, the group interval of α, stability across distinct
judges (pure functions on plotly figures and small frames)."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd

from checkeval_core.analysis import charts, ranking_charts
from checkeval_core.analysis.frames import correlation_report
from checkeval_core.analysis.notes import stability_note
from checkeval_core.analysis.report import (
    coverage,
    stability,
    stability_points,
)
from checkeval_core.stats.agreement import alpha_binary_ci, krippendorff_alpha


def _frame(groups: int, per: int, seed: int = 0, start: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = groups * per
    human = rng.integers(1, 6, n).astype(float)
    return pd.DataFrame({"item_pk": range(start, start + n),
                         "group": [f"d{i // per}" for i in range(n)],
                         "system": [f"s{i % per}" for i in range(n)], "dimension": "x",
                         "metric": human + rng.normal(0, 1, n), "human": human})


def test_bar_without_interval_is_hollow_and_explained():
    per_run = {"1": {"label": "#1 one doc", **correlation_report(_frame(1, 8), n_boot=20)},
               "2": {"label": "#2 six docs", **correlation_report(_frame(6, 8), n_boot=20)}}
    fig = charts.correlation_bars(per_run)
    one, six = fig.data[0], fig.data[1]
    assert list(one.marker.pattern.shape) == ["/"] and one.marker.color[0].endswith(", 0.3)")
    assert list(one.marker.line.width) == [charts.HOLLOW["line_width"]]
    assert six.marker.pattern.shape is None and six.marker.color == charts.PALETTE[1]
    assert six.error_y.visible and six.error_y.array[0] is not None
    legend = [t for t in fig.data if t.name == charts.HOLLOW_NOTE]
    assert len(legend) == 1 and legend[0].showlegend
    # the support rides along for the hover: items, groups, systems
    assert list(six.customdata[0][4:]) == [48, 6, 8]
    # all bars with an interval: no hollow legend entry
    only = charts.correlation_bars({"2": per_run["2"]})
    assert not [t for t in only.data if t.name == charts.HOLLOW_NOTE]


def test_shared_items_comparison():
    a, b = _frame(2, 8), _frame(2, 8).iloc[:3]
    cov = coverage({"1": a, "2": b})
    assert cov["shared"] and cov["n_shared_items"] == 3 and cov["n_shared_groups"] == 1
    assert cov["runs"]["1"]["n_items"] == 16 and cov["runs"]["2"]["n_items"] == 3
    assert "computed on the 3 items over 1 group(s) that all of them share" in cov["note"]
    same = coverage({"1": a, "2": a.copy()})
    assert same["same_items"] and not same["shared"] and same["note"] is None
    apart = coverage({"1": a, "2": _frame(2, 8, start=100)})
    assert not apart["shared"] and apart["n_shared_items"] == 0
    assert "share no item" in apart["note"] and "NOT comparable" in apart["note"]


def test_alpha_interval_resamples_groups_and_matches_the_library():
    random.seed(3)
    labels, group = {}, {}
    for u in range(200):
        labels[u] = {r: ("yes" if random.random() < 0.4 + 0.4 * (u % 2) else "no")
                     for r in range(3) if random.random() < 0.9}
        group[u] = u // 20
    units = [u for u in labels if len(labels[u]) >= 2]
    mat = [[{"yes": 1.0, "no": 0.0}[labels[u][r]] if r in labels[u] else np.nan for u in units]
           for r in range(3)]
    point = krippendorff_alpha(mat)
    ci = alpha_binary_ci({u: labels[u] for u in units}, group)
    assert ci["reason"] is None and ci["ci"][0] < point < ci["ci"][1]
    one = alpha_binary_ci({u: labels[u] for u in units}, dict.fromkeys(group, 0))
    assert math.isnan(one["ci"][0]) and one["reason"].startswith("no interval: needs ≥ 6 groups")


def test_stability_counts_distinct_judges_only():
    rep = correlation_report(_frame(3, 8), n_boot=0)
    same = {"1": {"method": "m", "judge": "j", **rep}, "2": {"method": "m", "judge": "j", **rep}}
    assert "come from one judge (j)" in stability_note(same)
    assert stability(same)["m"]["n_judges"] == 1
    assert stability_points(same) == {"m": stability_points({"1": same["1"]})["m"]}
    two = {**same, "3": {"method": "m", "judge": "k", **rep}}
    assert stability_note(two) is None
    fig = charts.stability_violin(stability_points(two))
    assert list(fig.layout.yaxis.range) == [-1.05, 1.05] and fig.data[0].spanmode == "hard"
    assert len(fig.data[0].y) == 2  # one value per judge (one dimension)


def test_diagnostics_scatter_has_a_legend():
    diag = [{"question_id": i, "question": f"q{i}", "yes_rate": i / 4, "discrimination": 0.1,
             "flags": ["never varies"] if i == 0 else [], "weak_signs": ["judges disagree"]
             if i == 1 else []} for i in range(4)]
    fig = charts.diagnostics_scatter(diag)
    assert fig.layout.showlegend is True
    assert [t.name for t in fig.data] == ["flagged (1)", "sign on too few groups (not flagged) "
                                          "(1)", "not flagged (2)"]
    assert list(fig.layout.yaxis.range) == [-1.05, 1.05]


def test_scatter_labels_never_overlap():
    rng = random.Random(0)
    n = 25  # many systems with close scores, as on AlpacaEval
    xs = [0.55 + rng.random() * 0.08 for _ in range(n)]
    ys = [1000 + rng.random() * 300 for _ in range(n)]
    names = [f"model-{i}-instruct-v2" for i in range(n)]
    layout = ranking_charts.label_layout(xs, ys, names)
    boxes = [b for _, b in layout if b is not None]
    assert boxes and all(not ranking_charts._overlap(a, b)
                         for i, a in enumerate(boxes) for b in boxes[i + 1:])
    systems = [{"system": s, "score": x, "ci": [x - 0.01, x + 0.01], "reference": y,
                "reference_lower": None, "reference_upper": None}
               for s, x, y in zip(names, xs, ys)]
    fig = ranking_charts.score_vs_reference({"systems": systems, "aggregation": "mean_p_yes",
                                             "reference_source": "arena"})
    sc = fig.data[0]
    shown = [t for t in sc.text if t]
    assert len(shown) == len(boxes)
    assert list(sc.hovertext) == names  # every system still named on hover
    if len(shown) < n:
        assert "labels on hover only" in fig.layout.xaxis.title.text
    assert not (fig.layout.title.text or "")  # ρ/τ are printed once, by the page
    # three far-apart systems: every label is shown
    few = ranking_charts.label_layout([0.1, 0.5, 0.9], [1, 2, 3], ["a", "b", "c"])
    assert all(p is not None for p, _ in few)
