"""Uploads are parsed in memory: a client-sent file name (``../../x.json``, an absolute path)
never becomes a path on the server (issue 13, item 1).

The Dimensions page is driven through AppTest with the file uploader replaced by an object
shaped like Streamlit's ``UploadedFile``; the temporary folder is moved under ``tmp_path`` so
that the old code's write (``Path(tmp) / up.name``) would land where the test looks.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from checkeval_core.analysis.external import import_metric
from checkeval_core.annotation.files import import_annotations
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.io import import_checklist
from checkeval_core.datasets import import_file
from tests.conftest import open_app_page
from tests.helpers import FakeUpload, use_upload  # noqa: F401

CHECKLIST = {"coherence": {"definition": "Well organised.", "sub_dimensions": {
    "structure": {"seed": ["Is the summary well structured?", "Does it flow?"]}}}}




def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() and not p.name.startswith("test.db")}


def hostile_names(tmp_path: Path) -> list[str]:
    return ["../../x.json", "../../../x.json", str(tmp_path / "a" / "abs.json"),
            "/tmp/abs-h1.json"]


@pytest.fixture
def deep_tmp(tmp_path, monkeypatch) -> Path:
    """``tempfile`` creates its folders three levels under ``tmp_path``."""
    d = tmp_path / "a" / "b" / "c"
    d.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d




def prepare(db, tmp_path) -> set[Path]:
    outside = Path("/tmp/abs-h1.json")
    outside.unlink(missing_ok=True)
    src = tmp_path / "d.csv"
    src.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, src, "t")
    return files_under(tmp_path)


def nothing_written(tmp_path: Path, before: set[Path]) -> None:
    assert files_under(tmp_path) == before  # nothing written anywhere under the test folder
    assert not Path("/tmp/abs-h1.json").exists()
    assert not list((tmp_path / "a").rglob("*.*"))


@pytest.mark.parametrize("which", range(4))
def test_dimensions_page_upload_writes_nothing(db, tmp_path, deep_tmp, monkeypatch, which):
    before = prepare(db, tmp_path)
    use_upload(monkeypatch, "ck_upload",
               FakeUpload(hostile_names(tmp_path)[which], json.dumps(CHECKLIST).encode()))
    at = open_app_page("app_pages/dimensions.py")
    at.button(key="ck_import").click().run()
    assert not at.exception, at.exception
    assert any("Imported 2 questions" in s.value for s in at.success)
    assert {q["text"] for q in questions(db, "t")} == {"Is the summary well structured?",
                                                       "Does it flow?"}
    nothing_written(tmp_path, before)


@pytest.mark.parametrize("which", range(4))
def test_data_page_upload_writes_nothing(db, tmp_path, deep_tmp, monkeypatch, which):
    before = prepare(db, tmp_path)
    name = hostile_names(tmp_path)[which].replace(".json", ".csv")
    use_upload(monkeypatch, "upload", FakeUpload(name, b"id,output\n7,seven\n8,eight\n"))
    at = open_app_page("app_pages/data.py")
    at.radio(key="import_dest").set_value("a new task").run()
    at.text_input(key="import_task").input("up").run()
    at.selectbox(key="import_kind").set_value("custom").run()
    at.button(key="do_import").click().run()
    assert not at.exception, at.exception
    assert any("Imported 2 items" in s.value for s in at.success)
    assert db.execute("SELECT COUNT(*) FROM item i JOIN task t ON t.id = i.task_id "
                      "WHERE t.name = 'up'").fetchone()[0] == 2
    nothing_written(tmp_path, before)


@pytest.mark.parametrize("which", range(4))
def test_analysis_page_metric_upload_writes_nothing(db, tmp_path, deep_tmp, monkeypatch, which):
    before = prepare(db, tmp_path)
    name = hostile_names(tmp_path)[which].replace(".json", ".csv")
    use_upload(monkeypatch, "an_metric_file", FakeUpload(name, b"item_id,c\n1,0.5\n"))
    at = open_app_page("app_pages/analysis.py")
    at.button(key="an_metric_import").click().run()
    assert not at.exception, at.exception
    assert any("Imported 1 scores" in s.value for s in at.success)
    assert db.execute("SELECT COUNT(*) FROM external_score").fetchone()[0] == 1
    nothing_written(tmp_path, before)


def test_importers_take_bytes_and_never_open_the_name(db, tmp_path, monkeypatch):
    """Every importer given ``data=`` ignores the name as a path (a name that exists on disk
    with other content is not read, a name that would escape is not written)."""
    monkeypatch.chdir(tmp_path)
    decoy = tmp_path / "decoy.json"
    decoy.write_text("not json at all", encoding="utf-8")
    before = files_under(tmp_path)
    res = import_file(db, "../../decoy.json", "t", filename="../../decoy.json",
                      data=b'[{"id": "1", "output": "x"}]')
    assert res["n_items"] == 1
    res = import_checklist(db, "t", str(decoy), data=json.dumps(CHECKLIST).encode())
    assert res["n_questions"] == 2
    q = questions(db, "t")[0]["text"]
    res = import_annotations(db, "t", "/etc/passwd.csv",
                             data=f"annotator,item_id,question,answer\nann,1,{q},yes\n".encode())
    assert res["n_annotations"] == 1
    res = import_metric(db, "t", "../../rouge.csv", data=b"item_id,coherence\n1,0.5\n")
    assert res["metric"] == "rouge" and res["n_scores"] == 1
    assert files_under(tmp_path) == before


def test_data_page_import_is_disabled_for_a_rejected_file(db, monkeypatch):
    use_upload(monkeypatch, "upload", FakeUpload("bad.csv", b"id,output\n7,seven\n7,again\n"))
    at = open_app_page("app_pages/data.py")
    at.radio(key="import_dest").set_value("a new task").run()
    at.text_input(key="import_task").input("t2").run()
    at.selectbox(key="import_kind").set_value("custom").run()
    assert any("cannot be imported" in e.value for e in at.error)
    assert at.button(key="do_import").disabled
    use_upload(monkeypatch, "upload", FakeUpload("good.csv", b"id,output\n7,seven\n8,eight\n"))
    at.run()
    assert not at.button(key="do_import").disabled
