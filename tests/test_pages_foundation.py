"""AppTest of the Home and Data pages (through app.py's navigation)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from checkeval_core.demo import load_demo
from tests.helpers import load_demo_copy

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_home_loads_demo(db):
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert at.title[0].value == "CheckEval Studio"
    at.button(key="load_demo").click().run()
    assert not at.exception
    assert any("demo tasks are loaded" in s.value for s in at.success)
    assert db.execute("SELECT COUNT(*) FROM item").fetchone()[0] == 192 + 72


def test_data_page_browses_items(db):
    load_demo_copy(db)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/data.py").run()
    assert not at.exception
    assert at.selectbox(key="browse_task").value == "summeval-demo"
    df = at.dataframe[0].value
    # one page of 100 items read from the store, the rest on page 2 (192 in all)
    assert len(df) == 100 and "human coherence" in df.columns
    page = next(n for n in at.number_input if n.key and n.key.startswith("page_"))
    page.set_value(2).run()
    assert len(at.dataframe[0].value) == 92
    assert not at.get("download_button")  # the whole task is read for export only on request
    at.toggle(key="exp_on").set_value(True).run()
    assert len(at.get("download_button")) == 4
    at.selectbox(key="browse_task").select("topical-chat-demo").run()
    assert len(at.dataframe[0].value) == 72
    # the full item texts are rendered as plain text elements
    assert any("so , i 'm reading" in t.value for t in at.text)


def test_home_lists_every_loaded_demo_task(db, monkeypatch):
    """The loaded-demo message names every demo task, the instruction-following one too; a
    demo missing that task still offers to load it."""
    monkeypatch.setenv("CHECKEVAL_DEMO_INSTRUCTION", "0")
    load_demo(db)  # the two original tasks only
    monkeypatch.setenv("CHECKEVAL_DEMO_INSTRUCTION", "1")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert not any("demo tasks are loaded" in s.value for s in at.success)
    at.button(key="load_demo").click().run()
    assert not at.exception
    (msg,) = [s.value for s in at.success if "demo tasks are loaded" in s.value]
    for task in ("summeval-demo", "topical-chat-demo", "alpacaeval-demo"):
        assert task in msg


def test_package_metadata_uses_an_spdx_licence():
    """setuptools ≥ 77 warns three times on every install about a ``{text = ...}`` licence."""
    import tomllib

    meta = tomllib.loads((Path(APP).parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["license"] == "MIT"
    assert any(r.replace(" ", "").startswith("setuptools>=77")
               for r in meta["build-system"]["requires"])


def test_pages_name_a_file_that_is_not_a_checkeval_database(tmp_path, monkeypatch):
    """CHECKEVAL_DB pointing at a text file: every page says which file and how to fix it, with
    no traceback, and the file is left as it was."""
    bad = tmp_path / "notes.txt"
    bad.write_text("not sqlite at all\n" * 20)
    monkeypatch.setenv("CHECKEVAL_DB", str(bad))
    at = AppTest.from_file(APP, default_timeout=120).run()
    for page in ("app_pages/home.py", "app_pages/analysis.py", "app_pages/run.py"):
        at.switch_page(page).run()
        assert not at.exception, page
        (msg,) = [e.value for e in at.error]
        assert f"not a CheckEval database: {bad}" in msg and "CHECKEVAL_DB" in msg
    assert bad.read_text() == "not sqlite at all\n" * 20
