"""Every blank statistic on the Analysis page is explained: one document, one item, one run,
one method, a judge that answers the same everywhere (AppTests on tiny fake-judge runs)."""

import pandas as pd

from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path
from tests.helpers import analysis_page, load_demo_copy


def _run(db, limit: int, method: str = "rocketeval", task: str = "summeval-demo") -> int:
    rid = create_run(db, task, "fake", method, limit=limit)
    execute_run(db_path(db), rid)
    return rid


def _texts(at) -> str:
    parts = [e.value for kind in ("info", "caption", "markdown", "warning") for e in
             getattr(at, kind)]
    parts += [m.help or "" for m in at.metric]
    return "\n".join(str(p) for p in parts)


def _cells(at) -> str:
    return "\n".join(d.value.astype(str).to_csv() for d in at.dataframe
                     if isinstance(d.value, pd.DataFrame))


def test_one_document_one_run(db):
    load_demo_copy(db)
    _run(db, 16)  # the first SummEval document: 16 summaries
    at = analysis_page()
    corr = at.dataframe[0].value
    dims = corr[corr["dimension"] != "AVERAGE"]
    assert (dims["n documents"] == 1).all()
    # the interval is missing, and the table says why instead of "None"
    assert (dims["95% CI"] == "no interval: needs ≥ 6 groups (documents / contexts / queries) (n=1)").all()
    assert ("4 of 4 bars have no error bar — no interval: needs ≥ 6 groups (documents / contexts / queries) (n=1)"
            in _texts(at))
    # said before the chart, as a warning: such a value may have its sign by chance
    assert any("its sign may be chance" in w.value for w in at.warning)
    text = _texts(at)
    assert "Agreement across judges needs ≥ 2 runs" in text
    assert "Stability across judges needs ≥ 2 runs of the same method" in text
    assert "(selected: rocketeval ×1)" in text
    assert "Blank judge agreement: needs ≥ 2 runs" in text
    assert "Blank human agreement: no annotator answered the question" in text
    assert "Humans vs judges: no Yes/No annotations for this task yet" in text
    assert not [c for c in at.get("plotly_chart") if "violin" in str(c.proto)]


def test_one_item_no_chart_but_the_reason(db):
    load_demo_copy(db)
    _run(db, 1)
    at = analysis_page()
    text = _texts(at)
    assert ("No spearman correlation to draw at sample level (n = 0 documents): coherence: "
            "needs ≥ 2 items per document; each of the 1 document(s) has 1") in text
    assert "an_bars" not in [getattr(c, "key", None) for c in at.get("plotly_chart")]
    corr = at.dataframe[0].value
    assert corr[corr["dimension"] == "AVERAGE"]["note"].str.startswith(
        "no dimension has a spearman value").all()
    at.selectbox(key="an_level").set_value("dataset_level").run()
    assert "needs ≥ 2 items (n=1)" in _texts(at)
    at.selectbox(key="an_level").set_value("system_level").run()
    assert "needs ≥ 2 systems (n=1)" in _texts(at)
    # the quality split names the subset's size
    assert "needs ≥ 2 items (n=" in _cells(at)


def test_constant_judge_kappa_is_explained(db):
    load_demo_copy(db)
    a, b = _run(db, 16), _run(db, 16, "checkeval")
    db.execute("UPDATE answer SET verdict = 'no' WHERE run_id = ?", [b])  # judge b: always No
    n = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND verdict != 'invalid'",
                   [a]).fetchone()[0]
    agree = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND verdict = 'no'",
                       [a]).fetchone()[0]
    at = analysis_page()
    pairs = next(d.value for d in at.dataframe if "Cohen κ" in d.value.columns)
    assert pairs["Cohen κ"].iloc[0] == "—"  # undefined, said in the note
    assert pairs["raw agreement"].iloc[0] == f"{agree}/{n}"
    assert pairs["note"].iloc[0] == (f"a judge answered the same everywhere (#{b} always 'no'): "
                                     f"κ undefined (it would be 0 whatever the other answers); "
                                     f"raw agreement {agree}/{n}")
    # one judge under two methods: the significance test is blank, and says why
    assert "needs ≥ 2 judges run with both methods (n=1)" in _cells(at)


def test_everyone_answers_the_same(db):
    load_demo_copy(db)
    a, b = _run(db, 16), _run(db, 16)
    db.execute("UPDATE answer SET verdict = 'no' WHERE run_id IN (?, ?)", [a, b])
    n = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [a]).fetchone()[0]
    at = analysis_page()
    alpha = next(m for m in at.metric if m.key is None and m.label == "Krippendorff α (Yes/No)")
    assert alpha.value == "—"
    assert "every answer is the same" in _texts(at) and "κ undefined" in _texts(at)
    pairs = next(d.value for d in at.dataframe if "Cohen κ" in d.value.columns)
    note = pairs["note"].iloc[0]
    assert note.startswith("every answer is the same (#") and note.endswith(
        f"chance agreement is 1, κ undefined; raw agreement {n}/{n}")
    assert f"#{a} always 'no'" in note and f"#{b} always 'no'" in note
    # two runs of one method by the same judge are not "across judges": nothing is drawn
    assert ("The 2 rocketeval runs come from one judge (fake): runs of the same judge are not "
            "across judges, so nothing is drawn.") in _texts(at)
    assert "an_violin" not in [getattr(c, "key", None) for c in at.get("plotly_chart")]


def test_no_human_scores_says_so(db):
    load_demo_copy(db)
    _run(db, 16)
    db.execute("DELETE FROM human_score")
    at = analysis_page()
    text = _texts(at)
    assert ("No correlation to draw: no item of the selected runs has a human score for its "
            "dimensions — import human scores on the Data page.") in text
    assert "No item of the selected runs has a human score: nothing to split." in text
    corr = at.dataframe[0].value
    assert list(corr["dimension"]) == ["AVERAGE"]
    assert corr["note"].iloc[0] == "no dimension has a spearman value at sample level"
