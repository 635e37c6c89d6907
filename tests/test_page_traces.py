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
        assert dec.value[f"#{r}"].str.match(r"^(✓|✗) (\d\.\d{2,6}( ≈)?|yes|no)$|^invalid$").all()
    assert any(f"#{runs[1]}" in c.value and "checkeval" in c.value for c in at.caption)
    # the item's output is shown above the decisions, as plain text
    pk = at.selectbox(key="tr_item").value
    output = db.execute("SELECT output FROM item WHERE id = ?", [pk]).fetchone()[0]
    assert output in [t.value for t in at.text]
    # the demo's questions are longer than a line of the question column: rows are tall
    # enough for them to wrap (a cut question could only be read by selecting its row)
    assert dec.proto.row_height > 64  # the grid wraps text only above 4rem


def test_a_row_is_as_tall_as_its_longest_text_up_to_three_lines():
    from studio_ui.tables import wrapped_row_height

    assert wrapped_row_height(["short", "also short"]) is None
    assert wrapped_row_height(["x" * 61]) == 66 == wrapped_row_height(["x" * 120])
    assert wrapped_row_height(["x" * 121]) == 70 == wrapped_row_height(["x" * 5000])
    assert wrapped_row_height([]) is None


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
    likert = dec[f"#{runs[1]}"][dec[f"#{runs[1]}"] != "not in this run"]
    assert len(likert) == 4 and likert.str.match(r"^\d+(\.\d+)?( \(\d\.\d\d\))?$").all()
    seal = dec[f"#{runs[0]}"][dec[f"#{runs[0]}"] != "not in this run"]
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


# -- what a person misread on this page --------------------------------------------------------
def test_p_yes_near_one_half_shows_which_side():
    from checkeval_core.runs.traces import p_text

    # (each is also a coin flip: p(Yes) within 0.05 of 0.5, marked ≈)
    assert verdict_cell("no", 0.4987) == "✗ 0.499 ≈"
    assert verdict_cell("no", 0.49996) == "✗ 0.49996 ≈"
    assert verdict_cell("yes", 0.503) == "✓ 0.503 ≈"
    assert verdict_cell("yes", 0.5) == "✓ 0.50 ≈"
    assert p_text(0.49999999) != "0.50" and p_text(0.82) == "0.82"


def test_run_without_answers_does_not_blank_the_page(db):
    """A selected run that has no answer yet (just started) no longer hides the others; the
    page says which run is still empty."""
    runs = fake_demo_runs(db, 2)
    empty = create_run(db, "summeval-demo", "fake", "rocketeval", limit=1)  # never executed
    db.execute("UPDATE run SET status = 'running' WHERE id = ?", [empty])  # just started
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "summeval-demo"
    at = _traces(at.run())
    at.multiselect(key="tr_runs").set_value([empty]).run()
    assert any("No selected run has answers yet" in i.value for i in at.info)
    at.multiselect(key="tr_runs").set_value([empty, runs[0]]).run()
    assert not at.exception, at.exception
    # run labels (judge specs are user text) are escaped for Markdown: "#" becomes "\#"
    assert any(f"No answers yet from \\#{empty}" in c.value for c in at.caption)
    dec = next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)
    assert len(dec) > 0 and (dec[f"#{empty}"] == "not in this run").all()


def test_removing_a_run_chip_removes_it(db):
    runs = fake_demo_runs(db, 2)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"runs": str(runs[0])})
    at = _traces(at.run())
    at.multiselect(key="tr_runs").set_value(runs).run()
    assert at.multiselect(key="tr_runs").value == runs
    at.multiselect(key="tr_runs").set_value([runs[1]]).run()  # the × of the first chip
    assert not at.exception, at.exception
    ms = at.multiselect(key="tr_runs")
    assert ms.value == [runs[1]]
    # the browser shows a chip list's default again when that default changes: the default
    # must not follow the link (it held the run just removed)
    defaults = [ms.proto.options[i] for i in ms.proto.default]
    assert not any(d.startswith(f"#{runs[0]} ") for d in defaults), defaults
    at.run()
    assert at.multiselect(key="tr_runs").value == [runs[1]]


