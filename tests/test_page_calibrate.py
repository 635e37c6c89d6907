"""AppTests of the human-calibrated estimate beside the raw judge scores: on Analysis (the
demo's SummEval task with a fake-judge run) and on Rankings (a task without human scores
says how to get them)."""

from __future__ import annotations

from tests.helpers import analysis_page, build_ranking_task, open_rankings_page, small_run


def _calibrated(at):
    """The calibrated table (a table that cannot be selected carries no key in AppTest)."""
    return next(d.value for d in at.dataframe if "calibrated CI" in d.value.columns)


def test_analysis_shows_the_calibrated_estimate_beside_the_judge(demo_db):
    small_run(demo_db)
    at = analysis_page()
    df = _calibrated(at)
    assert len(df) == 16 * 4
    assert {"raw judge", "judge alone (biased)", "humans CI", "calibrated", "calibrated CI",
            "labelled", "unlabelled"} <= set(df.columns)
    assert (df["labelled"] + df["unlabelled"] == 6).all()
    assert any("PPI++" in c.value for c in at.caption)
    assert any(m.value.startswith("The judge narrowed ") and "median width ratio" in m.value
               for m in at.markdown)
    at.number_input(key="an_cal_n").set_value(2).run()
    assert not at.exception
    assert (_calibrated(at)["labelled"] <= 2).all()


def test_rankings_without_human_scores_says_how_to_calibrate(db):
    build_ranking_task(db)
    at = open_rankings_page()
    assert not at.exception
    assert any("calibrate" in i.value for i in at.info)
