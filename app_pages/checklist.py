"""Checklist review: every question with its origin, parent and the filter's verdict; keep,
reject or edit (with your name); agreement between reviewers; freeze, versions and diff."""

import json

import pandas as pd
import streamlit as st

from checkeval_core.checklists.augment import default_mode, generation_judge
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.filtering import is_flagged, similar_pairs
from checkeval_core.checklists.io import export_checklist
from checkeval_core.checklists.review import decide, review_agreement
from checkeval_core.checklists.versions import diff_versions, freeze, list_versions
from checkeval_core.store import open_db
from studio_ui.tables import key_column, order, table_config
from studio_ui.widgets import current_user, task_picker

st.title("Checklist review")
if "rv_flash" in st.session_state:
    st.success(st.session_state.pop("rv_flash"))
db = open_db()
task = task_picker(db, "rv_task", "No task yet: load the demo on the Home page.")
# Login, else the configured proxy header, else a typed name (checkeval_core.identity).
annotator, why_not = current_user("rv_annotator", "reviewer")
if not annotator:
    st.caption(why_not)

with st.expander("Per-query checklists (RocketEval: one list per query, shared by its answers)"):
    from checkeval_core.checklists import instance as inst  # issue 14 (H5's block)

    st.caption("Generate 5–10 Yes/No questions per query with a judge, or import a JSONL file "
               '(`{"group_id" | "instruction_id": ..., "questions": [...]}`). They appear '
               "below (origin instance), then freeze them with *Freeze instance checklists*.")
    g1, g2 = st.columns(2)
    pq_judge = g1.text_input("Judge spec", generation_judge(), key="pq_judge")
    pq_mode = g2.selectbox(
        "How to ask", ["single", "list"], index=["single", "list"].index(default_mode(pq_judge)),
        key=f"pq_mode_{default_mode(pq_judge)}",
        format_func={"single": "one question per generation (small local judges)",
                     "list": "the whole list in one answer (large judges)"}.get)
    g3, g4 = st.columns(2)
    pq_ref = g3.checkbox("Give the judge the reference answer", True, key="pq_ref")
    pq_fresh = g4.checkbox("Rewrite queries that have a list (asked afresh)", False,
                           key="pq_fresh")
    pq_file = st.file_uploader("Per-query checklist file (JSONL)", type=["jsonl", "json"],
                               key="pq_file")
    b_gen, b_imp, b_fix = st.columns(3)
    try:
        if b_gen.button("Generate per-query checklists", key="pq_gen"):
            with st.spinner("The judge is writing one checklist per query…"):
                r = inst.generate_group_checklists(db, task, pq_judge, fresh=pq_fresh,
                                                   include_reference=pq_ref, mode=pq_mode)
            st.session_state["rv_flash"] = (
                f"{r['questions']} questions for {r['groups']} queries ({r['skipped']} "
                f"skipped; {r['from_cache']} of {r['requests']} answers from the cache — tick "
                "*Rewrite* to ask afresh)")
            if not r["problems"]:
                st.rerun()
            st.success(st.session_state.pop("rv_flash"))  # shown with the problems below it
            for p in r["problems"][:20]:
                st.warning(p)
        if b_imp.button("Import the file", key="pq_imp", disabled=pq_file is None):
            r = inst.import_group_checklists(db, task, data=pq_file.getvalue(),
                                             filename=pq_file.name)
            st.session_state["rv_flash"] = f"Imported {r['questions']} questions for " \
                                           f"{r['groups']} queries from {r['file']}"
            st.rerun()
        if b_fix.button("Use the Fixed checklist (6 general questions)", key="pq_fix"):
            r = inst.import_group_checklists(db, task, path=inst.fixed_checklist_path())
            st.session_state["rv_flash"] = f"Fixed checklist given to {r['groups']} queries"
            st.rerun()
    except ValueError as e:
        from checkeval_core.textsafe import md_escape

        st.error(md_escape(str(e)))

qs = questions(db, task, instance=None)
if not qs:
    st.info("No questions yet: add seeds on the Dimensions page or import a checklist.")
    st.stop()
flagged = {q["id"] for q in qs if is_flagged(q)}
if flagged:
    st.warning(f"{len(flagged)} question(s) a person wrote are flagged: the filter would remove "
               "them but leaves that to you (status unchanged). Keep or reject them below.")
c1, c2, c3, c4 = st.columns(4)
pending = any(q["status"] in ("proposed", "filtered") for q in qs)
statuses = c1.multiselect("Status", ["proposed", "flagged", "kept", "filtered", "rejected"],
                          (["proposed", "filtered"] if pending else ["kept"])
                          + (["flagged"] if flagged else []), key="rv_status",
                          help="flagged: a question a person wrote that the filter would remove")
