"""Exports: CSV formula neutralising, numbers untouched, JSONL as data."""

import csv
import io
import json

from checkeval_core.datasets import import_file
from checkeval_core.export import neutralize_cell, rows_to_csv, write_rows
from checkeval_core.tasks import export_rows


def test_formula_cells_are_neutralised():
    text = rows_to_csv([{"a": "=1+1", "b": "+cmd", "c": "-2+3", "d": "@SUM(A1)", "e": "ok",
                         "f": -0.5, "g": 3}])
    row = list(csv.DictReader(io.StringIO(text)))[0]
    assert row == {"a": "'=1+1", "b": "'+cmd", "c": "'-2+3", "d": "'@SUM(A1)", "e": "ok",
                   "f": "-0.5", "g": "3"}
    assert neutralize_cell("\t=x") == "'\t=x"
    assert neutralize_cell(-1.25) == -1.25


def test_export_items_and_scores(db, tmp_path):
    src = tmp_path / "d.csv"
    src.write_text('id,output,human_coherence\nx1,"=HYPERLINK(""http://e"")",4.5\n'
                   "x2,fine,-1\n", encoding="utf-8")
    import_file(db, src, "t")
    out = tmp_path / "items.csv"
    assert write_rows(export_rows(db, "t", "items"), "csv", out) == 2
    got = list(csv.DictReader(out.open(encoding="utf-8")))
    assert got[0]["output"].startswith("'=HYPERLINK")
    assert got[1]["human_coherence"] == "-1.0"
    out2 = tmp_path / "scores.jsonl"
    write_rows(export_rows(db, "t", "scores"), "jsonl", out2)
    lines = [json.loads(x) for x in out2.read_text().splitlines()]
    assert {(r["item_id"], r["value"]) for r in lines} == {("x1", 4.5), ("x2", -1.0)}
