"""The Analysis view's figures pinned on a small fake-judge database
(tests/fixtures/analysis_pinned.json), so that making the page fast cannot change a number:
every level × coefficient × dimension of each run, its interval and reasons, the agreement
among the selected runs, stability, the ensemble, the correlation table and chart of each
level, and ``analyze_runs`` (the CLI's JSON, which reads the same correlation code).

The pinned file was written by the implementation before the page was split into a fast
first chart and its intervals. To rewrite it on purpose (a deliberate change of output, said
in the commit): ``CHECKEVAL_PIN_ANALYSIS=1 pytest tests/test_analysis_pinned.py``. Keys, types,
lengths and strings must be equal exactly, NaN where NaN, after the JSON round trip the CLI's
``--json`` makes; floats within ``helpers.PINNED_REL`` (1e-9 relative): the fixture was written
on one CPU, and the last bits of a numpy / scipy reduction depend on the order the CPU's vector
code sums in (an AMD EPYC gave −0.05195833376287648 for a pinned −0.051958333762876466).
"""

from __future__ import annotations

import json
import math
import os

from checkeval_core.analysis.analysis_view import analysis_page, first_chart, page_data
from checkeval_core.analysis.frames import PENDING
from checkeval_core.analysis.report import analyze_runs, page_points
from checkeval_core.runs import create_run, execute_run
from checkeval_core.stats.correlation import COEFFICIENTS, LEVELS
from checkeval_core.store import db_path
from tests.helpers import FIXTURES, fake_demo_runs, same_pinned

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


