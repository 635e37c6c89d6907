"""Agreement across judges per method (checklist vs Likert): which runs are compared, on which
items, and α against hand-computed values."""

import json
import math

import pytest

from checkeval_core.analysis.analysis_view import analysis_page
from checkeval_core.analysis.judge_agreement import judge_agreement
from checkeval_core.checklists.editing import add_question
from checkeval_core.checklists.versions import freeze
from checkeval_core.runs.selection import default_pair, default_runs
from checkeval_core.stats.bootstrap import MIN_GROUPS
from checkeval_core.store import now_iso
from tests.helpers import coherence_task

HUMAN = {f"g{i}": [1, 2, 3] for i in range(4)}


def _run(db, tid, vid, judge, method, agg, values, groups=None):
    """A completed run scoring item ``<group>-<k>`` with ``values[k]`` in every group."""
    groups = groups or list(HUMAN)
    pks = [db.execute("SELECT id FROM item WHERE task_id = ? AND item_id = ?",
                      [tid, f"{g}-{k}"]).fetchone()[0] for g in groups for k in range(3)]
    rid = db.execute("INSERT INTO run (task_id, checklist_version_id, judge_spec, method, "
                     "params, status, item_ids, created_at) VALUES (?, ?, ?, ?, ?, "
                     "'completed', ?, ?)", [tid, vid, judge, method,
                                            json.dumps({"aggregation": agg}), json.dumps(pks),
                                            now_iso()]).lastrowid
    for g in groups:
        for k, v in enumerate(values):
            pk = db.execute("SELECT id FROM item WHERE task_id = ? AND item_id = ?",
                            [tid, f"{g}-{k}"]).fetchone()[0]
            db.execute("INSERT INTO score (run_id, item_id, dimension, aggregation, value) "
                       "VALUES (?, ?, 'coherence', ?, ?)", [rid, pk, agg, float(v)])
    return rid


@pytest.fixture
def task(db):
    tid, d, s = coherence_task(db, "ja", HUMAN, ["s1", "s2", "s3"])
    add_question(db, tid, d, s, "Is the summary well structured?", status="kept")
    vid = freeze(db, "ja")["id"]
    return tid, vid


def _second_version(db, tid) -> int:
    d, s = db.execute("SELECT dimension_id, sub_dimension_id FROM question WHERE task_id = ?",
                      [tid]).fetchone()
    add_question(db, tid, d, s, "Is there a clear topic sentence?", status="kept")
    return freeze(db, "ja")["id"]


@pytest.mark.usefixtures("few_groups_allowed")
def test_checklist_judges_agreeing_and_likert_judges_disagreeing(db, task):
    tid, vid = task
    a = _run(db, tid, vid, "fake", "rocketeval", "mean_p_yes", [0.2, 0.5, 0.8])
    b = _run(db, tid, vid, "fake:other", "rocketeval", "mean_p_yes", [0.2, 0.5, 0.8])
    la = _run(db, tid, vid, "fake", "geval", "likert", [1, 2, 3])
    lb = _run(db, tid, vid, "fake:other", "geval", "likert", [3, 2, 1])
    res = judge_agreement(db, "ja", n_boot=50)
    rows = {r["method"]: r for r in res["rows"]}
    assert set(rows) == {"rocketeval", "geval"} and res["note"] is None
    ck, lk = rows["rocketeval"], rows["geval"]
    assert ck["runs"] == [a, b] and lk["runs"] == [la, lb]
    assert ck["alpha"] == pytest.approx(1.0) and ck["ci"] == pytest.approx([1.0, 1.0])
    # by hand, two coders, 12 units (1,3) (2,2) (3,1) ×4, N = 24 values:
    # D_o = 2·Σ(a−b)²/N = 2·32/24 = 8/3; D_e = Σ_{i≠j}(v_i−v_j)²/(N(N−1)) = 2·24·16/(24·23)
    # = 32/23; α = 1 − D_o/D_e = 1 − 23/12 = −11/12
    assert lk["alpha"] == pytest.approx(-11 / 12)
    # standardising changes nothing here (both judges already share mean and spread): the
    # z-scores (−a, a), (0, 0), (a, −a) with a = √1.5 give the same −11/12
    assert lk["alpha_z"] == pytest.approx(-11 / 12) and ck["alpha_z"] == pytest.approx(1.0)
    assert (lk["n_items"], lk["n_groups"], lk["n_systems"], lk["n_units"]) == (12, 4, 3, 12)
    assert lk["binary"] is False and "alpha_yes_no" not in lk
    assert ck["binary"] is True and ck["alpha_yes_no"] is None and ck["reason_yes_no"]


