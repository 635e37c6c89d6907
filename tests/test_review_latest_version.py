"""Checklist review opens the diff and the export on the latest version, also right after a
new version is frozen in the same session."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.checklists import editing as M
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from tests.conftest import APP


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def test_diff_and_export_follow_the_latest_version(db, tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"id": "r1", "context": "Hi?", "output": "Fine."}) + "\n")
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "Basics": {"seed": ["Is it polite?", "Is it short?", "Is it correct?"]}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/checklist.py").run()
    at.selectbox(key="rv_task").select("chat").run()
    assert at.selectbox(key="rv_exp_1").value == 1

    decide(db, [M.questions(db, "chat")[0]["id"]], "rev", "reject", "vague")
    at.button(key="rv_freeze").click().run()
    assert any("Version 2" in s.value for s in at.success)
    boxes = {b.label: b.value for b in at.selectbox if b.label in ("Diff from", "to",
                                                                   "Export version")}
    assert boxes == {"Diff from": 1, "to": 2, "Export version": 2}
    assert any("0 added, 1 removed, 0 edited" in m.value for m in at.markdown)