origins = c2.multiselect("Origin", sorted({q["origin"] for q in qs}), key="rv_origin")
dims = c3.multiselect("Dimension", sorted({q["dimension"] or "" for q in qs}), key="rv_dim")
subs = c4.multiselect("Sub-dimension", sorted({q["sub_dimension"] or "" for q in qs}),
                      key="rv_sub")
shown = [q for q in qs if (not statuses or q["status"] in statuses
                           or ("flagged" in statuses and q["id"] in flagged))
         and (not origins or q["origin"] in origins) and (not dims or q["dimension"] in dims)
         and (not subs or q["sub_dimension"] in subs)]
table = pd.DataFrame([{
    "id": q["id"], "status": q["status"] + (" ⚑" if q["id"] in flagged else ""),
    "dimension": q["dimension"], "sub-dimension": q["sub_dimension"], "question": q["text"],
    "origin": ", ".join(q["origins"]), "parent": q["parent_id"], "flags": ", ".join(q["flags"]),
    "filter": q["filter_verdict"], "criterion": q["filter_criterion"],
    "filter reason": q["filter_reason"], "reason": q["reason"], "item": q["item_id"],
    "query": q["group_id"]} for q in shown])
st.caption(f"{len(shown)} of {len(qs)} questions")
# At 1440 px (a ~980 px wide page) the question gets the width: narrow id / query / status /
# verdict columns before it, the dimensions after it, the provenance columns last (scrolled
# to), and columns empty for every shown row left out instead of taking space.
keep_cols = {"id", "status", "question"} | {c for c in table.columns if table[c].map(
    lambda v: v is not None and v == v and str(v) != "").any()}
st.dataframe(table[[c for c in table.columns if c in keep_cols]], hide_index=True,
             width="stretch",
             column_order=order(["id", "query", "status", "filter", "criterion", "flags",
                                 "question", "dimension", "sub-dimension"],
                                ["filter reason", "reason", "origin", "parent", "item"]),
             column_config=table_config(
                 keys={"dimension": "", "sub-dimension": "", "origin":
                       "seed, diversification, elaboration, instance, edited",
                       "query": "The query (group) of a per-query question"},
                 decisions={"status": "proposed / kept / filtered / rejected; ⚑ flagged: the "
                                      "filter would remove a question a person wrote",
                            "filter": "The LLM filter's verdict: keep or remove",
                            "criterion": "The criterion a removed question failed",
                            "flags": "not_yes_no: not a Yes/No question; negative: a Yes "
                                     "would mean worse"},
                 counts={"parent": "The question this one was generated or edited from",
                         "item": "The item of a per-item question"},
                 long={"question": "The question; select it below to act on it",
                       "filter reason": "The filter's reason", "reason": "A reviewer's reason"},
                 long_width="medium", widths={"question": 520})
             | {"id": key_column("id", None, 56),
                "query": key_column("query", "The query (group) of a per-query question", 80)})
labels = {q["id"]: f"#{q['id']} [{q['status']}] {q['text']}" for q in shown}
st.session_state["rv_selected"] = [i for i in st.session_state.get("rv_selected", [])
                                   if i in labels]
if st.button("Select all shown", key="rv_all"):
    st.session_state["rv_selected"] = list(labels)
selected = st.multiselect("Questions to act on", list(labels),
                          format_func=lambda i: labels.get(i, f"#{i}"), key="rv_selected")
st.markdown(f"**{len(selected)} selected**")
# The reason and new text belong to the selection they were typed for: emptied when the
# selection changes and once a decision used them. They are set to "" rather than deleted:
# a deleted widget value leaves the browser showing (and sending back) the old text.
reason_key, text_key = "rv_reason", "rv_newtext"
sel_key = ",".join(map(str, sorted(selected)))
if st.session_state.get("rv_reason_for") != sel_key:
    st.session_state[reason_key] = st.session_state[text_key] = ""
    st.session_state["rv_reason_for"] = sel_key


def _act(decision: str, ids: list[int], who: str) -> None:
    try:  # the core refuses a reason on a keep or an edit (recorded with rejections only)
        decide(open_db(), ids, who or "", decision, st.session_state.get(reason_key, ""),
               new_text=st.session_state.get(text_key) if decision == "edit" else None)
    except ValueError as e:
        st.session_state["rv_error"] = str(e)
        return
    st.session_state[reason_key] = st.session_state[text_key] = ""
    st.session_state["rv_flash"] = {"keep": f"Kept {len(ids)} question(s)",
                                    "reject": f"Rejected {len(ids)} question(s)",
                                    "edit": "Saved the edit as a new question"}[decision]