def test_one_judge_is_missing_with_its_reason_and_never_drawn(db, task):
    tid, vid = task
    _run(db, tid, vid, "fake", "rocketeval", "mean_p_yes", [0.2, 0.5, 0.8])
    _run(db, tid, vid, "fake", "rocketeval", "share_yes", [0.2, 0.5, 0.8])  # same judge again
    res = judge_agreement(db, "ja", n_boot=10)
    assert res["rows"] == [] and "≥ 2 different judges" in res["missing"]["rocketeval"]
    assert "2 run(s) of fake" in res["missing"]["rocketeval"] and "rocketeval" in res["note"]
    view = analysis_page(db, "ja", [], (), None, "sample_level", "spearman")
    assert view["judge_agreement"]["figure"] is None and view["judge_agreement"]["note"]


def test_compared_on_the_items_all_judges_share_and_fewer_groups_have_no_interval(db, task):
    tid, vid = task
    _run(db, tid, vid, "fake", "geval", "likert", [1, 2, 3])
    _run(db, tid, vid, "fake:other", "geval", "likert", [1, 2, 3], groups=["g0", "g1"])
    row = judge_agreement(db, "ja", n_boot=10)["rows"][0]
    assert (row["n_items"], row["n_groups"]) == (6, 2) and 2 < MIN_GROUPS
    assert row["alpha"] == pytest.approx(1.0) and row["ci"] is None
    assert row["reason"] == f"no interval: needs ≥ {MIN_GROUPS} groups (documents / contexts " \
                            "/ queries) (n=2)"


def test_runs_of_two_versions_are_not_compared_as_two_judges(db, task):
    tid, vid = task
    v2 = _second_version(db, tid)
    _run(db, tid, vid, "fake", "geval", "likert", [1, 2, 3])
    _run(db, tid, v2, "fake:other", "geval", "likert", [3, 2, 1])
    res = judge_agreement(db, "ja", n_boot=10)
    assert res["rows"] == [] and "geval" in res["missing"]


def test_the_chart_draws_a_bar_without_interval_hollow(db, task):
    from checkeval_core.analysis.charts import HOLLOW_NOTE, judge_agreement_bars

    tid, vid = task
    _run(db, tid, vid, "fake", "geval", "likert", [1, 2, 3], groups=["g0", "g1"])
    _run(db, tid, vid, "fake:other", "geval", "likert", [1, 3, 2], groups=["g0", "g1"])
    rows = judge_agreement(db, "ja", n_boot=10)["rows"]
    fig = judge_agreement_bars(rows)
    assert [t.name for t in fig.data] == ["α on the scores",
                                          "α on each judge's standardised scores", HOLLOW_NOTE]
    assert list(fig.data[0].x) == ["G-Eval (baseline) (v1)"]
    assert fig.data[0].marker.pattern.shape == ("/",) and not math.isnan(rows[0]["alpha"])


def test_an_offset_is_disagreement_on_scores_but_not_on_standardised_scores(db, task):
    """Two judges ordering the items alike, one 0.3 higher everywhere: raw α is low, the
    standardised α is 1; a judge constant on a dimension cannot be standardised there."""
    tid, vid = task
    _run(db, tid, vid, "fake", "rocketeval", "mean_p_yes", [0.40, 0.45, 0.50])
    _run(db, tid, vid, "fake:other", "rocketeval", "mean_p_yes", [0.70, 0.75, 0.80])
    row = judge_agreement(db, "ja", n_boot=20)["rows"][0]
    assert row["alpha"] < 0 and row["alpha_z"] == pytest.approx(1.0)
    assert row["z_note"] is None and row["n_units_z"] == 12
    _run(db, tid, vid, "fake", "geval", "likert", [5, 5, 5])
    _run(db, tid, vid, "fake:other", "geval", "likert", [3, 4, 5])
    lk = {r["method"]: r for r in judge_agreement(db, "ja", n_boot=20)["rows"]}["geval"]
    assert lk["alpha_z"] is None and lk["n_units_z"] == 0
    assert "coherence (a judge gave every item the same score there)" in lk["reason_z"]


