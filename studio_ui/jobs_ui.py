"""The Annotation jobs page's parts (Streamlit only): the form that creates a fixed job or a
pool, and a job's people — progress per person, the job's link, handing items on, and
people's agreement with each other."""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation import pools as P
from checkeval_core.annotation.agreement_report import ci_text, stat_text
from checkeval_core.team import Denied
from checkeval_core.textsafe import md_escape
from studio_ui.widgets import current_user


def create_form(db: sqlite_utils.Database, task: str, info: dict[str, Any],
                versions: list[dict[str, Any]]) -> None:
    with st.form("aj_new"):
        c1, c2 = st.columns(2)
        version = c1.selectbox("Checklist version", [v["version"] for v in versions][::-1],
                               key="aj_version")
        annotators = c2.text_input("Annotators (comma-separated names; for a pool, empty: "
                                   "anyone with the annotator role)", key="aj_annotators")
        overlap = c1.number_input("Annotators per item (overlap, k)", 1, 10, 2, key="aj_overlap")
        n = c2.number_input("Items to sample", 1, info["n_items"], min(10, info["n_items"]),
                            key="aj_n")
        strategy = c1.selectbox("Sampling", ["random", "stratified"], key="aj_strategy")
        dim = c2.selectbox("Stratify by human score of", info["dimensions"] or ["-"],
                           key="aj_dim")
        name = c1.text_input("Job name", key="aj_name")
        pool = c1.toggle("Pool: annotators pull the next item that still needs answers",
                         key="aj_pool")
        minutes = c2.number_input("A pool claim holds for (minutes)", 1, 24 * 60,
                                  int(P.DEFAULT_CLAIM_MINUTES), key="aj_claim")
        reveal = c1.toggle("Pool: show annotators the judges' answers after they submit",
                           True, key="aj_reveal")
        with c2:  # recorded with the job and in the review history
            creator, why_no_creator = current_user("aj_creator", "coordinator")
        ok = st.form_submit_button("Create job", type="primary")
    if not ok:
        return
    try:
        # Submitting the same form twice reuses the job (no second set of assignments).
        if not creator:
            raise ValueError(why_no_creator)
        stratum = dim if strategy == "stratified" else None
        if pool:
            jid, created = P.create_pool(
                db, task, int(overlap), int(n), version, strategy, stratum, name=name,
                coordinator=creator, annotators=annotators.split(","),
                claim_minutes=float(minutes), reveal_judges=reveal)
        else:
            jid, created = J.create_job_once(
                db, task, annotators.split(","), int(overlap), int(n), version, strategy,
                stratum, name=name, coordinator=creator)
        if created:
            st.success(f"Job #{jid} created")
        else:
            st.info(f"Job #{jid} already has exactly these settings: not created again.")
    except (ValueError, Denied) as e:
        st.error(md_escape(str(e)))


def people_section(db: sqlite_utils.Database, job: int, meta: dict[str, Any]) -> None:
    """Progress per person, the job's link, handing a person's open items on."""
    whole = P.job_progress(db, job)
    st.caption(f"{whole['complete']} of {whole['items']} items have all their answers · "
               f"{whole['submitted']} of {whole['needed']} answers submitted")
    st.markdown(f"Link for annotators: [`annotate?job={job}`](annotate?job={job}) — opens "
                "their next item of this job after they log in.")
    people = P.people_progress(db, job)
    if not people:
        st.caption("Nobody has taken an item yet.")
        return
    st.dataframe(pd.DataFrame(people), hide_index=True, width="stretch", column_config={
        "held": st.column_config.NumberColumn(help="Pool items this person holds now"),
        "left": st.column_config.NumberColumn(help="Items still open to this person"),
        "median s per item": st.column_config.NumberColumn(format="%.0f"),
        "agrees with others": st.column_config.TextColumn(
            help="Submitted Yes/No answers equal to the other people's majority, of the "
                 "answers where the others have one (ties left out)")})
    with st.expander("Hand a person's open items on"):
        c1, c2 = st.columns(2)
        person = c1.selectbox("From", [p["annotator"] for p in people], key="aj_from")
        to = "" if meta.get("mode") == "pool" else c2.text_input(
            "To (comma-separated names)", key="aj_to")
        st.caption("In a pool their held items go back to the pool for the others." if
                   meta.get("mode") == "pool" else "Each open item goes to the next name "
                   "that does not have it yet.")
        with c2:
            coord, why_not = current_user("aj_hand_coord", "coordinator")
        if st.button("Hand on", key="aj_hand"):
            try:
                if not coord:
                    raise ValueError(why_not)
                res = P.hand_on(db, job, person, to.split(","), coordinator=coord)
                st.success(f"Moved {res['moved']}, released {res['released']}, kept "
                           f"{res['kept']} (nobody else could take them).")
            except (ValueError, Denied) as e:
                st.error(md_escape(str(e)))


def people_agreement(db: sqlite_utils.Database, job: int) -> None:
    """People's agreement with each other on this job, overall and per question."""
    agr = P.people_agreement(db, job)
    o = agr["overall"]
    st.markdown(f"**People agree with each other** on this job: Krippendorff α "
                f"{stat_text(o['alpha'])} {_ci(o['ci'], o['reason'])} · {o['units']} "
                f"(item, question) units on {o['groups']} groups")
    if agr["per_question"]:
        # as the task's per-question table (agreement_report._question_row): a value without
        # its interval — too few units or groups, e.g. κ −1.000 on one unit — is a dash, the
        # interval column says why
        st.dataframe(pd.DataFrame([{
            "question": r["question"], "units": r["units"],
            "α": "—" if r["reason"] else stat_text(r["alpha"]),
            "α 95% CI": _ci(r["ci"], r["reason"]),
            "Fleiss κ": "—" if r["kappa_reason"] else stat_text(r["fleiss_kappa"]),
            "κ 95% CI": _ci(r["kappa_ci"], r["kappa_reason"])} for r in agr["per_question"]]),
            hide_index=True, width="stretch")


def _ci(ci: list[float] | None, reason: str | None) -> str:
    return ci_text(ci, None) if ci else f"({md_escape(reason or 'no interval')})"
