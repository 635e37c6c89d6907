"""Agreement with humans per frozen checklist version, checked against hand-computed values:
correlations with human scores (per part of the split), annotators' answers, pairwise
preferences and reference ratings; the diff of two versions beside Δ agreement; the CLI."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest

from checkeval_core import task_split as S
from checkeval_core.analysis import versions as V
from tests.helpers import VERSIONS_RHO_V1 as RHO_V1
from tests.helpers import build_versions_task as build
from tests.helpers import run_cli


def _row(rep, version, evidence="human_scores", aggregation="share_yes"):
    rs = [r for r in V.reference_rows(rep) if r["version"] == version
          and r["evidence"] == evidence and r["aggregation"] == aggregation]
    assert len(rs) == 1, rs
    return rs[0]


@pytest.mark.usefixtures("few_groups_allowed")
def test_human_score_agreement_per_version_hand_computed(db):
    build(db)
    rep = V.versions_report(db, "vt", n_boot=200)
    assert rep["parts"] == ["all"] and rep["evidence"] == ["human_scores"]
    assert [v["version"] for v in rep["versions"]] == [1, 2]
    a1 = _row(rep, 1)["parts"]["all"]
    assert a1["value"] == pytest.approx(-0.25)  # mean of 1, −1, −0.5, −0.5
    assert (a1["n_items"], a1["n_groups"], a1["n_systems"]) == (12, 4, 3)
    assert a1["ci"][0] <= -0.25 <= a1["ci"][1] and a1["weak"] is False
    a2 = _row(rep, 2)["parts"]["all"]
    assert a2["value"] == pytest.approx(1.0) and a2["ci"] == pytest.approx([1.0, 1.0])


def test_dev_and_heldout_read_their_own_documents(db):
    build(db)
    s = S.set_split(db, "vt", 0.5, seed=0)
    rep = V.versions_report(db, "vt", n_boot=100)
    assert rep["parts"] == ["dev", "heldout", "all"]
    assert rep["split"]["n_dev_groups"] == 2 and rep["split"]["n_heldout_groups"] == 2
    parts = _row(rep, 1)["parts"]
    for p in ("dev", "heldout"):
        expect = sum(RHO_V1[g] for g in s[p]) / len(s[p])
        assert parts[p]["value"] == pytest.approx(expect)
        assert parts[p]["n_groups"] == 2 and parts[p]["n_items"] == 6
    only = V.versions_report(db, "vt", split="heldout", n_boot=50)
    assert only["parts"] == ["heldout"]
    assert _row(only, 1)["parts"]["heldout"]["value"] == pytest.approx(parts["heldout"]["value"])
    S.clear_split(db, "vt")
    with pytest.raises(S.SplitError):
        V.versions_report(db, "vt", split="dev")


@pytest.mark.usefixtures("few_groups_allowed")
def test_one_document_has_no_interval_and_says_why(db):
    tid, r1, *_ = build(db)
    db.execute("DELETE FROM score WHERE run_id = ? AND item_id IN (SELECT id FROM item WHERE "
               "group_id != 'g0')", [r1])
    f = _row(V.versions_report(db, "vt", n_boot=50), 1)["parts"]["all"]
    assert f["value"] == pytest.approx(1.0) and f["n_groups"] == 1
    assert f["weak"] is True and "needs ≥ 2 groups (documents" in f["ci_reason"]
    assert all(math.isnan(x) for x in f["ci"])


def _annotate(db):
    """Annotations of q1 (see below) and both runs' answers to it; returns (r1, r2)."""
    from checkeval_core.store import now_iso

    tid, r1, r2, (q1, *_rest) = build(db)
    pk = {r[0]: r[1] for r in db.execute("SELECT item_id, id FROM item WHERE task_id = ?",
                                          [tid])}
    now = now_iso()
    # g0-0: majority yes; g0-1: no; g0-2: a tie (left out); g1-0: yes
    for who, item, v in [("ann", "g0-0", "yes"), ("bob", "g0-0", "yes"), ("cy", "g0-0", "no"),
                         ("ann", "g0-1", "no"), ("ann", "g0-2", "yes"), ("bob", "g0-2", "no"),
                         ("ann", "g1-0", "yes")]:
        db.execute("INSERT INTO annotation (task_id, annotator, kind, item_id, question_id, "
                   "value, created_at, updated_at) VALUES (?, ?, 'answer', ?, ?, ?, ?, ?)",
                   [tid, who, pk[item], q1, v, now, now])
    # the judge: yes, yes, no, no → hits on g0-0 only (g0-2 has no majority)
    for item, v in [("g0-0", "yes"), ("g0-1", "yes"), ("g0-2", "no"), ("g1-0", "no")]:
        db.execute("INSERT INTO answer (run_id, item_id, question_id, dimension, verdict, "
                   "created_at) VALUES (?, ?, ?, 'coherence', ?, ?)", [r1, pk[item], q1, v, now])
    # v2's run (q1 is in both versions): yes, no, yes on g0-0, g0-1, g1-0 → every one a hit
    for item, v in [("g0-0", "yes"), ("g0-1", "no"), ("g1-0", "yes")]:
        db.execute("INSERT INTO answer (run_id, item_id, question_id, dimension, verdict, "
                   "created_at) VALUES (?, ?, ?, 'coherence', ?, ?)", [r2, pk[item], q1, v, now])
    return r1, r2