def test_analysis_opens_on_the_runs_covering_most_items(db, task):
    tid, vid = task
    big = _run(db, tid, vid, "fake", "rocketeval", "mean_p_yes", [0.2, 0.5, 0.8])
    small = _run(db, tid, vid, "fake:other", "geval", "likert", [1, 2, 3], groups=["g0"])
    big2 = _run(db, tid, vid, "fake:other", "rocketeval", "mean_p_yes", [0.1, 0.5, 0.9])
    runs = [{"id": i} for i in (big2, small, big)]  # list_runs order: newest first
    assert default_runs(db, runs) == [big2, big]
    assert default_runs(db, []) == []


def test_compare_opens_on_a_version_comparison_of_the_newest_run(db, task):
    tid, vid = task
    v2 = _second_version(db, tid)
    base = _run(db, tid, vid, "fake", "rocketeval", "mean_p_yes", [0.2, 0.5, 0.8])
    other = _run(db, tid, vid, "fake:other", "geval", "likert", [1, 2, 3], groups=["g0"])
    newest = _run(db, tid, v2, "fake", "rocketeval", "mean_p_yes", [0.1, 0.5, 0.9])
    runs = [{"id": r, "judge_spec": j, "method": m} for r, j, m in (
        (newest, "fake", "rocketeval"), (other, "fake:other", "geval"),
        (base, "fake", "rocketeval"))]
    assert default_pair(db, runs) == (base, newest)
    # no run of the same judge and method: the one sharing most items with the newest
    assert default_pair(db, runs[:2] + [{"id": base, "judge_spec": "x", "method": "y"}]) \
        == (base, newest)


def test_interval_alpha_equals_the_krippendorff_package_and_scales_to_continuous_scores():
    """The closed form agrees with the package on data it can handle (missing values
    included) and takes continuous scores over thousands of units, where the package would
    build a values × values matrix per unit."""
    import krippendorff
    import numpy as np

    from checkeval_core.stats.agreement import krippendorff_alpha

    rng = np.random.default_rng(1)
    for _ in range(10):
        a = rng.normal(size=(3, 30))
        a[rng.random(a.shape) < 0.2] = np.nan
        assert krippendorff_alpha(a, "interval") == pytest.approx(
            krippendorff.alpha(reliability_data=a, level_of_measurement="interval"), abs=1e-9)
    base = rng.random(8000)
    near = np.vstack([base, base + rng.normal(0, 0.01, 8000)])
    assert krippendorff_alpha(near, "interval") > 0.99
    assert math.isnan(krippendorff_alpha([[1.0, 1.0], [1.0, 1.0]], "interval"))


@pytest.mark.usefixtures("few_groups_allowed")
def test_yes_no_alpha_counted_in_sql_equals_the_agreement_section(db, task):
    import random

    from checkeval_core.analysis.report import agreement

    tid, vid = task
    a = _run(db, tid, vid, "fake", "rocketeval", "mean_p_yes", [0.2, 0.5, 0.8])
    b = _run(db, tid, vid, "fake:other", "rocketeval", "mean_p_yes", [0.3, 0.5, 0.7])
    q = db.execute("SELECT id FROM question WHERE task_id = ?", [tid]).fetchone()[0]
    rnd = random.Random(3)
    for pk, in db.execute("SELECT id FROM item WHERE task_id = ?", [tid]).fetchall():
        for rid in (a, b):
            db.execute("INSERT INTO answer (run_id, item_id, question_id, dimension, verdict, "
                       "created_at) VALUES (?, ?, ?, 'coherence', ?, ?)",
                       [rid, pk, q, rnd.choice(["yes", "no", "yes", "invalid"]), now_iso()])
    row = {r["method"]: r for r in judge_agreement(db, "ja", n_boot=50)["rows"]}["rocketeval"]
    expected = agreement(db, [a, b])["krippendorff_alpha"]
    assert not math.isnan(expected)
    assert row["alpha_yes_no"] == pytest.approx(expected, abs=1e-12)
    assert row["ci_yes_no"] is not None and row["reason_yes_no"] is None
