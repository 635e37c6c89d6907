"""Rendering the Annotate page's item and questions (Streamlit only).

The text to judge comes first, labelled as the questions name it (“Summary”, “Response”),
and the material it is judged against follows in a box of its own height, so the output and
the first questions are on screen together at 1440×900 instead of under the whole article.
A dimension's definition is shown once, above its first sub-dimension; each sub-dimension
shows only its own description.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.annotation import jobs as J
from checkeval_core.annotation import pools as P
from checkeval_core.prompts.judge import OUTPUT_LABEL
from checkeval_core.textsafe import md_escape, md_inert
from studio_ui.tables import order, table_config

OPTIONS = ["yes", "no", "unsure"]
#: The material's labels per task kind, as the judge's prompt names them.
MATERIAL = {"summarization": (("source", "Article"),),
            "dialogue": (("context", "Conversation so far"),
                         ("fact", "Fact the response may use")),
            None: (("source", "Input"), ("context", "Context"), ("fact", "Fact"))}


def item_panel(item: dict[str, Any], kind: str) -> None:
    """The output to judge, then its material in a scrolling box."""
    label = OUTPUT_LABEL.get(kind, "Output")
    st.markdown(f"**The {label.lower()} to judge**")
    with st.container(border=True):
        st.text(item.get("output") or "")
    fields = MATERIAL.get(kind, MATERIAL[None])
    shown = [(f, lb) for f, lb in fields if item.get(f)]
    if kind not in MATERIAL:  # an unknown kind: every field there is
        shown = [(f, lb) for f, lb in MATERIAL[None] if item.get(f)]
    for f, lb in shown:
        st.markdown(f"**{lb}** (what the {label.lower()} is judged against)")
        long = len(item[f]) > 600 or item[f].count("\n") > 12
        with st.container(border=True, height=360 if long else "content"):
            st.text(item[f])


def questions_panel(questions: list[dict[str, Any]], notes: dict[str, dict[str, Any]],
                    saved: dict[int, str], key_of: Callable[[int], str],
                    on_change: Callable[..., None], args_of: Callable[[int], tuple],
                    read_only: bool = False) -> None:
    """One Yes / No / Unsure radio per question under its dimension and sub-dimension;
    ``read_only`` (a submitted item: its answers are final) shows them disabled. The question
    is drawn escaped above its radio (a label renders Markdown: a link or image in it would
    load), the radio's hidden label its plain text."""
    if read_only:
        st.caption("You submitted this item: its answers are final (shown read-only).")
    dim = sub = None
    for q in questions:
        if q["dimension"] != dim:
            dim, sub = q["dimension"], None
            st.markdown(f"#### {md_escape(dim)}")
            definition = notes.get(dim, {}).get("definition")
            if definition:
                st.caption(md_escape(definition))
        if q["sub_dimension"] != sub:
            sub = q["sub_dimension"]
            desc = notes.get(dim, {}).get("subs", {}).get(sub)
            st.markdown(f"**{md_escape(sub)}**" + (f" — {md_escape(desc)}" if desc else ""))
        # shown as escaped Markdown; the radio's (hidden) label is what a screen reader says,
        # so it keeps the text as typed (an escaped label read "built\-in") with only what
        # would load or link something escaped: a collapsed label is still rendered, and an
        # image in it was fetched by every annotator's browser
        st.markdown(md_escape(q["text"]))
        st.radio(md_inert(q["text"]), OPTIONS, index=OPTIONS.index(saved[q["id"]])
                 if q["id"] in saved else None, horizontal=True, key=key_of(q["id"]),
                 on_change=on_change, args=args_of(q["id"]), disabled=read_only,
                 label_visibility="collapsed")


def beside_judges(db: sqlite_utils.Database, job: int, who: str, item_pk: int,
                  item_id: str, here: bool) -> None:
    """Your answers to a submitted item beside each completed judge run's (blind before)."""
    why = J.blind(db, job, who, item_pk)
    if why:
        st.caption(why)
        return
    st.subheader("Your answers beside the judges'" + ("" if here else
                                                      f" on the item you submitted ({md_escape(item_id)})"))
    table, runs = J.judge_comparison(db, job, who, item_pk, J.job_questions(db, job, item_pk))
    if runs:
        # yours, each judge's and the ⚠️ first, narrow; the question last
        st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch",
                     column_order=order(["you", *runs, "disagree"], ["question"]),
                     column_config=table_config(
                         decisions={"you": "Your answer", "disagree": "⚠️ when a judge said "
                                    "the other of yes/no", **{r: f"Run {r}" for r in runs}},
                         long={"question": "The checklist question"}, long_width="medium"))
    else:
        st.caption("No completed judge run on this checklist version yet.")


def pool_item(db: sqlite_utils.Database, job: int, who: str,
              last: tuple[int, str] | None) -> int:
    """The pool item ``who`` answers now (held, else claimed now), with their progress; stops
    the page when they gave their item back or nothing is left for them."""
    paused = f"ann_paused|{job}|{who}"
    if st.session_state.get(paused):
        st.info("You gave your item back to the pool.")
        if st.button("Take the next item", key="ann_resume", type="primary"):
            st.session_state.pop(paused)
            st.rerun()
        st.stop()
    item_pk = P.next_item(db, job, who)
    me = next((r for r in P.people_progress(db, job) if r["annotator"] == who), None)
    if me:
        st.progress(me["done"] / max(1, me["done"] + me["held"] + me["left"]),
                    text=f"{md_escape(who)}: {me['done']} done · {me['held']} held · "
                         f"{me['left']} left in pool #{job}")
    if item_pk is None:
        st.success(f"Nothing left for you in pool #{job}: every item you have not answered "
                   "has its answers or is being answered. Thank you!")
        if last:
            beside_judges(db, job, who, last[0], last[1], here=False)
        st.stop()
    return item_pk
