"""How the Dimensions page shows what a judge did to the questions (rendering only): the
questions a generation added and the filter's decisions, each with the parts of the judge's
answer that were not used."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from checkeval_core.checklists.augment import augment_summary
from checkeval_core.checklists.evidence import evidence_text
from checkeval_core.checklists.filtering import filter_summary
from checkeval_core.checklists.review_view import provenance_text
from checkeval_core.textsafe import md_escape
from studio_ui.tables import show_table


def show_augment_result(res: dict[str, Any]) -> None:
    """The outcome of :func:`checkeval_core.checklists.augment.augment`."""
    summary, cache_note = augment_summary(res)
    st.success(summary)
    if cache_note:
        st.info(cache_note)
    if res["added"]:  # a grounded question's provenance in words (which pair, which notes)
        added = [{**a, "provenance": provenance_text(a["provenance"])} if "provenance" in a
                 else a for a in res["added"]]
        show_table(pd.DataFrame(added), {"parent_id": st.column_config.Column(
            "from seed", help="The seed question an elaborated question was written from")},
            {"parent_id": "written from all the sub-dimension's seeds (diversify), not from "
                          "one seed"}, hide_index=True, width="stretch")
    if res.get("dropped"):
        st.caption("Dropped — the judge wrote a question the dimension already has:")
        show_table(pd.DataFrame(res["dropped"]), {
            "text": st.column_config.TextColumn("written by the judge", width="large"),
            "copy_of": st.column_config.TextColumn("copy of", width="large")},
            hide_index=True, width="stretch", column_order=["text", "copy_of", "why",
                                                            "sub_dimension"])
    if res["problems"]:
        st.warning("Parts of the answer that were not used:")
        st.code("\n".join(res["problems"]), language=None)


def show_filter_result(res: dict[str, Any]) -> None:
    """The outcome of :func:`checkeval_core.checklists.filtering.filter_dimension`."""
    # questions a person wrote are only flagged: a warning, never a green "filtered out"
    (st.warning if res["flagged"] else st.success)(md_escape(filter_summary(res)))
    if res["decisions"]:
        show_table(pd.DataFrame(res["decisions"]), None,
                   {"duplicate_of": "not a near-copy of another question",
                    "p_yes": "no p(Yes): the judge gave no readable verdict"},
                   hide_index=True, width="stretch",
                   column_order=["id", "outcome", "p_yes", "criterion", "text", "reason",
                                 "origin", "duplicate_of"])
    for p in res["problems"]:
        st.warning(md_escape(p))  # may quote the judge's output


def show_evidence_result(res: dict[str, Any]) -> None:
    """The outcome of :func:`checkeval_core.checklists.evidence.question_evidence`."""
    flagged = sum(bool(q["flag"]) for q in res["questions"])
    st.success(f"{len(res['questions'])} question(s) tested on dev items, {flagged} flagged "
               f"({res['requests']} requests, {res['from_cache']} from the cache). The evidence "
               "is shown beside each question on the Checklist review page.")
    if res["questions"]:
        show_table(pd.DataFrame([{"id": q["question_id"], "question": q["text"],
                                  "evidence": evidence_text({**q, "judge": res["judge"]})}
                                 for q in res["questions"]]), None, None, hide_index=True,
                   width="stretch")
