"""Rendering helpers of the Dimensions page: the presets and checklist import / export box
(Streamlit calls only; adding, importing and exporting are ``checkeval_core.checklists``)."""

from __future__ import annotations

import json

import sqlite_utils
import streamlit as st

from checkeval_core.checklists import io as checklist_io
from checkeval_core.checklists.seeds import PRESETS, add_preset_seeds
from studio_ui.errors import upload_failed


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
