"""AppTest of the Traces page: compact per-run verdict columns, the full question of a
selected row, and deep links that open on the linked run's task, item and dimension."""

from streamlit.testing.v1 import AppTest

from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.traces import decision_rows, item_trace, verdict_cell
from checkeval_core.store import db_path
from tests.conftest import APP
from tests.helpers import fake_demo_runs, load_demo_copy


def test_verdict_cell_is_compact():
    assert verdict_cell("yes", 0.823) == "✓ 0.82"
    assert verdict_cell("no", 0.1) == "✗ 0.10"
    assert verdict_cell("invalid", None) == "invalid"
    assert verdict_cell("no", None) == "✗ no"
    assert verdict_cell("yes", None, 4.0) == "4"


def test_decision_rows_one_column_per_run(db):
    runs = fake_demo_runs(db, 4)
    pk = db.execute("SELECT item_id FROM answer WHERE run_id = ? LIMIT 1", [runs[0]]).fetchone()[0]
    rows = decision_rows(item_trace(db, pk, runs))
    assert len(rows) == 122  # every question of the demo checklist, once
    assert all(f"#{r}" in rows[0] for r in runs)
    assert all(rows[0][f"#{r}"][0] in "✓✗i" for r in runs)
    dis = decision_rows(item_trace(db, pk, runs), "judges disagree")
    assert all(r[f"#{runs[0]}"][0] != r[f"#{runs[1]}"][0] for r in dis)


def _traces(at: AppTest) -> AppTest:
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception, at.exception
    return at


def test_traces_page_verdict_columns_and_detail(db):
    runs = fake_demo_runs(db, 4)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "summeval-demo"
    at = _traces(at.run())
    at.multiselect(key="tr_runs").set_value(runs).run()
    assert not at.exception, at.exception
    dec = next(d for d in at.dataframe if "question" in d.value.columns
               and "sub-dimension" in d.value.columns)
    for r in runs:
        assert dec.value[f"#{r}"].str.match(r"^(✓|✗) (\d\.\d\d|yes|no)$|^invalid$").all()
    assert any(f"#{runs[1]}" in c.value and "checkeval" in c.value for c in at.caption)
    # the item's output is shown above the decisions, as plain text
    pk = at.selectbox(key="tr_item").value
    output = db.execute("SELECT output FROM item WHERE id = ?", [pk]).fetchone()[0]
    assert output in [t.value for t in at.text]


def test_deep_link_opens_the_runs_task(db):
    fake_demo_runs(db, 2)  # summeval-demo: the first task
    rid = create_run(db, "topical-chat-demo", "fake", "checkeval", limit=3)
    execute_run(db_path(db), rid)
    pks = [r[0] for r in db.execute("SELECT DISTINCT item_id FROM answer WHERE run_id = ? "
                                    "ORDER BY item_id", [rid])]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"runs": str(rid), "item": str(pks[2]), "dim": "groundedness"})
    at = _traces(at.run())
    assert at.selectbox(key="tr_task").value == "topical-chat-demo"
    assert at.multiselect(key="tr_runs").value == [rid]
    assert at.selectbox(key="tr_item").value == pks[2]
    assert at.selectbox(key="tr_dim").value == "groundedness"


def test_seal_and_likert_runs_side_by_side(db):

    load_demo_copy(db)
    runs = []
    for m in ("seal", "geval"):
        rid = create_run(db, "summeval-demo", "fake", m, limit=2)
        execute_run(db_path(db), rid)
        runs.append(rid)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "summeval-demo"
    at = _traces(at.run())
    at.multiselect(key="tr_runs").set_value(runs).run()
    assert not at.exception, at.exception
    dec = next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)
    likert = dec[f"#{runs[1]}"].dropna()
    assert len(likert) == 4 and likert.str.match(r"^\d+(\.\d+)?( \(\d\.\d\d\))?$").all()
    seal = dec[f"#{runs[0]}"].dropna()
    assert len(seal) and seal.str.match(r"^(✓|✗) |^invalid$").all()
    units = next(d.value for d in at.dataframe if "verdicts" in d.value.columns)
    assert set(units["run"]) == {f"#{runs[0]}"} and units["verdicts"].str.len().min() > 0


def test_table_config_keeps_decision_columns_narrow():
    from studio_ui.tables import DECISION_WIDTH, order, table_config

    cfg = table_config(decisions={"#1": "Run #1 fake · checkeval"}, long={"q": "the question"},
                       counts={"n": "items"}, labels={"q": "question"}, hidden=["pk"],
                       widths={"q": 300})
    assert cfg["#1"]["width"] == DECISION_WIDTH and cfg["#1"]["help"] == "Run #1 fake · checkeval"
    assert cfg["q"]["label"] == "question" and cfg["q"]["width"] == 300
    assert cfg["n"]["type_config"]["format"] == "%d"
    assert cfg["pk"] is None
    assert order(["a", "b"], ["b", "c"]) == ["a", "b", "c"]
