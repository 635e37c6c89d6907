"""Dimensions: define what "good" means — dimensions, sub-dimensions, seed questions — then
generate (diversify / elaborate) and filter questions with a judge."""

import json
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from checkeval_core.checklists import model as M
from checkeval_core.checklists.augment import augment, default_mode, generation_judge
from checkeval_core.checklists.filtering import filter_dimension
from checkeval_core.checklists.io import ChecklistError, export_checklist, import_checklist
from checkeval_core.config import data_dir
from checkeval_core.store import open_db, task_id
from checkeval_core.textsafe import md_escape
from studio_ui.widgets import known_user, task_picker

st.title("Dimensions")
if "dim_flash" in st.session_state:
    st.success(st.session_state.pop("dim_flash"))
db = open_db()
task = task_picker(db, "dim_task", "No task yet: load the demo on the Home page or import data on the Data page.")
tid = task_id(db, task)

with st.expander("Presets and import / export"):
    c1, c2 = st.columns(2)
    preset = c1.selectbox("Preset (the CheckEval authors' seed questions)",
                          ["SummEval", "Topical-Chat"], key="preset")
    if c1.button("Add preset seeds", key="preset_add"):
        src = json.loads((data_dir() / "checklists" / ("summeval.json" if preset == "SummEval"
                                                        else "topical_chat.json")).read_text())
        seeds_only = {d: {"definition": v["definition"], "sub_dimensions": {
            s: {"seed": q["seed"]} for s, q in v["sub_dimensions"].items()}}
            for d, v in src.items()}
        with tempfile.TemporaryDirectory() as tmp:
            p = Path(tmp) / "preset.json"
            p.write_text(json.dumps(seeds_only))
            res = import_checklist(db, task, p, author="preset")
        st.success(f"Added {res['n_questions']} seed questions")
    up = c2.file_uploader("Import a checklist (.json or CheckEval .yaml)", type=["json", "yaml",
                                                                                "yml"],
                          key="ck_upload")
    if up is not None and c2.button("Import checklist", key="ck_import"):
        try:  # parsed in memory: the client's file name only names the format
            res = import_checklist(db, task, up.name, author="import", data=up.getvalue())
            st.success(f"Imported {res['n_questions']} questions")
        except ChecklistError as e:
            st.error(str(e))
        except Exception as e:  # noqa: BLE001 - no traceback or server path on the page
            from studio_ui.errors import upload_failed

            upload_failed(e)
    st.download_button("Export working checklist (JSON)",
                       json.dumps(export_checklist(db, task), ensure_ascii=False, indent=2),
                       f"{task}-checklist.json", key="ck_export")

dims = M.dimensions(db, task)
st.subheader("Dimensions")
with st.form("add_dim", clear_on_submit=True):
    c1, c2 = st.columns([1, 3])
    new_name = c1.text_input("New dimension")
    new_def = c2.text_input("Definition")
    if st.form_submit_button("Add dimension") and new_name.strip():
        M.ensure_dimension(db, tid, new_name.strip(), new_def)
        st.session_state["dim_pick"] = new_name.strip()  # the editor opens on the new one
        st.rerun()
if not dims:
    st.info("No dimension yet: add one, or use a preset above.")
    st.stop()

dim_name = st.selectbox("Dimension", [d["name"] for d in dims], key="dim_pick")
dim = next(d for d in dims if d["name"] == dim_name)
c1, c2, c3, c4, c5 = st.columns([1, 3, 0.5, 0.5, 0.4])
ren = c1.text_input("Name", dim["name"], key=f"dn_{dim['id']}")
if c5.button("↑", key="dim_up"):
    M.move(db, "dimension", dim["id"], -1)
    st.rerun()
if c5.button("↓", key="dim_down"):
    M.move(db, "dimension", dim["id"], 1)
    st.rerun()
dfn = c2.text_area("Definition", dim["definition"], key=f"dd_{dim['id']}", height=80)
if c3.button("Save", key="dim_save"):
    M.update_dimension(db, dim["id"], ren, dfn)
    st.rerun()
# Deleting is two steps (Delete, then confirm), and the core refuses while any human
# annotation, review decision or settled answer references the dimension's questions.
if c4.button("Delete", key="dim_delete"):
    st.session_state["dim_confirm"] = dim["id"]
if st.session_state.get("dim_confirm") == dim["id"]:
    with st.container(border=True):
        st.warning(f"Delete the dimension {md_escape(dim['name'])} with its "
                   f"{len(dim['sub_dimensions'])} sub-dimension(s) and all their questions? "
                   "This cannot be undone.")
        k1, k2 = st.columns(2)
        if k1.button("Confirm delete", key="dim_delete_confirm", type="primary"):
            st.session_state.pop("dim_confirm", None)
            try:
                M.delete_dimension(db, dim["id"])
            except M.InUse as e:
                st.error(str(e))
            else:
                st.session_state["dim_flash"] = "Dimension deleted"
                st.rerun()
        if k2.button("Cancel", key="dim_delete_cancel"):
            st.session_state.pop("dim_confirm", None)
            st.rerun()

