"""AppTest and core checks of what the README tour tripped over: no server path on Home and
every step in "Where to start", the judge Improve writes with, what "Questions asked" costs,
undefined table cells as a dash with the reason, and the width argument Streamlit wants."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from checkeval_core.checklists.io import import_checklist
from checkeval_core.datasets import import_file
from tests.conftest import open_app_page
from tests.helpers import REPO


def _three_sub_task(db, tmp_path, name="gen"):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "group_id": f"g{i}", "source": "A text.",
                                     "output": f"Summary {i}.", "scores": {"coherence": 3}})
                         + "\n" for i in range(2)))
    import_file(db, p, name, kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"coherence": {"definition": "well organised", "sub_dimensions": {
        s: {"seed": [f"Is the summary's {s.lower()} clear?"]}
        for s in ("Structure", "Flow", "Focus")}}}))
    import_checklist(db, name, c)
    return name


def test_home_shows_no_server_path_and_every_step(db_path):
    at = open_app_page("app_pages/home.py")
    text = " ".join(str(getattr(e, "value", "")) for e in
                    [*at.caption, *at.markdown, *at.text, *at.info, *at.success])
    assert str(db_path) not in text and str(db_path.parent) not in text
    assert "Database:" not in text
    links = " ".join(e.proto.label for e in at.get("page_link"))
    for page in ("Versions", "Compare runs", "Improve checklist", "Align"):
        assert re.search(rf"\d+\. {page} —", links), (page, links)


def test_generate_says_questions_are_per_sub_dimension_and_the_request_count(db, tmp_path):
    task = _three_sub_task(db, tmp_path)
    at = open_app_page("app_pages/dimensions.py")
    at.selectbox(key="dim_task").select(task).run()
    at.number_input(key="gen_n").set_value(2).run()
    assert "per sub-dimension" in at.number_input(key="gen_n").label
    at.text_input(key="gen_judge").input("embedded").run()  # single mode: one per question
    cap = " ".join(c.value for c in at.caption)
    assert "3 sub-dimension(s)" in cap and "**6 request(s)**" in cap, cap
    at.text_input(key="gen_judge").input("fake").run()  # list mode: one list per sub-dimension
    cap = " ".join(c.value for c in at.caption)
    assert "**3 request(s)**" in cap, cap
    at.selectbox(key="gen_strategy").select("elaborate").run()
    assert "3 seed question(s)" in " ".join(c.value for c in at.caption)
    # what was promised is what is asked
    at.selectbox(key="gen_strategy").select("diversify").run()
    at.button(key="gen_run").click().run()
    assert not at.exception, at.exception
    assert any("from 3 request(s)" in s.value for s in at.success)
    added = next(d.value for d in at.dataframe if "parent_id" in d.value.columns)
    # diversify writes from all the seeds of a sub-dimension: a dash, never "None"
    assert set(added["parent_id"]) == {"—"}


def test_improve_writes_new_questions_with_the_embedded_judge_by_default(db):
    from checkeval_core.checklists.augment import generation_judge
    from tests.helpers import build_proposal_task

    build_proposal_task(db)
    at = open_app_page("app_pages/improve.py")
    value = at.text_input(key="im_judge").value
    assert value == generation_judge() and value.startswith("embedded") and value != "fake"


def test_undefined_cells_are_a_dash_with_the_reason_on_hover():
    from studio_ui.tables import DASH, dash_missing, table_config

    rows = [{"run": "#1", "spearman": 0.51234, "items": 12, "note": None},
            {"run": "#2", "spearman": float("nan"), "items": None, "note": "constant scores"}]
    df, cfg = dash_missing(pd.DataFrame(rows), table_config(scores={"spearman": "ρ"}))
    assert list(df["spearman"]) == ["0.51", DASH]  # the score column's own format (%.2f)
    assert list(df["items"]) == ["12", DASH]
    assert list(df["note"]) == ["", "constant scores"]  # no note: nothing to explain
    assert "the row's note says why" in cfg["spearman"]["help"]
    assert cfg["spearman"]["help"].startswith("ρ")  # the column's own meaning is kept
    df, cfg = dash_missing([{"parent_id": None}], reasons={"parent_id": "from all seeds"})
    assert list(df["parent_id"]) == [DASH] and cfg["parent_id"]["help"] == f"{DASH} = from all seeds"
    nullable, _ = dash_missing(pd.DataFrame({"n": pd.array([2, None], dtype="Int64"),
                                             "flags": [["never varies"], None]}))
    assert list(nullable["n"]) == ["2", DASH] and nullable["flags"][1] == DASH
    untouched, cfg = dash_missing([{"x": 1.5}])
    assert untouched["x"].tolist() == [1.5] and cfg == {}


def test_versions_table_shows_a_dash_for_an_undefined_value(db):
    from tests.helpers import build_versions_task

    _, r1, _, _ = build_versions_task(db)
    # v1's run gives every item the same score: its correlation is undefined
    db.execute("UPDATE score SET value = 0.5 WHERE run_id = ?", [r1])
    at = open_app_page("app_pages/versions.py")
    t = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    assert "—" in list(t["value"]) and not t["value"].isna().any()
    assert not any(str(v) == "None" for v in t.to_numpy().ravel())


def test_pages_use_the_current_width_argument():
    """``use_container_width`` is deprecated (a warning in the log at every draw)."""
    offenders = [str(p.relative_to(REPO)) for d in ("app_pages", "studio_ui")
                 for p in sorted((Path(REPO) / d).glob("*.py"))
                 if "use_container_width" in p.read_text()]
    assert offenders == []


def test_analysis_tables_show_a_dash_never_none(db):
    """One run: "judges agree" is undefined for every question (it needs two runs) — a dash,
    with the reason on hover; no table of the page holds a raw None / NaN cell."""
    from tests.helpers import analysis_page, fake_demo_runs

    rid, _ = fake_demo_runs(db, 16)
    at = analysis_page()
    at.multiselect(key="an_runs").set_value([rid]).run()
    assert not at.exception, at.exception
    diag = next(d for d in at.dataframe if "judge_agreement" in d.value.columns)
    assert set(diag.value["judge_agreement"]) == {"—"}
    assert set(diag.value["human_agreement"]) == {"—"}  # nobody annotated yet
    cfg = json.loads(diag.proto.columns)
    assert "notes above the table say why" in cfg["judge_agreement"]["help"]
    for d in at.dataframe:
        if d.key in ("an_items",):
            continue
        shown = d.value.drop(columns=[c for c in d.value.columns if str(c).startswith("_")])
        assert not shown.isna().any().any(), (d.value.columns.tolist(), shown)
