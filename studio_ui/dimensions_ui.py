"""Rendering helpers of the Dimensions page: the presets and checklist import / export box,
and the filter's scope, cost and button (Streamlit calls only; adding, importing, exporting
and filtering are ``checkeval_core.checklists``)."""

from __future__ import annotations

import json

import sqlite_utils
import streamlit as st

from checkeval_core.checklists import io as checklist_io
from checkeval_core.checklists.filtering import filter_dimension, filter_plan
from checkeval_core.checklists.seeds import PRESETS, add_preset_seeds
from checkeval_core.textsafe import md_escape
from studio_ui.errors import upload_failed
from studio_ui.question_results import show_filter_result

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
                st.error(str(e))
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

