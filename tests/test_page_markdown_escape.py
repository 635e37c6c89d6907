"""User text reaches Streamlit's Markdown escaped (security audit D8): a task, item, dimension
or sub-dimension named ``![](http://x.example/p.png)`` or ``[a](http://x)`` must render as
those characters, not as an image fetched from another host or a link. AppTests of the pages
that show such names; each element that renders Markdown (text and widget labels) is checked
for link or image syntax left unescaped."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from tests.conftest import APP
from tests.helpers import ROWS, analysis_page, run

IMG, LINK = "![](http://x.example/p.png)", "[a](http://x)"
TASK = f"t {IMG}"
# ``](`` not preceded by a backslash: Markdown would make a link or an image of it
RAW_LINK = re.compile(r"(?<!\\)\]\(")
MARKDOWN_ELEMENTS = ("markdown", "caption", "info", "warning", "error", "success", "subheader",
                     "title", "header")
LABELLED = ("radio", "checkbox", "toggle", "text_input", "selectbox", "multiselect", "button",
            "number_input")


def _task(db, tmp_path) -> str:
    rows = [{**r, "id": f"{r['id']} {IMG}",
             "scores": {LINK: r["scores"]["fluency"], "coherence": r["scores"]["coherence"]}}
            for r in ROWS]
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_file(db, p, TASK, kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({LINK: {"definition": "wording", "sub_dimensions": {
        IMG: {"seed": ["Is the summary grammatical?", "Is the wording natural?"]}}}}))
    import_checklist(db, TASK, c)
    freeze(db, TASK)
    return TASK


def _rendered(at: AppTest) -> list[str]:
    """What the page hands to Markdown: every text element's body and every widget's label."""
    out = [e.value for kind in MARKDOWN_ELEMENTS for e in getattr(at, kind)]
    return out + [w.label for kind in LABELLED for w in getattr(at, kind)]


def _assert_escaped(at: AppTest, must_show: str) -> None:
    assert not at.exception, at.exception
    texts = _rendered(at)
    assert any(must_show in t for t in texts), texts  # the name is there, escaped
    raw = [t for t in texts if RAW_LINK.search(t)]
    assert not raw, raw


def test_data_page_escapes_task_and_dimension_names(db, tmp_path):
    _task(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = TASK
    at.run()
    at.switch_page("app_pages/data.py").run()
    _assert_escaped(at, r"\[a\]\(http")  # the browse caption lists the dimensions
    at.radio(key="import_dest").set_value(at.radio(key="import_dest").options[1]).run()
    at.selectbox(key="import_existing").select(TASK).run()
    _assert_escaped(at, r"added to 't \!\[\]\(http")  # the existing task's name
    at.radio(key="import_dest").set_value(at.radio(key="import_dest").options[0]).run()
    at.text_input(key="import_task").input(TASK).run()
    _assert_escaped(at, r"A task named 't \!\[\]")  # the name clash warning


def test_traces_and_analysis_escape_item_ids_and_dimensions(db, tmp_path):
    task = _task(db, tmp_path)
    rid = run(db, task, "rocketeval")
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["task_name"] = task
    at.run()
    at.switch_page("app_pages/traces.py").run()
    at.multiselect(key="tr_runs").set_value([rid]).run()
    _assert_escaped(at, "of item d")  # the item's id above its output
    at = analysis_page(task)
    _assert_escaped(at, r"\[a\]\(http")  # the items behind a bar: run label · dimension
