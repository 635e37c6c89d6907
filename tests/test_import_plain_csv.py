"""A plain ``input,output,score`` CSV is imported as it is: ids from row numbers when there is
no id column (said in the output), a numeric column mapped to a human-score dimension, every
column left out named; the Data page's grey *Import* says what it waits for."""

from __future__ import annotations

import pytest

from checkeval_core.datasets import DatasetError, import_file, numeric_columns, parse_rows
from checkeval_core.store import open_db
from tests.conftest import open_app_page
from tests.helpers import FakeUpload, cli, use_upload

TINY = b"input,output,score,note\nWhat is 2+2?,4,5,ok\nCapital of France?,Lyon,1.5,wrong\n"


def _scores(db, task):
    return {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT i.item_id, h.dimension, h.value FROM human_score h JOIN item i ON "
        "i.id = h.item_id JOIN task t ON t.id = i.task_id WHERE t.name = ?", [task])}


def test_cli_imports_a_file_without_id_column_with_its_scores(db_path, tmp_path):
    src = tmp_path / "tiny.csv"
    src.write_bytes(TINY)
    r = cli(db_path, "import", str(src), "--task", "T", "--kind", "custom",
            "--map", "human_overall=score")
    assert r.returncode == 0, r.stderr
    assert "imported 2 items and 2 human scores into task 'T' (dimensions: overall)" in r.stdout
    assert "no 'id' column: each item's id is its row number (1–2)" in r.stdout
    assert "kept as item metadata): note" in r.stdout  # the column left out is named
    db = open_db(db_path)
    assert _scores(db, "T") == {("1", "overall"): 5.0, ("2", "overall"): 1.5}
    got = db.execute("SELECT item_id, source, output FROM item ORDER BY position").fetchall()
    assert got == [("1", "What is 2+2?", "4"), ("2", "Capital of France?", "Lyon")]


def test_an_unmapped_score_column_is_named_not_dropped_silently(db_path, tmp_path):
    src = tmp_path / "tiny.csv"
    src.write_bytes(TINY)
    r = cli(db_path, "import", str(src), "--task", "T")
    assert r.returncode == 0, r.stderr
    assert "0 human scores" in r.stdout
    assert ("not imported as a field or a human score (kept as item metadata): score, note — "
            "map a numeric column to a human score with human_<dimension>=COLUMN") in r.stdout


def test_row_ids_mapping_errors_and_json(tmp_path):
    p = parse_rows(tmp_path / "x.csv", {"human_overall": "score"}, data=TINY)
    assert p["ids_from_rows"] and p["ignored"] == ["note"]
    assert [it["item_id"] for it in p["items"]] == ["1", "2"]
    # an id column named in the mapping must exist: no silent row numbers then
    with pytest.raises(DatasetError, match="missing required column"):
        parse_rows(tmp_path / "x.csv", {"id": "key"}, data=TINY)
    # a mapped score column must hold numbers: the line and column are named
    with pytest.raises(DatasetError, match=r"x.csv, line 3, field 'note': 'wrong' is not a number"):
        parse_rows(tmp_path / "x.csv", {"human_overall": "note"}, data=TINY)
    # JSON rows without any id: row numbers too; one row without an id among others: refused
    js = b'[{"output": "a", "score": 2}, {"output": "b", "score": 3}]'
    assert [i["item_id"] for i in parse_rows(tmp_path / "x.json", {}, data=js)["items"]] == \
        ["1", "2"]
    with pytest.raises(DatasetError, match="required value is missing"):
        parse_rows(tmp_path / "x.json", {}, data=b'[{"id": "a", "output": "a"}, {"output": "b"}]')
    assert numeric_columns("x.csv", TINY) == ["score"]


def test_cli_refuses_an_empty_dimension_name(db_path, tmp_path):
    src = tmp_path / "tiny.csv"
    src.write_bytes(TINY)
    r = cli(db_path, "import", str(src), "--task", "T", "--map", "human_=score")
    assert r.returncode == 2 and "dimension name" in r.stderr


def test_data_page_maps_a_score_column_and_says_what_import_waits_for(db, monkeypatch):
    use_upload(monkeypatch, "upload", FakeUpload("tiny.csv", TINY))
    at = open_app_page("app_pages/data.py")
    assert at.button(key="do_import").disabled
    waits = [c.value for c in at.caption if c.value.startswith("Import waits for")]
    assert waits == ["Import waits for: where the file goes (a new or an existing task)."]
    said = [c.value.replace("\\", "") for c in at.caption]  # markdown-escaped text
    assert "no 'id' column: each item's id is its row number (1–2)" in said  # before the click
    assert at.selectbox(key="map_id").format_func(at.selectbox(key="map_id").value) == \
        "(row numbers)"
    at.radio(key="import_dest").set_value("a new task").run()
    at.text_input(key="import_task").input("T").run()
    waits = [c.value for c in at.caption if c.value.startswith("Import waits for")]
    assert waits == ["Import waits for: the new task's kind."]
    at.selectbox(key="import_kind").set_value("custom").run()
    assert not [c for c in at.caption if c.value.startswith("Import waits for")]
    assert at.multiselect(key="map_scores").options == ["score"]
    at.multiselect(key="map_scores").set_value(["score"]).run()
    at.text_input(key="map_dim_score").input("overall").run()
    assert any("2 items, 2 human scores (dimensions: overall)" in m.value for m in at.markdown)
    at.button(key="do_import").click().run()
    assert not at.exception, at.exception
    assert _scores(db, "T") == {("1", "overall"): 5.0, ("2", "overall"): 1.5}


def test_import_file_returns_its_notes(db, tmp_path):
    src = tmp_path / "t.csv"
    src.write_bytes(b"id,output,human_q\na,x,3\n")
    assert import_file(db, src, "t")["notes"] == []
