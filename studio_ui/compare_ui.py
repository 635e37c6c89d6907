"""The Compare runs page's sections that only render what ``compare_runs`` returned."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st


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