st.text_input("Reason (required to reject)", key=reason_key)  # recorded with rejections only
b1, b2, b3 = st.columns(3)
b1.button("Keep selected", key="rv_keep", disabled=not selected, on_click=_act,
          args=("keep", list(selected), annotator))
b2.button("Reject selected", key="rv_reject", disabled=not selected, on_click=_act,
          args=("reject", list(selected), annotator))
st.text_input("New text (edit exactly one selected question)", key=text_key)
b3.button("Save edit", key="rv_edit", disabled=len(selected) != 1, on_click=_act,
          args=("edit", list(selected), annotator))
if "rv_error" in st.session_state:
    st.error(st.session_state.pop("rv_error"))

with st.expander("Near-duplicates (lexical similarity)"):
    pool = [q for q in qs if q["status"] in ("proposed", "kept") and q["item_id"] is None
            and not q["group_id"]]
    pairs = similar_pairs([q["text"] for q in pool], threshold=0.75)[:50]
    if pairs:
        st.dataframe(pd.DataFrame([{"a": pool[i]["id"], "question a": pool[i]["text"],
                                    "b": pool[j]["id"], "question b": pool[j]["text"],
                                    "similarity": s} for i, j, s in pairs]), hide_index=True)
    else:
        st.caption("No pair above 0.75 similarity.")

with st.expander("Agreement between reviewers"):
    ag = review_agreement(db, task)
    if ag["n_questions"]:
        st.write(f"{len(ag['annotators'])} reviewers, {ag['n_questions']} questions reviewed by "
                 f"two or more: Fleiss κ = {ag['fleiss_kappa']:.3f} ({ag['fleiss_units']} "
                 f"questions), Krippendorff α = {ag['krippendorff_alpha']:.3f} (NaN = no "
                 "variation to measure)")
        st.dataframe(pd.DataFrame(ag["per_question"]), hide_index=True)
    else:
        st.caption("Agreement appears once two reviewers have decided on the same questions.")

st.subheader("Versions")
note = st.text_input("Note for the new version", key="rv_note")
f1, f2 = st.columns(2)
if f1.button("Freeze kept questions", type="primary", key="rv_freeze"):
    try:
        v = freeze(db, task, note=note)
        st.success(f"Version {v['version']}: {v['n_questions']} questions, hash "
                   f"{v['hash'][:12]}" + ("" if v["new"] else " (identical to an existing one)"))
    except ValueError as e:
        st.error(str(e))
if f2.button("Freeze instance checklists", key="rv_freeze_inst"):
    try:
        v = freeze(db, task, note=note, kind="instance")
        st.success(f"Instance version {v['version']}: {v['n_questions']} questions")
    except ValueError as e:
        st.error(str(e))
vs = list_versions(db, task)
if vs:
    st.dataframe(pd.DataFrame(vs).drop(columns=["id"]), hide_index=True, width="stretch")
    nums = [v["version"] for v in vs]
    # keyed by the latest version: once a new version is frozen, the diff and the export
    # open on it again instead of keeping the choice made when it did not exist
    latest = nums[-1]
    d1, d2 = st.columns(2)
    va = d1.selectbox("Diff from", nums, index=max(0, len(nums) - 2), key=f"rv_da_{latest}",
                      help="the version before the latest, by default")
    vb = d2.selectbox("to", nums, index=len(nums) - 1, key=f"rv_db_{latest}",
                      help="the latest version, by default")
    d = diff_versions(db, task, va, vb)
    st.write(f"{len(d['added'])} added, {len(d['removed'])} removed, {len(d['edited'])} edited")
    rows_ = ([{"change": "added", "dimension": q["dimension"], "question": q["text"]}
              for q in d["added"]] +
             [{"change": "removed", "dimension": q["dimension"], "question": q["text"]}
              for q in d["removed"]] +
             [{"change": "edited", "dimension": e["dimension"],
               "question": f"{e['before']} → {e['after']}"} for e in d["edited"]])
    if rows_:
        st.dataframe(pd.DataFrame(rows_), hide_index=True, width="stretch")
    pick = st.selectbox("Export version", nums, index=len(nums) - 1, key=f"rv_exp_{latest}",
                        help="the latest version, by default")
    st.download_button("Download version (JSON)",
                       json.dumps(export_checklist(db, task, pick), ensure_ascii=False, indent=2),
                       f"{task}-v{pick}.json", key="rv_download")