def test_analysis_view_is_pinned(db):
    got = plain(outputs(db))
    if os.environ.get("CHECKEVAL_PIN_ANALYSIS"):
        PINNED.write_text(json.dumps(got, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(PINNED.read_text(encoding="utf-8"))
    same_pinned(got, want)
    # what the fixture is there to exercise: intervals exist, and the shared-items rule
    two = want["two"]["report"]["runs"]
    some = next(iter(two.values()))["dimensions"]["coherence"]
    assert all(not math.isnan(some[lv]["ci"]["spearman"][0]) for lv in LEVELS)
    assert want["three shared"]["report"]["coverage"]["shared"] is True
    assert want["three own"]["report"]["coverage"]["shared"] is False
    assert any(k.startswith("ensemble:") for k in want["two+ensemble"]["report"]["runs"])


def test_first_chart_points_equal_the_full_view(db):
    """The point figures the page draws first are the full view's, for every level and
    coefficient: values, n, skipped documents, reasons, support, labels and coverage."""
    a, b, c = build(db)
    for runs, shared in (([a, b], True), ([a, b, c], True), ([a, b, c], False), ([a], True)):
        full = page_data(db, "summeval-demo", runs, (), None, False, "mean", 20, shared)
        for level in LEVELS:
            for coef in COEFFICIENTS:
                pts = page_points(db, "summeval-demo", runs, (), None, level, coef, shared)
                assert pts["coverage"] == {k: v for k, v in full["coverage"].items()
                                           if k != "shared_item_pks"}
                assert list(pts["runs"]) == list(full["runs"])
                for key, r in pts["runs"].items():
                    f = full["runs"][key]
                    assert {k: r[k] for k in ("judge", "method", "aggregation", "label",
                                              "support")} == \
                        {k: f[k] for k in ("judge", "method", "aggregation", "label",
                                           "support")}
                    assert list(r["dimensions"]) == list(f["dimensions"])
                    for dim, d in r["dimensions"].items():
                        e, fe = d[level], f["dimensions"][dim][level]
                        same_pinned(plain([e[coef], e["n"], e["skipped"], e["reasons"][coef]]),
                             plain([fe[coef], fe["n"], fe["skipped"], fe["reasons"][coef]]),
                             f"{runs} {level} {coef} {key} {dim}")
                        assert d["support"] == f["dimensions"][dim]["support"]
                        assert e["ci_reasons"][coef] == PENDING
                # the first chart draws those values: the full chart's bars, without intervals
                first = first_chart(db, "summeval-demo", runs, (), None, level, coef,
                                    shared=shared)
                view = analysis_page(db, "summeval-demo", runs, (), None, level, coef,
                                     report=full, judges={"rows": [], "note": "none",
                                                          "missing": {}})
                assert (first["chart_note"], first["coverage_note"], first["comparable"]) == \
                    (view["chart_note"], view["coverage_note"], view["comparable"])
                if view["figure"] is None:
                    continue
                got = [t for t in first["figure"].data if t.customdata is not None]
                want = [t for t in view["figure"].data if t.customdata is not None]
                assert [(t.name, t.x) for t in got] == [(t.name, t.x) for t in want]
                for g, w in zip(got, want):
                    same_pinned(plain(list(g.y)), plain(list(w.y)))
                    assert [list(x[:3]) + list(x[4:]) for x in g.customdata] == \
                        [list(x[:3]) + list(x[4:]) for x in w.customdata]
                    assert all(x[3] == PENDING for x in g.customdata)
                    assert not g.error_y.visible


def _agreement_by_dicts(db, run_ids, item_pks=None) -> dict:
    """The Yes/No part of ``report.agreement`` as it was computed with a dict of dicts per
    (item, question, unit) — the reference the array version must equal exactly."""
    from collections import defaultdict
    from itertools import combinations

    from checkeval_core.stats.agreement import (
        alpha_binary_ci,
        cohen_kappa,
        fleiss_from_labels,
        krippendorff_alpha,
    )
    from checkeval_core.tasks import item_groups

    marks = ",".join("?" * len(run_ids))
    labels = defaultdict(dict)
    for r in db.execute(f"SELECT run_id, item_id, question_id, unit, verdict FROM answer WHERE "
                        f"run_id IN ({marks}) AND verdict != 'invalid'", run_ids):
        if item_pks is None or r[1] in item_pks:
            labels[(r[1], r[2], r[3])][r[0]] = r[4]
    units = [k for k, v in labels.items() if len(v) >= 2]
    code = {"yes": 1.0, "no": 0.0}
    matrix = [[code[labels[u][rid]] if rid in labels[u] else math.nan for u in units]
              for rid in run_ids]
    pairs = {}
    for a, b in combinations(run_ids, 2):
        common = [u for u in units if a in labels[u] and b in labels[u]]
        la, lb = [labels[u][a] for u in common], [labels[u][b] for u in common]
        pairs[f"{a}-{b}"] = {"kappa": cohen_kappa(la, lb), "n": len(common),
                             "agree": sum(x == y for x, y in zip(la, lb))}
    where = item_groups(db, {u[0] for u in units})
    return {"krippendorff_alpha": krippendorff_alpha(matrix) if units else math.nan,
            "fleiss_kappa": fleiss_from_labels([list(labels[u].values()) for u in units])[0],
            "n_units": len(units),
            "n_agree": sum(len(set(labels[u].values())) == 1 for u in units),
            "pairwise": pairs, "n_items": len(where),
            "ci": alpha_binary_ci({u: labels[u] for u in units},
                                  {u: where[u[0]][0] for u in units})["ci"]}


def test_agreement_equals_the_dict_reference(db):
    """The agreement among runs, read into arrays, equals the dict-by-dict computation
    exactly: Yes/No units with SEAL units, invalid answers, answers only one run has, item
    subsets, another run order, a run listed twice."""
    from checkeval_core.analysis.report import agreement
    from tests.helpers import random_two_runs as build_random

    a, b = build_random(db)
    n_items = db.execute("SELECT COUNT(*) FROM item").fetchone()[0]
    for runs, pks in (([a, b], None), ([b, a], None), ([a, b], set(range(1, n_items, 3))),
                      ([a, a, b], None), ([a, b], set())):
        got, want = agreement(db, runs, pks), _agreement_by_dicts(db, runs, pks)
        same_pinned(plain({"krippendorff_alpha": got["krippendorff_alpha"],
                    "fleiss_kappa": got["fleiss_kappa"], "n_units": got["n_units"],
                    "n_agree": got["n_agree"],
                    "pairwise": {k: {f: v[f] for f in ("kappa", "n", "agree")}
                                 for k, v in got["pairwise"].items()},
                    "n_items": got["support"]["n_items"],
                    "ci": got["ci"]["krippendorff_alpha"]}), plain(want), f"{runs} {pks}")
    assert want["n_units"] == 0 and _agreement_by_dicts(db, [a, b])["n_units"] > 100