@pytest.mark.usefixtures("few_groups_allowed")
def test_annotations_agreement_hand_computed(db):
    _annotate(db)
    rep = V.versions_report(db, "vt", n_boot=100)
    assert rep["evidence"] == ["human_scores", "annotations"]
    f = _row(rep, 1, "annotations", "answers")["parts"]["all"]
    assert f["value"] == pytest.approx(1 / 3) and f["n_decisions"] == 3
    assert (f["n_items"], f["n_groups"]) == (3, 2)
    # two groups: g0 1/2, g1 0/1 → resampled shares lie in [0, 1/2]
    assert 0.0 <= f["ci"][0] <= f["ci"][1] <= 0.5


@pytest.mark.usefixtures("few_groups_allowed")
def test_version_diff_beside_delta_with_paired_interval(db):
    build(db)
    d = V.version_diff(db, "vt", 1, 2, n_boot=100)
    assert (d["n_added"], d["n_removed"], d["n_edited"]) == (1, 0, 1)
    assert d["diff"]["edited"][0]["before"].startswith("Does each sentence")
    [x] = d["deltas"]
    assert x["delta"] == pytest.approx(1.25) and x["delta_common"] == pytest.approx(1.25)
    assert x["n_common_items"] == 12 and x["n_common_groups"] == 4
    assert x["ci"][0] <= 1.25 <= x["ci"][1] and x["ci_reason"] is None
    assert V.version_diff(db, "vt", 2, 2, n_boot=10)["deltas"][0]["delta"] == 0


def test_no_evidence_or_no_runs_say_why(db):
    from checkeval_core.datasets import import_file

    import_file(db, None, "bare", filename="i.jsonl",
                data=b'{"id": "a", "output": "x", "group_id": "g"}')
    rep = V.versions_report(db, "bare")
    assert rep["rows"] == [] and "no human evidence" in rep["reason"]
    build(db)
    db.execute("UPDATE run SET status = 'failed'")
    rep = V.versions_report(db, "vt")
    assert rep["rows"] == [] and "no completed run" in rep["reason"]


def test_ranking_task_preferences_and_reference_ratings(db):
    from tests.helpers import build_ranking_task

    build_ranking_task(db)
    rep = V.versions_report(db, "rank-demo", n_boot=100)
    assert set(rep["evidence"]) == {"preferences", "reference_ratings"}
    pref = _row(rep, 1, "preferences")["parts"]["all"]
    # decisive votes: g1 best>low (judge agrees), g2 best>mid (agrees), g4 low>mid (judge: mid)
    assert pref["value"] == pytest.approx(2 / 3) and pref["n_pairs"] == 3
    assert pref["n_groups"] == 3 and pref["n_systems"] == 3
    ref = _row(rep, 1, "reference_ratings")["parts"]["all"]
    assert ref["value"] == pytest.approx(1.0) and ref["n_systems"] == 3  # best > mid > low
    assert ref["n_groups"] == 4


