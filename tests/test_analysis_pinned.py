"""The Analysis view's figures pinned on a small fake-judge database
(tests/fixtures/analysis_pinned.json), so that making the page fast cannot change a number:
every level × coefficient × dimension of each run, its interval and reasons, the agreement
among the selected runs, stability, the ensemble, the correlation table and chart of each
level, and ``analyze_runs`` (the CLI's JSON, which reads the same correlation code).

The pinned file was written by the implementation before the page was split into a fast
first chart and its intervals. To rewrite it on purpose (a deliberate change of output, said
in the commit): ``CHECKEVAL_PIN_ANALYSIS=1 pytest tests/test_analysis_pinned.py``. Numbers must
be equal exactly (NaN where NaN), after the JSON round trip the CLI's ``--json`` makes.
"""

from __future__ import annotations

import json
import math
import os

from checkeval_core.analysis.analysis_view import analysis_page, page_data
from checkeval_core.analysis.report import analyze_runs
from checkeval_core.runs import create_run, execute_run
from checkeval_core.stats.correlation import COEFFICIENTS, LEVELS
from checkeval_core.store import db_path
from tests.helpers import FIXTURES, fake_demo_runs

PINNED = FIXTURES / "analysis_pinned.json"
#: the (level, coefficient) pairs whose chart is pinned: each level and each coefficient once
DRAWN = [("sample_level", "spearman"), ("dataset_level", "kendall"), ("system_level", "pearson")]
#: 6 documents × 16 systems: enough groups for every interval
N_ITEMS = 96


def build(db) -> tuple[int, int, int]:
    """Two fake runs (rocketeval, checkeval) on the first 96 SummEval demo items and a third
    (rocketeval, 5 documents) that covers fewer items, so the shared-items rule is used."""
    a, b = fake_demo_runs(db, N_ITEMS)
    c = create_run(db, "summeval-demo", "fake", "rocketeval", limit=N_ITEMS - 16)
    execute_run(db_path(db), c)
    return a, b, c


def outputs(db) -> dict:
    a, b, c = build(db)
    out = {}
    cases = {"two": ([a, b], True, False), "two+ensemble": ([a, b], True, True),
             "three shared": ([a, b, c], True, False), "three own": ([a, b, c], False, False),
             "one": ([a], True, False)}
    for name, (runs, shared, ens) in cases.items():
        rep = page_data(db, "summeval-demo", runs, (), None, ens, "mean", 40, shared)
        out[name] = {"report": rep}
        for level in LEVELS:
            for coef in COEFFICIENTS:
                v = analysis_page(db, "summeval-demo", runs, (), None, level, coef,
                                  report=rep, judges={"rows": [], "note": "none",
                                                      "missing": {}})
                keys = ["table", "chart_note", "interval_note", "stability", "significance"]
                if (level, coef) in DRAWN:
                    keys.append("figure")
                if (level, coef) == DRAWN[0]:  # the same for every level and coefficient
                    keys += ["coverage_note", "comparable", "quality", "dimensions",
                             "agreement", "ensemble_notes", "unit"]
                out[name][f"{level} {coef}"] = {k: figures(v[k]) for k in keys}
    out["analyze_runs"] = analyze_runs(db, [a, b, c], n_boot=30, shared=True)
    return out


def figures(x):
    """Plotly figures replaced by their traces (what they draw), anywhere in ``x``."""
    if hasattr(x, "to_plotly_json"):
        return x.to_plotly_json()["data"]
    if isinstance(x, dict):
        return {k: figures(v) for k, v in x.items()}
    return x


def plain(x):
    """The JSON round trip, NaN kept (json writes it as NaN and reads it back)."""
    return json.loads(json.dumps(x, default=lambda o: o.tolist() if hasattr(o, "tolist")
                                 else str(o)))


def same(got, want, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), where
    else:
        assert type(got) is type(want) and got == want, (where, got, want)


def test_analysis_view_is_pinned(db):
    got = plain(outputs(db))
    if os.environ.get("CHECKEVAL_PIN_ANALYSIS"):
        PINNED.write_text(json.dumps(got, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(PINNED.read_text(encoding="utf-8"))
    same(got, want)
    # what the fixture is there to exercise: intervals exist, and the shared-items rule
    two = want["two"]["report"]["runs"]
    some = next(iter(two.values()))["dimensions"]["coherence"]
    assert all(not math.isnan(some[lv]["ci"]["spearman"][0]) for lv in LEVELS)
    assert want["three shared"]["report"]["coverage"]["shared"] is True
    assert want["three own"]["report"]["coverage"]["shared"] is False
    assert any(k.startswith("ensemble:") for k in want["two+ensemble"]["report"]["runs"])
