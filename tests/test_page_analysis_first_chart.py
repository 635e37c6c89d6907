"""The Analysis page draws a new selection's point values first (``first_chart``) and replaces
them with the full view: only the full chart stays, the points are computed once per
selection, and a level or coefficient change (which the full view already holds) does not
compute them again (AppTest on fake-judge runs)."""

from checkeval_core.analysis import analysis_view
from tests.helpers import analysis_page, fake_demo_runs


def test_points_first_then_the_full_view(db, monkeypatch):
    fake_demo_runs(db, 32)
    calls = []
    real = analysis_view.first_chart

    def spy(*a, **kw):
        out = real(*a, **kw)
        calls.append((a[5], a[6], out))
        return out

    monkeypatch.setattr(analysis_view, "first_chart", spy)
    at = analysis_page()
    assert len(calls) == 1 and calls[0][:2] == ("sample_level", "spearman")
    assert calls[0][2]["figure"] is not None and "being computed" in calls[0][2]["pending"]
    # the points were replaced: the full view's note, no "being computed" left on the page
    assert not any("being computed" in c.value for c in at.caption)
    assert "95% CI" in at.dataframe[0].value.columns
    at.selectbox(key="an_level").set_value("dataset_level").run()
    at.selectbox(key="an_coef").set_value("kendall").run()
    assert not at.exception, at.exception
    assert len(calls) == 1  # same selection: the full view answers at once
    at.checkbox(key="an_shared").uncheck().run()
    assert not at.exception, at.exception
    assert len(calls) == 2 and calls[1][:2] == ("dataset_level", "kendall")
