"""The quality-push features: cross-question ridge calibration (out of sample by group) and
ensembles of runs (mean of standardised scores, with member agreement)."""

import math

import numpy as np
import pytest

from checkeval_core.analysis.ensemble import analyze_ensemble, ensemble_frame
from checkeval_core.runs.options import parse_params
from checkeval_core.runs.score_math import calibrated_scores
from tests.helpers import fake_demo_runs, run, scores_of


def test_calibration_learns_a_signal_from_other_groups():
    rng = np.random.default_rng(0)
    n_g, per = 6, 8
    groups = np.repeat([f"g{k}" for k in range(n_g)], per)
    signal = rng.normal(size=n_g * per)
    # question 0 carries the label (negatively), question 1 is noise, question 2 is a
    # per-group offset only
    X = np.column_stack([0.5 - 0.1 * signal, rng.uniform(size=n_g * per),
                         np.repeat(rng.uniform(size=n_g), per)])
    y = 3 + signal
    pred = calibrated_scores(X, y, groups)
    assert np.isfinite(pred).all()
    assert np.corrcoef(pred, y)[0, 1] > 0.9  # learns the sign and the useful question


def test_calibration_is_out_of_sample():
    # labels of one group are wildly different: if that group's own labels leaked into its
    # model, its predictions would follow them; they must not change when only they change
    groups = np.repeat(["a", "b", "c", "d"], 5)
    X = np.tile(np.linspace(0, 1, 5), 4)[:, None]
    y = np.tile(np.arange(5.0), 4)
    p1 = calibrated_scores(X, y, groups)
    y2 = y.copy()
    y2[groups == "a"] = -y2[groups == "a"] * 10
    p2 = calibrated_scores(X, y2, groups)
    np.testing.assert_allclose(p1[groups == "a"], p2[groups == "a"])
    assert not np.allclose(p1[groups == "b"], p2[groups == "b"])


def test_calibration_edges():
    g = np.array(["a", "a", "b", "b"])
    # constant training labels → no model → NaN (never a made-up score)
    assert np.isnan(calibrated_scores(np.ones((4, 2)), np.ones(4), g)).all()
    # missing answers (NaN) are filled, not propagated
    X = np.array([[0.2, np.nan], [0.8, 0.1], [0.3, 0.4], [0.9, np.nan],
                  [0.1, 0.5], [0.7, 0.5]])
    out = calibrated_scores(X, np.array([1, 5, 2, 4, 1, 5.0]),
                            np.array(["a", "a", "b", "b", "c", "c"]))
    assert np.isfinite(out).all()
    assert np.isnan(calibrated_scores(np.empty((0, 0)), np.empty(0), np.empty(0))).all()


def test_calibrated_scores_stored_for_rocketeval(db, task):  # noqa: F811
    rid = run(db, task, "rocketeval")
    cal = scores_of(db, rid, "calibrated")
    assert len(cal) == 18  # 9 items × 2 dimensions, 3 groups
    vals = [v for v in cal.values() if v is not None]
    assert vals and all(math.isfinite(v) for v in vals)
    assert len(scores_of(db, rid, "calibrated_len")) == 18


@pytest.fixture
def demo_runs(db):
    return fake_demo_runs(db, 48)


def test_ensemble_is_mean_of_member_zscores(db, demo_runs):
    from checkeval_core.analysis.frames import run_frame

    df, meta = ensemble_frame(db, demo_runs, "share_yes")
    assert [m["run"] for m in meta["members"]] == demo_runs
    a, _ = run_frame(db, demo_runs[0], "share_yes")
    b, _ = run_frame(db, demo_runs[1], "share_yes")
    dim = "coherence"
    a = a[a.dimension == dim].set_index("item_pk")["metric"]
    b = b[b.dimension == dim].set_index("item_pk")["metric"]
    za, zb = (a - a.mean()) / a.std(ddof=0), (b - b.mean()) / b.std(ddof=0)
    want = (za + zb) / 2
    got = df[df.dimension == dim].set_index("item_pk")["metric"]
    np.testing.assert_allclose(got.sort_index().to_numpy(), want.sort_index().to_numpy())
    pair = meta["member_agreement"][dim][f"{demo_runs[0]}-{demo_runs[1]}"]
    from scipy import stats

    assert pair == pytest.approx(stats.spearmanr(a.sort_index(), b.sort_index()).statistic)
    rep = analyze_ensemble(db, demo_runs, "share_yes", n_boot=0)
    assert set(rep["dimensions"]) == {"coherence", "consistency", "fluency", "relevance"}
    assert rep["average"]["sample_level"]["n"] >= 1


def test_ensemble_needs_two_runs(db, demo_runs):
    with pytest.raises(ValueError, match="at least two runs"):
        ensemble_frame(db, demo_runs[:1])


def test_parse_params():
    assert parse_params(["include_definition=true", "seal_units={\"fluency\": \"whole\"}",
                         "aggregation=calibrated"]) == {
        "include_definition": True, "seal_units": {"fluency": "whole"},
        "aggregation": "calibrated"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_params(["oops"])
    with pytest.raises(ValueError, match="'nope': unknown option"):
        parse_params(["nope=1"])
    with pytest.raises(ValueError, match="expected bool"):
        parse_params(["include_reference=maybe"])


def test_stacked_ensemble_is_learned_out_of_sample(db, demo_runs):
    from checkeval_core.analysis.ensemble import stacked_frame

    df, meta = stacked_frame(db, demo_runs)
    assert meta["n_features"] == 2 * 122  # both runs' answers to the 122 questions
    assert df["metric"].notna().all() and len(df) == 48 * 4
    df_len, meta_len = stacked_frame(db, demo_runs, with_length=True)
    assert meta_len["n_features"] == 2 * 122 + 1
    rep = analyze_ensemble(db, demo_runs, n_boot=0, mode="stack")
    assert rep["mode"] == "stack" and rep["average"]["sample_level"]["n"] >= 1
    with pytest.raises(ValueError, match="ensemble mode"):
        analyze_ensemble(db, demo_runs, mode="median")
