"""AppTest of the Analysis page: tables, charts, click-through selectors."""


from checkeval_core.runs import create_run, execute_run
from checkeval_core.store import db_path
from tests.helpers import analysis_page, load_demo_copy


def test_analysis_page(db):
    load_demo_copy(db)
    for m in ("rocketeval", "checkeval"):
        execute_run(db_path(db), create_run(db, "summeval-demo", "fake", m, limit=32))
    at = analysis_page()
    corr_table = at.dataframe[0].value
    assert set(corr_table["dimension"]) >= {"coherence", "AVERAGE"}
    assert {"95% CI", "n documents"} <= set(corr_table.columns)
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
    # two documents: signs are listed but nothing is flagged, so nothing can be sent
    assert any("No flagged question is still kept" in c.value for c in at.caption)


def test_switching_task_keeps_the_page_filled(db):
    load_demo_copy(db)
    s = create_run(db, "summeval-demo", "fake", "rocketeval", limit=16)
    t = create_run(db, "topical-chat-demo", "fake", "rocketeval", limit=12)
    for rid in (s, t):
        execute_run(db_path(db), rid)
    at = analysis_page("summeval-demo")
    assert at.multiselect(key="an_runs").value == [s]
    at.selectbox(key="an_task").set_value("topical-chat-demo").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="an_runs").value == [t]
    corr = at.dataframe[0].value
    assert "groundedness" in set(corr["dimension"])
    assert at.selectbox(key="an_pick_dim").value in set(corr["dimension"])


def test_the_items_table_shows_a_long_document_id_whole(db):
    """SummEval's document ids are ~48 characters; in a 110 px column the items behind a bar
    read "dm-test-876…" (screenshot). The group column widens to its longest value (capped);
    a short id column stays narrow."""
    import json

    load_demo_copy(db)
    execute_run(db_path(db), create_run(db, "summeval-demo", "fake", "rocketeval", limit=16))
    at = analysis_page()
    items = at.dataframe[1]
    longest = max(len(str(g)) for g in items.value["group"])
    assert longest > 40
    cols = json.loads(items.proto.columns)
    assert cols["group"]["width"] >= 8 * longest
    assert cols["system"]["width"] == 110  # "M11": the narrow key width


def test_identifier_columns_fit_their_values_within_a_cap():
    import pandas as pd

    from studio_ui.tables import KEY_MAX_WIDTH, KEY_WIDTH, fit_keys, key_column, long_text_column

    df = pd.DataFrame({"id": ["a1", "b2"], "group": ["x" * 30, "y"], "doc": ["z" * 500, "w"],
                       "text": ["t" * 500, "u"]})
    cfg = fit_keys(df, {"id": key_column("id"), "group": key_column("group"),
                        "doc": key_column("doc"), "text": long_text_column("text", "")})
    assert cfg["id"]["width"] == KEY_WIDTH and cfg["doc"]["width"] == KEY_MAX_WIDTH
    assert KEY_WIDTH < cfg["group"]["width"] < KEY_MAX_WIDTH
    assert cfg["text"]["width"] == "large"  # only identifier columns are fitted
