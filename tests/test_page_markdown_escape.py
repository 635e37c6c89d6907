"""User text reaches Streamlit's Markdown escaped (security audit D8): a task, item, dimension
or sub-dimension named ``![](http://x.example/p.png)`` or ``[a](http://x)`` must render as
those characters, not as an image fetched from another host or a link. AppTests of the pages
that show such names; each element that renders Markdown (text and widget labels) is checked
for link or image syntax left unescaped."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

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


# -- a guard: user text in an f-string handed to Markdown goes through md_escape --------------
ROOT = Path(__file__).resolve().parent.parent
#: Streamlit calls whose text (first argument, ``label``, ``help``) is rendered as Markdown.
RENDERS_MARKDOWN = {"markdown", "caption", "write", "subheader", "header", "title", "info",
                    "warning", "error", "success", "toast", "radio", "checkbox", "toggle",
                    "text_input", "text_area", "selectbox", "multiselect", "button",
                    "number_input", "expander", "page_link", "download_button", "slider",
                    "select_slider", "metric", "form_submit_button", "popover"}
#: Row fields and variable names that hold people's or files' text (names, ids, labels,
#: judge specs, messages quoting them).
USER_KEYS = {"item_id", "dimension", "sub-dimension", "name", "task", "label", "judge",
             "judge_spec", "spec", "text", "question", "annotator", "group_id", "metric",
             "system", "coordinator", "new_text", "error", "message", "why", "biased", "reason"}
USER_NAMES = {"task", "target", "dim", "pick_dim", "spec", "name", "label", "labels", "judge",
              "judge_a", "e", "err", "who", "c", "item_id", "dims", "waiting"}
#: (file, expression) shown raw on purpose, with the reason.
RAW_OK = {
    ("app_pages/compare_answers.py", "label"): "the page's own field titles (Query, Context)",
    ("app_pages/data.py", "dims"): "md_escape'd on the line above",
    ("app_pages/home.py", "label"): "the page's own list of pages",
    ("studio_ui/rankings_ui.py", "name"): "the letters A and B",
    ("studio_ui/rankings_ui.py", "who"): "md_escape'd on the line above",
    ("studio_ui/dimensions_ui.py", "add_preset_seeds(db, task, preset)['n_questions']"):
        "a count",
    ("studio_ui/frame.py", "e"): "the operator's own CHECKEVAL_DB path, before any page",
    ("studio_ui/jobs_ui.py", "_ci(o['ci'], o['reason'])"): "_ci md_escapes the reason",
    ("studio_ui/annotate_ui.py", "label.lower()"): "the page's own names of a task's output",
    ("studio_ui/analysis_ui.py", "line"): "note_lines md_escapes each (escaped twice, the "
                                          "notes showed their backslashes)",
}
#: Files the scan leaves out (none: the Annotate page's texts are escaped too)
NOT_SCANNED: set[str] = set()


def _escaped(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "md_escape"


def _user_text(expr: ast.AST) -> bool:
    if any(_escaped(s) for s in ast.walk(expr)):
        return False
    for s in ast.walk(expr):
        if isinstance(s, ast.Subscript) and isinstance(s.slice, ast.Constant) \
                and s.slice.value in USER_KEYS:
            return True
        if isinstance(s, ast.Name) and s.id in USER_NAMES:
            return True
        if isinstance(s, ast.Attribute) and s.attr in USER_KEYS:  # actor.name
            return True
    return False


def unescaped_user_text(root: Path) -> list[str]:
    """``file:line: expression`` for each user-text value formatted into an f-string that a
    Markdown-rendering Streamlit call receives without md_escape."""
    found = []
    files = sorted([*(root / "app_pages").glob("*.py"), *(root / "studio_ui").glob("*.py")])
    for f in files:
        if f.name in NOT_SCANNED:
            continue
        rel = f.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(f.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in RENDERS_MARKDOWN):
                continue
            texts = [*node.args[:1], *(k.value for k in node.keywords
                                       if k.arg in ("label", "help", "body"))]
            for text in texts:
                if _escaped(text):
                    continue
                for sub in ast.walk(text):
                    if isinstance(sub, ast.FormattedValue) and _user_text(sub.value) \
                            and (rel, ast.unparse(sub.value)) not in RAW_OK:
                        found.append(f"{rel}:{node.lineno}: {ast.unparse(sub.value)}")
    return found


def test_the_guard_sees_an_unescaped_name(tmp_path):
    (tmp_path / "app_pages").mkdir()
    (tmp_path / "studio_ui").mkdir()
    (tmp_path / "app_pages" / "p.py").write_text(
        'st.caption(f"Task {task} · {md_escape(name)}")\n'
        'st.radio(f"{q[\'text\']}", ["yes"])\n'
        'st.checkbox("Leave out", help=f"votes of {who}")\n'
        'st.caption(md_escape(f"{labels[r]}"))\n')
    assert unescaped_user_text(tmp_path) == ["app_pages/p.py:1: task",
                                             "app_pages/p.py:2: q['text']",
                                             "app_pages/p.py:3: who"]


def test_user_text_reaches_markdown_escaped():
    found = unescaped_user_text(ROOT)
    assert not found, ("wrap these in md_escape (checkeval_core.textsafe), or add them to "
                       "RAW_OK with the reason:\n" + "\n".join(found))


def test_escaped_text_has_no_bare_link_left():
    """GFM finds bare URLs and e-mails in the text after Markdown is parsed (a backslash does
    not stop it): a word joiner inside each keeps it text; the text reads the same."""
    from checkeval_core.textsafe import md_escape, md_inert

    t = "see https://evil.example/a, WWW.evil.example or bob@evil.example; ![x](http://e/p.png)"
    for out in (md_escape(t), md_inert(t)):
        assert "://" not in out and "www." not in out.lower() and "@e" not in out
        assert out.replace("\u2060", "").replace("\\", "") == t
    assert md_inert("Is the built-in, 3.5-point scale (a) used?") == \
        "Is the built-in, 3.5-point scale (a) used?"  # read aloud as typed
    assert md_inert("![x](u) [y](v) <z>") == "!\\[x\\](u) \\[y\\](v) \\<z>"