st.markdown("**Sub-dimensions and seed questions** (phrase questions so that *Yes* = better)")
for s in dim["sub_dimensions"]:
    with st.container(border=True):
        a, b, c, d, e = st.columns([2, 3, 0.4, 0.4, 0.6])
        sname = a.text_input("Sub-dimension", s["name"], key=f"sn_{s['id']}")
        sdesc = b.text_input("Description", s["description"], key=f"sd_{s['id']}")
        if c.button("↑", key=f"su_{s['id']}"):
            M.move(db, "sub_dimension", s["id"], -1)
            st.rerun()
        if d.button("↓", key=f"sdn_{s['id']}"):
            M.move(db, "sub_dimension", s["id"], 1)
            st.rerun()
        if e.button("Save", key=f"ss_{s['id']}"):
            M.update_sub(db, s["id"], sname, sdesc)
            st.rerun()
        seeds = [q for q in M.questions(db, task, dimension=dim["name"])
                 if q["sub_dimension_id"] == s["id"] and "seed" in q["origins"]]
        texts = {}
        for q in seeds:
            texts[q["id"]] = st.text_input(f"Seed #{q['id']}", q["text"], key=f"seed_{q['id']}",
                                           help="Empty the text and save to delete the question")
        # A fresh "new seed" field after each save (the generation counter changes its key),
        # and add_seed never adds the same text twice: a second click adds nothing.
        gen = st.session_state.get(f"newseed_gen_{s['id']}", 0)
        new_seed = st.text_input("New seed question",
                                 key=f"newseed_{s['id']}" + (f"_{gen}" if gen else ""))
        if st.button("Save seed questions", key=f"seedsave_{s['id']}"):
            problems = []
            for q in seeds:
                text = texts[q["id"]].strip()
                try:
                    if not text:
                        M.delete_question(db, q["id"])
                    elif text != q["text"]:
                        M.set_question_text(db, q["id"], text)
                except M.InUse as e:
                    problems.append(str(e))
            added = False
            if new_seed.strip():
                added = M.add_seed(db, tid, dim["id"], s["id"], new_seed,
                                   author=known_user())[1]
                st.session_state[f"newseed_gen_{s['id']}"] = gen + 1
            if problems:
                for p in problems:
                    st.error(p)
            else:
                st.session_state["dim_flash"] = ("Seed questions saved" if added or
                                                 not new_seed.strip() else
                                                 "Seed questions saved (that new seed "
                                                 "was already there)")
                st.rerun()
with st.form("add_sub", clear_on_submit=True):
    c1, c2 = st.columns([1, 3])
    sub_new = c1.text_input("New sub-dimension")
    sub_desc = c2.text_input("Description ")
    if st.form_submit_button("Add sub-dimension") and sub_new.strip():
        M.ensure_sub(db, dim["id"], sub_new.strip(), sub_desc)
        st.rerun()

st.subheader("Generate and filter with a judge")
st.caption("Diversification and elaboration both start from the seeds (never from each other). "
           "Generated questions are *proposed*: review them on the Checklist review page. "
           "The embedded judge works offline but a stronger one writes better questions.")
c1, c2, c3 = st.columns([2, 1, 1])
judge = c1.text_input("Judge spec", generation_judge(), key="gen_judge",
                      help="embedded:quality (the 1.5B model) is preselected when installed")
n = c2.number_input("Questions asked", 1, 10, 4, key="gen_n",
                    help="per sub-dimension (diversify) or per seed question (elaborate)")
strategy = c3.selectbox("Strategy", ["diversify", "elaborate"], key="gen_strategy")
st.caption(f"Mode for this judge: **{default_mode(judge.strip() or 'embedded')}** — "
           "`single` asks one question per generation (small local judges), `list` a "
           "numbered list.")
b1, b3, b2 = st.columns(3)
again = b3.button("Generate again (new samples)", key="gen_again",
                  help="Bypass the cache: sample new questions instead of the answers stored "
                       "for the same request.")
if b1.button("Generate questions", type="primary", key="gen_run") or again:
    try:
        with st.spinner("Asking the judge…"):
            res = augment(db, task, dim["name"], strategy, judge.strip(), n=int(n),
                          fresh=again)
    except (ValueError, ImportError) as e:
        st.error(str(e))
    else:
        st.success(f"{len(res['added'])} questions proposed ({res['flagged']} flagged) from "
                   f"{res['requests']} request(s)")
        if res["from_cache"]:
            st.info(f"{res['from_cache']} of {res['requests']} answers came from the cache "
                    "(the same request was asked before), so nothing new may appear: press "
                    "*Generate again (new samples)* to ask afresh.")
        if res["added"]:
            st.dataframe(pd.DataFrame(res["added"]), hide_index=True, width="stretch")
        if res["problems"]:
            st.warning("Parts of the answer that were not used:")
            st.code("\n".join(res["problems"]), language=None)
if b2.button("Filter this dimension", key="filter_run"):
    try:
        with st.spinner("Filtering…"):
            res = filter_dimension(db, task, dim["name"], judge.strip())
    except (ValueError, ImportError) as e:
        st.error(str(e))
    else:
        st.success(f"{res['removed']} of {len(res['decisions'])} questions filtered out")
        if res["decisions"]:
            st.dataframe(pd.DataFrame(res["decisions"]), hide_index=True, width="stretch")
        for p in res["problems"]:
            st.warning(p)
