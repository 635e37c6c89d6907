"""Dimensions page actions that run as button callbacks: reorder dimensions and
sub-dimensions, save a sub-dimension's name, add a preset's seeds."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.checklists import editing as M
from checkeval_core.checklists.io import import_checklist
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from tests.conftest import APP


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def test_reorder_rename_and_preset(db, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"id": "r1", "source": "An article.", "output": "A summary."}) + "\n")
    import_file(db, p, "news", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({
        "alpha": {"definition": "a", "sub_dimensions": {"A1": {"seed": ["Is it a?"]},
                                                        "A2": {"seed": ["Is it b?"]}}},
        "beta": {"definition": "b", "sub_dimensions": {"B1": {"seed": ["Is it c?"]}}}}))
    import_checklist(db, "news", c)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/dimensions.py").run()
    at.selectbox(key="dim_task").select("news").run()
    at.button(key="dim_down").click().run()
    assert [d["name"] for d in M.dimensions(db, "news")] == ["beta", "alpha"]
    subs = M.dimensions(db, "news")[1]["sub_dimensions"]
    at.selectbox(key="dim_pick").select("alpha").run()
    at.button(key=f"sdn_{subs[0]['id']}").click().run()
    assert [s["name"] for s in M.dimensions(db, "news")[1]["sub_dimensions"]] == ["A2", "A1"]
    at.text_input(key=f"sn_{subs[0]['id']}").input("A-one").run()
    at.button(key=f"ss_{subs[0]['id']}").click().run()
    assert not at.exception
    assert {s["name"] for s in M.dimensions(db, "news")[1]["sub_dimensions"]} == {"A2", "A-one"}
    at.selectbox(key="preset").select("SummEval").run()
    at.button(key="preset_add").click().run()
    assert any(s.value.startswith("Added ") and "seed questions" in s.value for s in at.success)
    assert "coherence" in {d["name"] for d in M.dimensions(db, "news")}


def test_rename_dimension(db, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"id": "r1", "source": "An article.", "output": "A summary."}) + "\n")
    import_file(db, p, "news", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"alpha": {"definition": "a", "sub_dimensions": {
        "A1": {"seed": ["Is it a?"]}}}}))
    import_checklist(db, "news", c)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/dimensions.py").run()
    at.selectbox(key="dim_task").select("news").run()
    did = M.dimension_id(db, "news", "alpha")
    at.text_input(key=f"dn_{did}").input("gamma").run()
    at.text_area(key=f"dd_{did}").input("the g").run()
    at.button(key="dim_save").click().run()
    assert not at.exception
    assert [(d["name"], d["definition"]) for d in M.dimensions(db, "news")] == [("gamma", "the g")]
