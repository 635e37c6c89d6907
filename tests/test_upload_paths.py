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
from checkeval_core.store import db_path
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


def test_reimporting_a_metric_asks_before_it_replaces(db, tmp_path, monkeypatch):
    """Audit doubt 5: a metric of the same name, or ratings of the same source, was replaced
    silently. The core refuses with ``replace=False`` (what a page asks with) and says what
    would go; the page asks, Cancel keeps the stored scores, *Replace* replaces them and says
    how many went. The CLI keeps replacing and says so (``replaced``)."""
    from checkeval_core.safeio import WouldReplace

    prepare(db, tmp_path)
    import_metric(db, "t", "m.csv", data=b"item_id,c\n1,0.5\n")
    with pytest.raises(WouldReplace, match="a metric named 'm' is already stored \\(1 scores"):
        import_metric(db, "t", "m.csv", data=b"item_id,c\n1,0.9\n", replace=False)
    assert db.execute("SELECT value FROM external_score").fetchall() == [(0.5,)]
    use_upload(monkeypatch, "an_metric_file", FakeUpload("m.csv", b"item_id,c\n1,0.9\n"))
    at = open_app_page("app_pages/analysis.py")
    at.button(key="an_metric_import").click().run()
    assert any("A metric named 'm' is already stored" in w.value and "Replace it?" in w.value
               for w in at.warning)
    at.button(key="an_metric_replace_cancel").click().run()
    assert db.execute("SELECT value FROM external_score").fetchall() == [(0.5,)]
    at.button(key="an_metric_import").click().run()
    at.button(key="an_metric_replace_confirm").click().run()
    assert not at.exception, at.exception
    assert any("replacing its 1 earlier scores" in s.value for s in at.success)
    assert db.execute("SELECT value FROM external_score").fetchall() == [(0.9,)]


def test_reimporting_ratings_asks_before_it_replaces(db, monkeypatch):
    """As for a metric: ratings of the same source are replaced once the person said so."""
    from checkeval_core.annotation.preferences import import_ratings
    from checkeval_core.safeio import WouldReplace
    from tests.helpers import RANKING_TASK, RATINGS_CSV, build_ranking_task, open_rankings_page

    build_ranking_task(db)  # ratings 'ref.csv' stored
    with pytest.raises(WouldReplace, match="ratings of source 'ref.csv' are already stored"):
        import_ratings(db, RANKING_TASK, data=RATINGS_CSV.encode(), filename="ref.csv",
                       replace=False)
    use_upload(monkeypatch, "rk_rating_file",
               FakeUpload("ref.csv", RATINGS_CSV.replace("1100", "1150").encode()))
    at = open_rankings_page()
    at.button(key="rk_rating_import").click().run()
    assert any("Ratings of source 'ref" in w.value and "Replace it?" in w.value
               for w in at.warning)
    mid = "SELECT rating FROM system_rating WHERE system_id = 'sys-mid'"
    assert db.execute(mid).fetchone()[0] == 1100
    at.button(key="rk_rating_replace_confirm").click().run()
    assert not at.exception, at.exception
    assert any("replacing 4 earlier ratings" in s.value for s in at.success)
    assert db.execute(mid).fetchone()[0] == 1150


def test_cli_ratings_import_says_what_it_replaced(db, tmp_path):
    from tests.helpers import RANKING_TASK, RATINGS_CSV, build_ranking_task, run_cli

    build_ranking_task(db, ratings=False)
    f = tmp_path / "ref.csv"
    f.write_text(RATINGS_CSV, encoding="utf-8")
    args = ["ratings", "import", str(f), "--task", RANKING_TASK]
    first = run_cli(args, db=db_path(db), check=True)
    assert "replaced" not in first.stdout
    again = run_cli(args, db=db_path(db), check=True)
    assert "replaced the 4 ratings stored under that source" in again.stdout
    assert db.execute("SELECT COUNT(*) FROM system_rating").fetchone()[0] == 4
