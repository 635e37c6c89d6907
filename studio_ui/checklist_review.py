"""The Checklist review page's widgets and table layout (rendering only).

:func:`per_query_form` reads what the person asked of the per-query checklists and returns it
as the keyword arguments of :func:`checkeval_core.checklists.review_view.per_query_checklists`
(the page calls that and shows the outcome). The review table's layout gives the question the
width at 1440 px (a ~980 px wide page): narrow id / query / status / verdict columns before it,
the dimensions after it, the provenance columns last (scrolled to).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.checklists.augment import default_mode, generation_judge
from checkeval_core.checklists.editing import provenance_of
from checkeval_core.checklists.evidence import latest_evidence
from checkeval_core.checklists.review import question_history, review_agreement
from checkeval_core.checklists.review_view import agreement_line, history_rows, review_table
from studio_ui.access import may
from studio_ui.tables import key_column, order, table_config

#: The review table's column order (columns missing from the table are skipped by Streamlit).
# "Questions to act on": the dropdown shows ~10 options at a time, so a long list is narrowed
# by typing — any part of a label (its #id, [status] or words of the question), matched as a
# substring rather than Streamlit's default in-order subsequence, which matches nearly every
# long question — and "Select N matches" in the dropdown picks every option left
PICKER = {"filter_mode": "contains", "select_all": True, "wrap": True,
          "placeholder": "Type words of the questions, a #id or a [status] to narrow the list",
          "help": "The list shows about 10 questions at a time: type any part of a question "
                  "(words, #id, [proposed], [kept] …) to narrow it, then pick one or use "
                  "'Select … matches' in the list to pick every match. 'Select all shown' "
                  "picks every question the filters above show."}
COLUMN_ORDER = order(["id", "query", "status", "filter", "criterion", "flags", "question",
                      "evidence on dev items", "dimension", "sub-dimension"],
                     ["filter reason", "reason", "origin", "provenance", "parent", "item"])


def column_config() -> dict[str, Any]:
    """The review table's ``column_config`` (labels, help texts and widths)."""
    return table_config(
        keys={"dimension": "", "sub-dimension": "",
              "origin": "seed, diversification, elaboration, instance, edited",
              "query": "The query (group) of a per-query question"},
        decisions={"status": "proposed / kept / filtered / rejected; ⚑ flagged: the "
                             "filter would remove a question a person wrote",
                   "filter": "The LLM filter's verdict on the wording (keep or remove): a "
                             "model's opinion, not a test on items — see the evidence",
                   "criterion": "The criterion a removed question failed",
                   "flags": "not_yes_no: not a Yes/No question; negative: a Yes "
                            "would mean worse"},
        counts={"parent": "The question this one was generated or edited from",
                "item": "The item of a per-item question"},
        long={"question": "The question; select it below to act on it",
              "evidence on dev items": "The judge's answers on a stratified sample of dev "
                                       "items: yes-rate, how well it orders the outputs "
                                       "people scored (share of pairs, 0.5 = not at all) "
                                       "with its interval, a kept question answering alike, "
                                       "cost per item; ⚑ = the dev-only rule's flag (nothing "
                                       "is removed)",
              "provenance": "What a contrastive or inductive question was written from",
              "filter reason": "The filter's reason", "reason": "A reviewer's reason"},
        long_width="medium", widths={"question": 460, "evidence on dev items": 320}) | {
        "id": key_column("id", None, 56),
        "query": key_column("query", "The query (group) of a per-query question", 80)}


def show_review_table(db: sqlite_utils.Database, task: str, shown: list[dict[str, Any]],
                      flagged: set[int]) -> None:
    """The review table: each shown question with its latest evidence on dev items and, for a
    question written from examples, what it was written from."""
    prov = provenance_of(db, [q["id"] for q in shown])
    st.dataframe(review_table(shown, flagged, latest_evidence(db, task), prov),
                 hide_index=True, width="stretch", column_order=COLUMN_ORDER,
                 column_config=column_config())


_MODES = {"single": "one question per generation (small local judges)",
          "list": "the whole list in one answer (large judges)"}


