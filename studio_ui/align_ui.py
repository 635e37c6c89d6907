"""Rendering for the Align page and the Versions page's "agrees with people" lines
(Streamlit only; every number comes from ``checkeval_core.analysis.align``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.analysis.align import DEFAULT_SAMPLE, start_sample, version_headlines
from checkeval_core.analysis.reword import propose_rewording
from checkeval_core.annotation.agreement_report import ci_text, stat_text
from checkeval_core.annotation.pools import people_agreement
from checkeval_core.checklists.augment import generation_judge
from checkeval_core.stats.values import pct
from checkeval_core.textsafe import md_escape
from studio_ui.tables import show_table, wrapped_row_height
from studio_ui.widgets import current_user

_NUM = ("agreement", "κ", "φ", "FPR", "FNR", "κ–φ gap", "yes-rate", "LOO Δ", "people κ")


def sample_form(db: sqlite_utils.Database, run_id: int, expanded: bool) -> None:
    """Draw a stratified sample of the run's items and assign it to annotators."""
    with st.expander("Start a sample for people to answer", expanded=expanded):
        with st.form("al_sample"):
            c1, c2, c3 = st.columns([3, 1, 1])
            names = c1.text_input("Annotators (comma-separated names)", key="al_annotators")
            overlap = c2.number_input("Annotators per item", 1, 10, 2, key="al_overlap")
            n = c3.number_input("Items", 1, 10000, DEFAULT_SAMPLE, key="al_n")
            creator, why_no_creator = current_user("al_creator", "coordinator")
            ok = st.form_submit_button("Draw the sample and create the job", type="primary")
        if ok:
            try:
                if not creator:  # recorded with the job and in the review history
                    raise ValueError(why_no_creator)
                jid, created = start_sample(db, run_id, names.split(","), int(overlap), int(n),
                                            coordinator=creator)
            except ValueError as e:
                st.error(md_escape(str(e)))
                return
            st.success(f"Job #{jid} {'created' if created else 'already exists'}: annotators "
                       "answer it on the Annotate page.")
            st.page_link("app_pages/annotate.py", label="Open Annotate")


def question_table(rows: list[dict[str, Any]]) -> Any:
    df = pd.DataFrame(rows)
    # undefined figures are a dash with the reason on hover, never "None"
    # at 1440 px a medium question column showed ~25 characters of each question: it is
    # wide (a pinned column is drawn grey, harder to read), the figures narrow
    return show_table(df, {"question": st.column_config.TextColumn(
                               width="large",
                               help="Select a row to read the question and its why in full"),
                           "why": st.column_config.TextColumn(width="large"),
                           **{c: st.column_config.NumberColumn(c, format="%.2f", width="small")
                              for c in _NUM if c in df.columns}},
                      hide_index=True, key="al_table", on_select="rerun", width="stretch",
                      row_height=wrapped_row_height(df.get("question", [])),
                      selection_mode="single-row",
                      column_order=[c for c in df.columns if c != "question_id"])


def disagreements(res: dict[str, Any], run_id: int, pick: int | None, why: str = "") -> None:
    """The disagreeing items of the selected question, each linked to its trace; its *why*
    in full (a table cell cuts a long one)."""
    if pick is None:
        st.caption("Select a question above to list the items where the judge and people "
                   "disagree, and read its *why* in full.")
        return
    q = res["questions"][pick]
    st.markdown(f"**{md_escape(q['text'])}** — {len(q['disagreements'])} disagreeing "
                "item(s) shown")
    if why:
        st.caption(md_escape(f"Why: {why}"))
    for d in q["disagreements"]:
        st.page_link("app_pages/traces.py",
                     label=md_escape(f"{d['item_id']}: judge {d['judge']}, "
                                     f"people {d['human']}"),
                     query_params={"runs": str(run_id), "item": str(d["item_pk"]),
                                   "dim": q["dimension"] or "", "show": "people"})


def people_headlines(db: sqlite_utils.Database, task: str) -> None:
    """Versions: "agrees with people on x % of decisions [CI], n answers" per version run."""
    st.subheader("Agreement with people's answers to the questions")
    lines = version_headlines(db, task)
    if not any(h["n"] for h in lines):
        st.info("No one has answered this task's checklist questions yet: start a sample on "
                "the Align page.")
        return
    for h in lines:
        st.markdown(md_escape(f"v{h['version']} · run #{h['run']} {h['judge']} · "
                              f"{h['method']}: {h['text']}"))


def people_beside_judge(db: sqlite_utils.Database, res: dict[str, Any],
                        rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per annotation job on this version: "people agree with each other on α x;
    the judge agrees with people on y" — and the newest job's per-question κ among people
    added to the question rows (``people κ``, with its interval or the reason in ``people
    κ note``)."""
    jobs = res["human_answers"]["jobs"]
    judge = res["headline"]["text"]
    for i, j in enumerate(jobs):
        agr = people_agreement(db, j["id"])
        o = agr["overall"]
        ci = ci_text(o["ci"], None) if o["ci"] else f"({o['reason']})"
        st.markdown(md_escape(
            f"Job #{j['id']} {j['name']}: people agree with each other on α "
            f"{stat_text(o['alpha'])} {ci}, {o['units']} (item, question) units on "
            f"{o['groups']} groups; the judge {judge}."))
        if i == 0:
            per_q = {r["question_id"]: r for r in agr["per_question"]}
            for r in rows:
                q = per_q.get(r.get("question_id"))
                r["people κ"] = None if q is None else q["fleiss_kappa"]
                r["people κ note"] = ("no submitted item with two people" if q is None else
                                      ci_text(q["kappa_ci"], None) if q["kappa_ci"] else
                                      q["kappa_reason"] or "")
    return rows


def reword_form(db: sqlite_utils.Database, res: dict[str, Any], run_id: int,
                pick: int | None) -> None:
    """*Propose a rewording* of the selected question from its dev disagreements: written by a
    judge, answered on dev, reported on held-out, queued on Checklist review as an edit."""
    if pick is None or not res["questions"][pick]["disagreements"]:
        return
    q = res["questions"][pick]
    with st.expander("Propose a rewording of this question"):
        st.caption("A judge rewrites the question from its false positives and false negatives "
                   "on dev items; the old and the new wording are then answered by the same "
                   "judge on every item people labelled — agreement on dev, and on held-out the "
                   "change with its interval, the smallest change it could detect and a "
                   f"verdict. Asks 1 generation and 2 × {q['n']}+ Yes/No questions (held-out "
                   "items included). The rewording goes to Checklist review as a proposed "
                   "edit; the old question stays.")
        judge = st.text_input("Judge spec", generation_judge(), key="al_reword_judge")
        who = current_user("al_reword_user", "reviewer")[0] or ""  # recorded in the history
        if not st.button("Propose a rewording", key="al_reword"):
            return
        try:
            with st.spinner("Rewording and measuring…"):
                r = propose_rewording(db, run_id, q["question_id"], judge.strip(), actor=who)
        except ValueError as e:
            st.error(md_escape(str(e)))
            return
        h = r["heldout"]
        st.success(md_escape(f"#{r['new_question']} proposed for review: {r['new_text']}"
                             + ("" if r["created"] else " (already proposed)")))
        st.markdown(md_escape(f"Dev agreement {pct(r['dev']['old']['value'])} → "
                              f"{pct(r['dev']['new']['value'])}; held-out {pct(h['old'])} → "
                              f"{pct(h['new'])} on {h['n_items']} items / {h['n_groups']} "
                              f"groups — {h['verdict']}"))
