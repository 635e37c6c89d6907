"""Uploads on the Data and Dimensions pages: a hostile file gets a clean message (file, line,
field) and never a traceback or a server path; where an upload goes is the person's choice.

The uploader is replaced by an object shaped like Streamlit's ``UploadedFile`` (as in
tests/test_upload_paths.py).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from checkeval_core.datasets import import_file
from checkeval_core.textsafe import md_escape
from tests.conftest import open_app_page
from tests.helpers import FakeUpload, use_upload

ROOT = Path(__file__).resolve().parent.parent
SURROGATE_JSONL = b'{"id": "1", "output": "ok"}\n{"id": "2", "output": "a\\ud800b"}\n'


def page_text(at) -> str:
    """Everything the page shows as text (messages, markdown, captions, code)."""
    parts = []
    for kind in ("error", "warning", "success", "info", "markdown", "caption", "code",
                 "exception"):
        for el in getattr(at, kind):
            parts.append(str(getattr(el, "value", "")))
            parts.extend(str(x) for x in getattr(el, "stack_trace", []) or [])
    return "\n".join(parts)


def no_server_detail(at) -> None:
    text = page_text(at)
    assert not at.exception, at.exception
    assert "Traceback" not in text
    for path in (str(ROOT), "/site-packages/", ".py\"", "/tmp/"):
        assert path not in text, (path, text)


@pytest.fixture
def task_t(db, tmp_path):
    src = tmp_path / "d.csv"
    src.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, src, "t")
    return "t"


def test_streamlit_config_hides_error_details():
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert str(cfg["client"]["showErrorDetails"]).lower() in ("type", "none", "false")


def test_data_page_surrogate_upload_is_refused_cleanly(db, task_t, monkeypatch):
    use_upload(monkeypatch, "upload", FakeUpload("x.jsonl", SURROGATE_JSONL))
    at = open_app_page("app_pages/data.py")
    at.radio(key="import_dest").set_value("a new task").run()
    at.text_input(key="import_task").input("s").run()
    at.selectbox(key="import_kind").set_value("custom").run()
    no_server_detail(at)
    msg = "\n".join(c.value for c in at.code)
    assert "x.jsonl, line 2, field 'output'" in msg and "surrogate" in msg
    assert at.button(key="do_import").disabled
    assert db.execute("SELECT COUNT(*) FROM task").fetchone()[0] == 1


def test_data_page_unexpected_error_shows_no_traceback(db, task_t, monkeypatch):
    import checkeval_core.datasets as D

    def boom(*a, **k):
        raise RuntimeError(f"{ROOT}/checkeval_core/secret.py exploded")

    monkeypatch.setattr(D, "parse_rows", boom)
    use_upload(monkeypatch, "upload", FakeUpload("x.csv", b"id,output\n1,x\n"))
    at = open_app_page("app_pages/data.py")
    no_server_detail(at)
    assert any("RuntimeError" in e.value and "nothing was imported" in e.value
               for e in at.error)


def test_dimensions_page_surrogate_and_unexpected_error(db, task_t, monkeypatch):
    use_upload(monkeypatch, "ck_upload",
               FakeUpload("c_seed.yaml", b'sub_aspect:\n  s: "Is it \\ud800?"\n'))
    at = open_app_page("app_pages/dimensions.py")
    at.button(key="ck_import").click().run()
    no_server_detail(at)
    where = md_escape("c_seed.yaml, line 2, field 'sub_aspect.s'")  # shown as text
    assert any(where in e.value and "surrogate" in e.value
               for e in at.error), [e.value for e in at.error]

    import checkeval_core.checklists.io as IO

    def boom(*a, **k):
        raise OSError(f"{ROOT}/data/x.json: disk on fire")

    monkeypatch.setattr(IO, "import_checklist", boom)
    at.button(key="ck_import").click().run()
    no_server_detail(at)
    assert any("OSError" in e.value for e in at.error)


def test_data_page_destination_is_chosen_not_preset(db, task_t, monkeypatch):
    """The current task is not pre-filled as the target, nor ``custom`` as the kind: Import
    stays disabled until the person says where the file goes."""
    use_upload(monkeypatch, "upload", FakeUpload("new.csv", b"id,output\n7,seven\n8,eight\n"))
    at = open_app_page("app_pages/data.py")
    at.session_state["task_name"] = "t"
    at.run()
    assert at.radio(key="import_dest").value is None
    assert at.button(key="do_import").disabled
    at.radio(key="import_dest").set_value("a new task").run()
    assert at.text_input(key="import_task").value == ""
    assert at.selectbox(key="import_kind").value is None
    at.text_input(key="import_task").input("t").run()  # the existing name: not silently added
    assert any("already exists" in w.value for w in at.warning)
    assert at.button(key="do_import").disabled
    at.radio(key="import_dest").set_value("an existing task (its items are added)").run()
    at.selectbox(key="import_existing").set_value("t").run()
    assert any("added to 't'" in c.value for c in at.caption)
    at.button(key="do_import").click().run()
    assert not at.exception, at.exception
    assert any("added to the task" in s.value for s in at.success)
    assert db.execute("SELECT COUNT(*) FROM item").fetchone()[0] == 3