@pytest.mark.usefixtures("few_groups_allowed")
def test_history_chart_draws_weak_points_hollow(db):
    from checkeval_core.analysis.version_charts import history_chart

    tid, r1, *_ = build(db)
    db.execute("DELETE FROM score WHERE run_id = ? AND item_id IN (SELECT id FROM item WHERE "
               "group_id != 'g0')", [r1])
    rep = V.versions_report(db, "vt", n_boot=50)
    fig = history_chart(rep, "all", "human_scores", "coherence")
    assert fig.layout.title.text == "human scores · coherence · read on all groups"
    [tr] = [t for t in fig.data if t.mode and "lines" in t.mode]
    assert list(tr.x) == ["v1", "v2"] and list(tr.y) == pytest.approx([1.0, 1.0])
    symbols = list(tr.marker.symbol)
    assert symbols == ["circle-open", "circle"]  # v1 rests on one document: no interval
    assert "1 groups" in tr.customdata[0][0] and "needs ≥ 2 groups (documents" in tr.customdata[0][1]


# -- CLI ------------------------------------------------------------------------------------------
def cli(db_path, *args):
    return run_cli(list(args), db=db_path)


def test_cli_versions_json(db, db_path):
    build(db)
    S.set_split(db, "vt", 0.5, seed=0)
    r = cli(db_path, "versions", "--task", "vt", "--json", "--bootstrap", "50")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["parts"] == ["dev", "heldout", "all"] and out["split"]["defined"] is True
    row = next(x for x in out["rows"] if x["version"] == 1 and x["aggregation"] == "share_yes")
    assert row["parts"]["all"]["value"] == pytest.approx(-0.25)
    assert {"value", "ci", "n_items", "n_groups", "n_systems", "reason", "ci_reason"} <= set(
        row["parts"]["dev"])
    r = cli(db_path, "versions", "--task", "vt", "--split", "heldout", "--diff", "1", "2",
            "--json", "--bootstrap", "20")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["parts"] == ["heldout"] and out["diff"]["n_edited"] == 1
    assert [x["part"] for x in out["diff"]["deltas"]] == ["heldout"]
    r = cli(db_path, "versions", "--task", "vt", "--diff", "1", "2", "--bootstrap", "20")
    assert r.returncode == 0 and "v1 → v2: 1 added, 0 removed, 1 edited" in r.stdout
    r = cli(db_path, "versions", "--task", "vt", "--split", "bogus")
    assert r.returncode == 2 and "dev, heldout or all" in r.stderr
    r = cli(db_path, "versions", "--task", "vt", "--diff", "1", "9")
    assert r.returncode == 2 and "no checklist version 9" in r.stderr


@pytest.mark.parametrize("level", ["sample_level", "dataset_level", "system_level"])
def test_paired_delta_matches_the_reference_paired_bootstrap(level):
    """The vectorised paired bootstrap gives the same Δ and interval as the reference
    implementation (:func:`checkeval_core.analysis.report.paired_bootstrap`) on one draw."""
    import numpy as np
    import pandas as pd

    from tests.reference_stats import paired_bootstrap

    rng = np.random.default_rng(1)
    rows = []
    for g in range(8):
        for k in range(6):
            h = rng.normal()
            rows.append({"item_pk": g * 10 + k, "group": f"g{g}", "system": f"s{k}",
                         "human": h, "a": h + rng.normal() * 2, "b": h + rng.normal() * 0.7})
    df = pd.DataFrame(rows)
    fa, fb = df.assign(metric=df["a"]), df.assign(metric=df["b"])
    d, ci = V.paired_delta_ci(fa, fb, level, "spearman", 300, 0)
    ref = paired_bootstrap(fb, fa, level, "spearman", n_boot=300, seed=0)
    assert d == pytest.approx(ref["difference"]) and ci == pytest.approx(ref["ci"])


