"""Rendering helpers of the Traces page: the item's scores and texts, the Yes/No decisions
table with the selected row's raw answers, SEAL units and the item listing (Streamlit calls
only; every row comes from ``checkeval_core.runs.traces``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from checkeval_core.runs.traces import PEOPLE, coin_flip_line, run_column, score_rows, unit_rows
from checkeval_core.textsafe import md_escape
from studio_ui.tables import decision_column, order, table_config, wrapped_row_height
from studio_ui.widgets import csv_download


def scores_and_texts(trace: dict[str, Any], chosen: list[int], labels: dict[int, str]) -> None:
    """The item's scores next to its output; its other texts and every aggregation below."""
    item = trace["item"]
    score_cols = [run_column(r) for r in chosen]
    aggs = {r["id"]: r["aggregation"] for r in trace["runs"]}
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Scores** (humans; each run in its own aggregation)")
        st.dataframe(pd.DataFrame(score_rows(trace), columns=["dimension", "human", *score_cols]),
                     hide_index=True, width="content",
                     column_config=table_config(
                         keys={"dimension": ""},
                         decisions={"human": "Human score of this item", **{
                             run_column(r): md_escape(f"Score from run {labels[r]} "
                                                      f"({aggs.get(r, '')})")
                             for r in chosen}}))
    with right:
        st.markdown(f"**Output** of item {md_escape(item['item_id'])}")
        with st.container(height=150):
            st.text(item["output"])
    with st.expander("Source, context, reference and every aggregation's score"):
        for field in ("source", "context", "fact", "reference"):
            if item[field]:
                st.markdown(f"**{field}**")
                st.text(item[field])
        st.dataframe(pd.DataFrame(score_rows(trace, all_aggregations=True),
                                  columns=["dimension", "aggregation", "human", *score_cols]),
                     hide_index=True, width="content")


#: an escalated verdict ("✗ 0.46 ≈ by B (A said ✓ 0.54 ≈)") on two lines, and the question
#: column beside it: both fit the table at 1440 px with the dimension and people columns
ESCALATED_WIDTH, QUESTION_BESIDE_ESCALATED = 200, 330


def decisions_table(rows: list[dict[str, Any]], chosen: list[int],
                    labels: dict[int, str]) -> None:
    """One narrow verdict column per run; a selected row shows its question and raw answers."""
    verdict_cols = [run_column(r) for r in chosen]
    if any(PEOPLE in r for r in rows):  # people answered this item's questions: beside the runs
        verdict_cols.append(PEOPLE)
    table = pd.DataFrame(rows, columns=["dimension", "sub-dimension", "question", "question_id",
                                        "unit", *verdict_cols])
    # a run with escalated answers: room to say by whom (wrapped, two lines), and at 1440 px a
    # large question column beside it went past the table's right edge
    wide = [c for c in verdict_cols[:len(chosen)]
            if any(" by " in str(row.get(c, "")) for row in rows)]
    config = table_config(
        keys={"dimension": "", "sub-dimension": ""},
        decisions={**{c: f"Run {labels[r]}: ✓ yes / ✗ no with p(Yes); ≈ = a coin flip "
                         "(p(Yes) within 0.05 of 0.5: a rerun can flip it); 'invalid' = no "
                         "verdict could be read from the answer; an answer a second judge "
                         "gave says by whom" for c, r in zip(verdict_cols, chosen)},
                   PEOPLE: "People's answers to the question on this item: how many said yes "
                           "(✓) and no (✗)"},
        long={"question": "The checklist question (or SEAL unit). Select the row to read it "
                          "in full below the table."},
        widths={"question": QUESTION_BESIDE_ESCALATED} if wide else None)
    for c in wide:
        config[c] = decision_column(c, config[c]["help"], ESCALATED_WIDTH)
    heights = [wrapped_row_height(table["question"], 45 if wide else 60),
               wrapped_row_height([r.get(c, "") for r in rows for c in wide], 28)]
    event = st.dataframe(
        table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
        row_height=max((h for h in heights if h), default=None),
        key="tr_dec", column_order=order(["dimension", "sub-dimension"], verdict_cols,
                                         ["question"]), column_config=config)
    if flips := coin_flip_line(rows, verdict_cols[:len(chosen)]):
        st.caption(flips)
    csv_download(table, "item-decisions.csv", "tr_dl_dec", "Decisions (CSV)")  # formula-safe
    picked = (event or {}).get("selection", {}).get("rows", []) if event else []
    if picked and picked[0] < len(rows):
        row = rows[picked[0]]
        st.markdown(f"**{md_escape(row['dimension'])}" + (
            f" · {md_escape(row['sub-dimension'])}" if row["sub-dimension"] else "") + "**")
        st.text(row["question"])
        for col, r in zip(verdict_cols, chosen):
            if col in row:
                st.caption(md_escape(f"{labels[r]} — {row[col]}"))
                st.text(row["raw"].get(col) or "(no raw answer stored)")
        if PEOPLE in row:
            st.caption(md_escape(f"People — {row[PEOPLE]}"
                                 + (f" ({row['people_detail']})" if row["people_detail"]
                                    else "")))


def units_table(trace: dict[str, Any]) -> None:
    """SEAL units with one verdict square per sub-dimension (nothing for other methods)."""
    units = unit_rows(trace)
    if not units:
        return
    st.markdown("**SEAL units** (🟩 yes · 🟥 no · 🟨 invalid, one square per sub-dimension)")
    st.dataframe(pd.DataFrame(units), hide_index=True, width="stretch",
                 column_order=order(["run", "dimension", "kind", "verdicts"], ["unit"]),
                 column_config=table_config(
                     keys={"run": "", "dimension": "", "kind": "sentence, pair, fact or whole"},
                     decisions={"verdicts": "The unit's verdicts, one per sub-dimension"},
                     long={"unit": "The unit's text"}))


def listing_table(listing: list[dict[str, Any]], lead_label: str, gap_dim: str) -> None:
    """Every item of the lead run, largest score difference with humans first."""
    with st.expander(f"All {len(listing)} items, largest score difference with humans first"):
        st.dataframe(pd.DataFrame(listing), hide_index=True, width="stretch",
                     column_config=table_config(
                         keys={"item_id": "", "group_id": "", "system_id": ""},
                         scores={"judge": f"Score of {lead_label} on {gap_dim}",
                                 "human": f"Human score on {gap_dim}",
                                 "gap": "Score difference |judge − human|, both scaled to 0–1 "
                                        "over the run"},
                         labels={"item_id": "item", "group_id": "group", "system_id": "system",
                                 "judge": "judge score", "human": "human score",
                                 "gap": "score difference"},
                         hidden=["item_pk"]))
