"""A reject reason is stored with that rejection only: never on a later keep or edit, in the
core and on the Checklist review page as a browser drives it."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.checklists import editing as M
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from tests.conftest import APP


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def _task(db, tmp_path) -> list[int]:
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "context": "Hi?", "output": f"Fine {i}."})
                         + "\n" for i in range(2)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good reply", "sub_dimensions": {
        "Basics": {"seed": ["Is the reply polite?", "Is the reply short?",
                            "Is the reply correct?"]}}}}))
    import_checklist(db, "chat", c)
    return [q["id"] for q in M.questions(db, "chat")]


def test_core_refuses_a_reason_on_keep_or_edit(db, tmp_path):
    ids = _task(db, tmp_path)
    with pytest.raises(ValueError, match="only with a rejection"):
        decide(db, ids[:1], "alice", "keep", "too vague")
    with pytest.raises(ValueError, match="only with a rejection"):
        decide(db, ids[:1], "alice", "edit", "too vague", new_text="Is it kind?")
    assert db.execute("SELECT COUNT(*) FROM annotation").fetchone()[0] == 0  # nothing saved
    decide(db, ids[:1], "alice", "reject", "too vague")
    decide(db, ids[:1], "alice", "keep")  # the keep overrides the reject: its reason goes too
    assert db.execute("SELECT reason FROM question WHERE id = ?", [ids[0]]).fetchone()[0] == ""


class Browser:
    """Sends text boxes the way a browser does: a box keeps showing (and sends back) what was
    typed in it until the server sets a new value for it — deleting the widget's state on the
    server does not clear the box on the screen."""

    def __init__(self, at: AppTest):
        self.at, self.shown = at, {}

    def type(self, key: str, text: str) -> None:
        self.at.text_input(key=key).input(text).run()
        self.shown[key] = text
        self._sync()

    def click(self, key: str) -> None:
        for k, text in self.shown.items():
            self.at.text_input(key=k).input(text)
        self.at.button(key=key).click().run()
        self._sync()

    def select(self, key: str, value: list[int]) -> None:
        for k, text in self.shown.items():
            self.at.text_input(key=k).input(text)
        self.at.multiselect(key=key).set_value(value).run()
        self._sync()

    def _sync(self) -> None:
        for k in list(self.shown):
            box = self.at.text_input(key=k)
            if box.proto.set_value:  # the server replaced the box's text
                self.shown[k] = box.proto.value


def test_reject_then_keep_then_edit_stores_the_reason_on_the_reject_only(db, tmp_path):
    ids = _task(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/checklist.py").run()
    at.selectbox(key="rv_task").select("chat").run()
    b = Browser(at)
    b.type("rv_annotator", "alice")
    at.multiselect(key="rv_status").set_value(["proposed", "kept", "filtered", "rejected"]).run()
    b.select("rv_selected", [ids[2]])
    b.type("rv_reason", "off topic")
    b.click("rv_reject")
    assert at.text_input(key="rv_reason").value == "" and b.shown["rv_reason"] == ""
    b.select("rv_selected", [ids[1]])
    b.click("rv_keep")
    b.type("rv_newtext", "Is the reply brief?")
    b.click("rv_edit")
    assert not at.exception and not at.error
    rows = db.execute("SELECT question_id, value, reason FROM annotation WHERE kind = "
                      "'validation' ORDER BY question_id").fetchall()
    new_id = db.execute("SELECT id FROM question WHERE parent_id = ?", [ids[1]]).fetchone()[0]
    assert rows == [(ids[1], "edit", f"(edited into #{new_id})"), (ids[2], "reject", "off topic")]
    reasons = dict(db.execute("SELECT id, reason FROM question").fetchall())
    assert reasons[new_id] == "" and reasons[ids[2]] == "off topic"
    # a reason typed, then Keep pressed: refused with a message, nothing recorded
    b.select("rv_selected", [ids[0]])
    b.type("rv_reason", "meant as a rejection")
    b.click("rv_keep")
    assert any("only with a rejection" in e.value for e in at.error)
    assert db.execute("SELECT COUNT(*) FROM annotation WHERE question_id = ?",
                      [ids[0]]).fetchone()[0] == 0