def test_sample_level_fast_path_equals_the_correlation_helpers():
    """Per-group correlations computed once for all parts give the same value, skipped count
    and interval as :func:`level_value` / :func:`bootstrap_ci` on each part."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    rows = []
    for g in range(9):
        for k in range(5):
            h = 3.0 if g == 4 else float(rng.integers(1, 6))  # g4: constant humans → skipped
            rows.append({"item_pk": g * 10 + k, "group": f"g{g}", "system": f"s{k}",
                         "human": h, "metric": h + rng.normal()})
    df = pd.DataFrame(rows)
    from checkeval_core.stats.correlation import group_correlations

    groups = [f"g{g}" for g in range(9)]
    per = dict(zip(groups, group_correlations(df, groups, "metric", "kendall")))
    assert math.isnan(per["g4"])
    for part in (df, df[df["group"].isin(["g1", "g4", "g7", "g8"])], df[df["group"] == "g2"]):
        fast = V.correlation_figure(part, "sample_level", "kendall", 150, 3, per)
        slow = V.correlation_figure(part, "sample_level", "kendall", 150, 3)
        assert fast["ci"] == pytest.approx(slow["ci"], nan_ok=True)
        assert fast["value"] == pytest.approx(slow["value"], nan_ok=True)
        assert {k: v for k, v in fast.items() if k not in ("ci", "value")} == {
            k: v for k, v in slow.items() if k not in ("ci", "value")}


@pytest.mark.usefixtures("few_groups_allowed")
def test_annotation_delta_has_a_paired_interval(db):
    _annotate(db)
    d = V.version_diff(db, "vt", 1, 2, n_boot=200)
    x = next(x for x in d["deltas"] if x["evidence"] == "annotations")
    assert x["a"]["value"] == pytest.approx(1 / 3) and x["b"]["value"] == pytest.approx(1.0)
    assert x["delta"] == pytest.approx(2 / 3) and x["delta_common"] == pytest.approx(2 / 3)
    assert (x["n_common_units"], x["n_common_groups"], x["n_common_items"]) == (3, 2, 3)
    # resamples of {g0: +1 of 2, g1: +1 of 1}: 2/4, 2/3 or 2/2
    assert 0.5 - 1e-9 <= x["ci"][0] <= x["ci"][1] <= 1.0 + 1e-9 and x["ci_reason"] is None


@pytest.mark.usefixtures("few_groups_allowed")
def test_paired_ratio_ci_hand_computed():
    import pandas as pd

    ha = pd.DataFrame({"unit": [1, 2, 3, 4], "group": ["x", "x", "y", "y"],
                       "hit": [1, 0, 0, 0], "items": [(1,), (2,), (3,), (4,)]})
    hb = pd.DataFrame({"unit": [1, 2, 3, 9], "hit": [1, 1, 1, 1]})
    r = V.paired_ratio_ci(ha, hb, 500, 0)
    # shared units 1, 2, 3: a 1/3, b 3/3 → Δ 2/3; groups x (+1 of 2), y (+1 of 1)
    assert r["delta_common"] == pytest.approx(2 / 3) and r["n_common_units"] == 3
    assert r["ci"][0] == pytest.approx(0.5) and r["ci"][1] == pytest.approx(1.0)
    one = V.paired_ratio_ci(ha[ha["group"] == "x"], hb, 100, 0)
    assert one["delta_common"] == pytest.approx(0.5)
    assert one["ci_reason"] == "no paired interval: needs ≥ 2 groups (documents / contexts / " \
                               "queries) (n=1)"


def test_each_runs_own_aggregation_by_default_on_the_page(db):
    """A run scored under two aggregations gives two series; the page's default keeps only
    the aggregation the run was started with."""
    _tid, r1, _r2, _q = build(db)
    db.execute("INSERT INTO score (run_id, item_id, dimension, aggregation, value) SELECT "
               "run_id, item_id, dimension, 'mean_p_yes', 1 - value FROM score WHERE run_id = ?",
               [r1])
    rep = V.versions_report(db, "vt", n_boot=20)
    aggs = {(r["version"], r["aggregation"], r["primary"]) for r in V.reference_rows(rep)}
    assert {(1, "share_yes", True), (1, "mean_p_yes", False)} <= aggs
    assert {r["aggregation"] for r in V.reference_rows(rep, primary_only=True)
            if r["version"] == 1} == {"share_yes"}
    assert {r["aggregation"] for r in V.table_rows(rep, "all", primary_only=True)} \
        == {"share_yes"}


def test_a_single_series_keeps_its_legend(db):
    from checkeval_core.analysis.version_charts import history_chart

    build(db)
    fig = history_chart(V.versions_report(db, "vt", n_boot=20), "all", "human_scores",
                        "coherence", primary_only=True)
    assert len({t.name for t in fig.data if t.name}) == 1 and fig.layout.showlegend is True


def test_the_versions_report_reads_the_store_only_through_its_readers():
    """versions.py computes figures, deltas and display rows; every SQL of the report is in
    version_readers.py (a query run or a row read in versions.py fails here)."""
    tree = ast.parse(Path(V.__file__).read_text(encoding="utf-8"))
    calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)]
    named = {f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "") for f in calls}
    assert not named & {"execute", "executemany", "rows", "fetchone", "fetchall"}, named
    sql = [c.value for c in ast.walk(tree) if isinstance(c, ast.Constant)
           and isinstance(c.value, str) and "SELECT " in c.value.upper()]
    assert sql == []
