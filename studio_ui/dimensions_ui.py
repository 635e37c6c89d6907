"""Rendering helpers of the Dimensions page: the presets and checklist import / export box,
the filter's scope, cost and button, and the test of proposed questions on dev items
(Streamlit calls only; adding, importing, exporting, filtering and testing are
``checkeval_core.checklists``)."""

from __future__ import annotations

import json

import sqlite_utils
import streamlit as st

from checkeval_core.checklists import io as checklist_io
from checkeval_core.checklists.evidence import DEFAULT_ITEMS, MAX_ITEMS, question_evidence
from checkeval_core.checklists.filtering import filter_dimension, filter_plan
from checkeval_core.checklists.seeds import PRESETS, add_preset_seeds
from checkeval_core.runs.estimate import cost_line, estimate_evidence
from checkeval_core.textsafe import md_escape
from studio_ui.errors import upload_failed
from studio_ui.question_results import show_evidence_result, show_filter_result

_SCOPES = {"proposed": "New proposals only (kept questions are context for redundancy)",
           "all": "Every proposed and kept question"}


def presets_and_files(db: sqlite_utils.Database, task: str) -> None:
    """Add a preset's seeds, import a checklist file (refused with a clean message), export."""
    with st.expander("Presets and import / export"):
        c1, c2 = st.columns(2)
        preset = c1.selectbox("Preset (the CheckEval authors' seed questions)", list(PRESETS),
                              key="preset")
        if c1.button("Add preset seeds", key="preset_add"):
            st.success(f"Added {add_preset_seeds(db, task, preset)['n_questions']} seed "
                       "questions")
        up = c2.file_uploader("Import a checklist (.json or CheckEval .yaml)",
                              type=["json", "yaml", "yml"], key="ck_upload")
        if up is not None and c2.button("Import checklist", key="ck_import"):
            try:  # parsed in memory: the client's file name only names the format
                res = checklist_io.import_checklist(db, task, up.name, author="import",
                                                    data=up.getvalue())
                st.success(f"Imported {res['n_questions']} questions")
            except checklist_io.ChecklistError as e:
                st.error(md_escape(str(e)))
            except Exception as e:  # noqa: BLE001 - no traceback or server path on the page
                upload_failed(e)
        st.download_button("Export working checklist (JSON)",
                           json.dumps(checklist_io.export_checklist(db, task),
                                      ensure_ascii=False, indent=2),
                           f"{task}-checklist.json", key="ck_export")


def filter_block(db: sqlite_utils.Database, task: str, dimension: str, judge: str) -> None:
    """What to filter, what it will cost (judge calls, and time at the measured rate) — said
    before the button is pressed — and the button."""
    scope = st.radio("Filter", list(_SCOPES), format_func=_SCOPES.get, key="filter_scope",
                     horizontal=True)
    try:
        plan = filter_plan(db, task, dimension, judge, scope=scope)
    except ValueError as e:  # nothing to filter in this scope, or a bad judge spec
        st.info(md_escape(str(e)))
        return
    st.caption(md_escape(plan["line"]))
    if st.button("Filter this dimension", key="filter_run"):
        with st.spinner(f"Filtering: {plan['calls']} judge call(s)…"):
            res = filter_dimension(db, task, dimension, judge, scope=scope)
        show_filter_result(res)



def evidence_block(db: sqlite_utils.Database, task: str, dimension: str, judge: str) -> None:
    """*Test proposed questions on dev items*: the sample size, the cost said before the
    button, the button, and each question's evidence (also shown on Checklist review)."""
    st.markdown("**Test the proposed questions on dev items** — the judge answers each on a "
                "stratified sample of dev items; review then shows how well it separates the "
                "outputs people scored high from those they scored low.")
    n = int(st.number_input("Dev items", 4, MAX_ITEMS, DEFAULT_ITEMS, key="ev_items"))
    line, notes = cost_line(estimate_evidence, db, task, judge, "proposed", n, dimension)
    st.caption(md_escape(line + (f" ({'; '.join(notes)})" if notes else "")))
    if st.button("Test proposed questions", key="ev_run"):
        with st.spinner("The judge answers the questions on dev items…"):
            res = question_evidence(db, task, judge, "proposed", n, dimension=dimension)
        show_evidence_result(res)