def per_query_form() -> dict[str, Any] | None:
    """Render the form; the request of the button pressed on this run, else None. Writing
    the checklists needs the right to edit one (a reviewer decides on them): without it the
    form is not drawn, and the core refuses anyway, before any judge call."""
    if not may("checklist.edit"):
        st.caption("Writing per-query checklists is for a role that may edit checklists "
                   "(researcher, admin); you review them below.")
        return None
    if st.session_state.pop("pq_fresh_reset", False):  # set before a rewrite: see below
        st.session_state["pq_fresh"] = False
    st.caption("Generate 5–10 Yes/No questions per query with a judge, or import a JSONL file "
               '(`{"group_id" | "instruction_id": ..., "questions": [...]}`). They appear '
               "below (origin instance), then freeze them with *Freeze instance checklists*.")
    g1, g2 = st.columns(2)
    judge = g1.text_input("Judge spec", generation_judge(), key="pq_judge")
    # keyed by the judge's default mode: a new judge opens on the mode that suits it
    mode = g2.selectbox("How to ask", list(_MODES), index=list(_MODES).index(default_mode(judge)),
                        key=f"pq_mode_{default_mode(judge)}", format_func=_MODES.get)
    g3, g4 = st.columns(2)
    ref = g3.checkbox("Give the judge the reference answer", True, key="pq_ref")
    fresh = g4.checkbox("Rewrite queries that have a list (asked afresh)", False, key="pq_fresh")
    up = st.file_uploader("Per-query checklist file (JSONL)", type=["jsonl", "json"],
                          key="pq_file")
    b_gen, b_imp, b_fix = st.columns(3)
    gen = b_gen.button("Generate per-query checklists", key="pq_gen")
    imp = b_imp.button("Import the file", key="pq_imp", disabled=up is None)
    fix = b_fix.button("Use the Fixed checklist (6 general questions)", key="pq_fix")
    if not (gen or imp or fix):
        return None
    if gen and fresh:  # unticked before the judge is asked: a second press queued meanwhile
        st.session_state["pq_fresh_reset"] = True  # never pays for a second rewrite
    return {"source": "generate" if gen else "file" if imp else "fixed", "judge": judge,
            "mode": mode, "fresh": fresh, "include_reference": ref,
            "data": up.getvalue() if imp else None, "filename": up.name if imp else None}


_HISTORY_COLUMNS = {
    "when": st.column_config.TextColumn("when", width=150),
    **{c: st.column_config.TextColumn(c, width="small") for c in ("who", "role", "what",
                                                                  "question")},
    "reason": st.column_config.TextColumn("reason", width="medium",
                                          help="The reason given with a rejection"),
    "note": st.column_config.TextColumn("note", width="large",
                                        help="What the decision led to (an edit's new "
                                             "question, a status change)")}


def agreement_expander(db: sqlite_utils.Database, task: str) -> None:
    """Agreement between reviewers who decided on the same questions."""
    with st.expander("Agreement between reviewers"):
        ag = review_agreement(db, task)
        if line := agreement_line(ag):
            st.write(line)
            st.dataframe(pd.DataFrame(ag["per_question"]), hide_index=True)
        else:
            st.caption("Agreement appears once two reviewers have decided on the same "
                       "questions.")


def show_history(db: sqlite_utils.Database, question_ids: list[int]) -> None:
    """The review history of each selected question (with the questions it was edited
    from): every decision, who made it in which role, when and why — shown as text."""
    if not question_ids:
        return
    with st.expander(f"Review history ({len(question_ids)} question(s))",
                     expanded=len(question_ids) == 1):
        for qid in question_ids[:20]:
            rows_ = history_rows(question_history(db, qid))
            st.markdown(f"**#{qid}**")
            if rows_:
                st.dataframe(pd.DataFrame(rows_), hide_index=True, width="stretch",
                             key=f"rv_hist_{qid}", column_config=_HISTORY_COLUMNS)
            else:
                st.caption("No decision recorded yet.")

