"""AppTest of the Analysis page: tables, charts, click-through selectors, send to review."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from checkeval_core.demo import load_demo
from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_analysis_page(db):
    load_demo(db)
    for m in ("rocketeval", "checkeval"):
        execute_run(db_path(db), create_run(db, "summeval-demo", "fake", m, limit=32))
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("pages/analysis.py").run()
    assert not at.exception, at.exception
    corr_table = at.dataframe[0].value
    assert set(corr_table["dimension"]) >= {"coherence", "AVERAGE"}
    labels = {m.label for m in at.metric}
    assert "Fleiss κ (Yes/No)" in labels
    # the items behind a bar, with a link to their trace
    items_table = at.dataframe[1].value
    assert len(items_table) == 32 and {"metric", "human"} <= set(items_table.columns)
    # the ensemble of the two runs becomes one more row, with its members' agreement
    at.checkbox(key="an_ensemble").check().run()
    assert not at.exception, at.exception
    runs_shown = set(at.dataframe[0].value["run"])
    assert any(r.startswith("ensemble of #") for r in runs_shown), runs_shown
    assert any("Ensemble members' agreement" in c.value for c in at.caption)
    send = next(b for b in at.button if b.key == "an_send")
    send.click().run()
    assert any("back in the review queue" in s.value for s in at.success)
