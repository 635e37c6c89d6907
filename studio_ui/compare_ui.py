"""The Compare runs page's sections that only render what ``compare_runs`` returned."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from checkeval_core.analysis.compare import delta_chip, delta_colour
from checkeval_core.stats.values import Figure
from checkeval_core.textsafe import md_escape


def flipped_section(res: dict[str, Any]) -> None:
    """The Yes/No decisions that flipped between A and B, per question."""
    st.subheader("Decisions that flipped")
    flips = res["flipped"]
    st.caption(f"{len(flips)} of {res['n_questions_shared']} questions both runs answered got a "
               f"different Yes/No on some shared item ({res['n_decisions_shared']} decisions "
               "compared; invalid answers are not decisions).")
    if flips:
        st.dataframe(pd.DataFrame([{**q, "items": ", ".join(map(str, q["items"]))} for q in flips]),
                     hide_index=True, width="stretch", key="cmp_flips",
                     column_order=["dimension", "yes_to_no", "no_to_yes", "n_both", "question",
                                   "items"],
                     column_config={"yes_to_no": st.column_config.NumberColumn("Yes→No", width=70),
                                    "no_to_yes": st.column_config.NumberColumn("No→Yes", width=70),
                                    "n_both": st.column_config.NumberColumn(
                                        "of", width=50, help="Items both runs answered validly"),
                                    "question": st.column_config.TextColumn(width="large"),
                                    "items": st.column_config.TextColumn(
                                        "flipped items", help="The first 20 items that flipped")})
    elif res["n_questions_shared"] == 0:
        st.info("The runs share no checklist question (e.g. a Likert run, or two checklist "
                "versions with no question in common): there are no Yes/No decisions to compare.")


def agreement_section(ag: dict[str, Any], level: str, coef: str) -> None:
    """A's and B's agreement with humans, Δ with its interval and the verdict sentence the
    core computed (under the headline and per dimension). The Δ arrow follows Δ's sign; it is
    green or red only when the verdict says better or worse, grey otherwise."""
    m1, m2, m3 = st.columns(3)
    if ag["reason"]:
        st.info(f"Agreement with humans: {md_escape(ag['reason'])}.")
        return
    m1.metric(f"A · {coef} with humans", f"{ag['a']:.3f}")
    m2.metric(f"B · {coef} with humans", f"{ag['b']:.3f}")
    m3.metric("Δ = B − A", f"{ag['delta']:+.3f}", delta_chip(ag),
              delta_color=delta_colour(ag["verdict"]))
    st.markdown(f"**Verdict:** {md_escape(ag['verdict'])}")
    st.caption(f"{level.replace('_', ' ')} {coef}, mean over {len(ag['dimensions'])} "
               f"dimension(s), on {ag['n_items']} shared items with a human score in "
               f"{ag['n_groups']} groups ({ag['n_systems']} systems).")
    with st.expander("Per dimension (each with its own paired interval and verdict)",
                     expanded=len(ag["dimensions"]) > 1):
        st.dataframe(pd.DataFrame([{
            "dimension": k, "A": v["a"], "B": v["b"], "Δ": v["delta"],
            "95% CI": Figure.from_dict(v, value_key="delta").ci_text(3, signed=True),
            "verdict": v["verdict"] or "no verdict", "items": v["n_items"],
            "groups": v["n_groups"]} for k, v in ag["dimensions"].items()]),
            hide_index=True, key="cmp_dims", width="stretch",
            column_config={**{c: st.column_config.NumberColumn(format="%.3f")
                              for c in ("A", "B")},
                           "Δ": st.column_config.NumberColumn(format="%+.3f"),
                           "verdict": st.column_config.TextColumn(width="large")})