def test_item_not_in_a_run_says_so_and_words_are_unambiguous(db):
    runs = fake_demo_runs(db, 2)
    other = create_run(db, "summeval-demo", "fake", "checkeval", limit=4)
    execute_run(db_path(db), other)
    only_other = db.execute("SELECT DISTINCT item_id FROM answer WHERE run_id = ? AND item_id "
                            "NOT IN (SELECT item_id FROM answer WHERE run_id = ?)",
                            [other, runs[0]]).fetchone()[0]
    trace = item_trace(db, only_other, [runs[0], other])
    from checkeval_core.runs.traces import score_rows

    rows = decision_rows(trace)
    assert rows and all(r[f"#{runs[0]}"] == "not in this run" for r in rows)
    assert all(r[f"#{runs[0]}"] == "not in this run" for r in score_rows(trace))
    assert all(isinstance(r["human"], str) and r["human"] != "None" for r in score_rows(trace))
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = "summeval-demo"
    at = _traces(at.run())
    labels = [w.label for w in at.selectbox]
    assert not any("gap" in lab.lower() for lab in labels)
    assert any("score difference" in lab for lab in labels)


def test_link_dimension_filters_the_questions(db):
    runs = fake_demo_runs(db, 2)
    pk = db.execute("SELECT item_id FROM answer WHERE run_id = ? LIMIT 1", [runs[0]]).fetchone()[0]
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"runs": str(runs[0]), "item": str(pk), "dim": "fluency"})
    at = _traces(at.run())
    dec = next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)
    assert len(dec) and set(dec["dimension"]) == {"fluency"}
    at.selectbox(key="tr_qdim").set_value("all dimensions").run()
    dec = next(d.value for d in at.dataframe if "sub-dimension" in d.value.columns)
    assert len(set(dec["dimension"])) > 1


def test_coin_flips_are_marked_and_counted():
    """The same judge, version and items on another build moved p(Yes) by up to 0.044 and
    flipped 4 of 39 answers: a p(Yes) within 0.05 of 0.5 is marked ≈, and the decisions
    shown say how many rest on such a coin flip."""
    from checkeval_core.runs.traces import coin_flip_line

    assert verdict_cell("yes", 0.546) == "✓ 0.55 ≈" and verdict_cell("no", 0.451) == "✗ 0.45 ≈"
    assert verdict_cell("yes", 0.551) == "✓ 0.55" and verdict_cell("no", 0.449) == "✗ 0.45"
    rows = [{"#1": verdict_cell("yes", 0.52), "#2": verdict_cell("yes", 0.9)},
            {"#1": verdict_cell("no", 0.1), "#2": "invalid"}]
    assert coin_flip_line(rows, ["#1", "#2"]).startswith("1 of 3 decisions shown are coin flips")
    assert coin_flip_line(rows[1:], ["#1", "#2"]) == ""


def test_an_escalated_verdict_column_leaves_the_question_inside_the_table():
    """At 1440 px a 330 px escalated-verdict column pushed the large question column past the
    table's right edge (screenshot): beside one the verdict wraps in 200 px and the question
    gets 330 px, on rows tall enough for both to wrap."""
    import json

    def page():
        from studio_ui.traces_ui import decisions_table
        rows = [{"dimension": "coherence", "sub-dimension": "Flow", "question_id": 1, "unit": "",
                 "question": "Does the summary about the council and the park flow logically "
                             "from one sentence to the next?",
                 "#1": "✗ 0.46 ≈ by fakeb (fake said ✓ 0.54 ≈)", "raw": {}}]
        decisions_table(rows, [1], {1: "#1"})

    at = AppTest.from_function(page).run()
    assert not at.exception, at.exception
    grid = at.dataframe[0].proto
    cols = json.loads(grid.columns)
    assert cols["#1"]["width"] == 200 and cols["question"]["width"] == 330
    assert grid.row_height > 64
