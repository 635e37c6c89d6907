"""Rendering helpers of the Rankings page (Streamlit calls only; the rows, sentences and
default choices come from ``checkeval_core.analysis.rankings_view``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.analysis.health import opening_tie_margin
from checkeval_core.analysis.rankings_view import systems_of
from checkeval_core.analysis.report import scores_stamp
from checkeval_core.annotation.preferences import (
    PreferenceError,
    import_preferences,
    import_ratings,
)
from checkeval_core.stats.values import fmt
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape
from studio_ui.widgets import ask_before_replacing


@st.cache_data(ttl=60, max_entries=16, show_spinner=False)
def _opening_margin(path: str, run_id: int, aggregation: str, stamp: str) -> float:
    return opening_tie_margin(open_db(path), run_id, aggregation)


def opening_margin(db: sqlite_utils.Database, run_id: int, aggregation: str) -> float:
    """The tie margin the page opens on for a run (``analysis.health.opening_tie_margin``)."""
    return _opening_margin(db_path(db), int(run_id), aggregation, scores_stamp(db))


def import_expander(db: sqlite_utils.Database, task: str) -> None:
    """Upload human pairwise preferences or reference ratings into ``task``."""
    with st.expander("Import human preferences or reference ratings"):
        c1, c2 = st.columns(2)
        up_p = c1.file_uploader(
            "Pairwise preferences (CSV / JSONL)", type=["csv", "jsonl", "json"],
            key="rk_pref_file", help="group_id, item_a, item_b, winner (a / b / tie) — or "
            "input, output_1, output_2, label (1 / 2), which creates the answers as items")
        up_r = c2.file_uploader(
            "Reference ratings (CSV / JSON)", type=["csv", "json", "jsonl"],
            key="rk_rating_file", help="system_id, rating, optional lower / upper — or "
            "models.json with arena_elo, arena_elo_lower, arena_elo_upper")
        try:
            if up_p is not None and c1.button("Import preferences", key="rk_pref_import"):
                res = import_preferences(db, task, data=up_p.getvalue(), filename=up_p.name)
                c1.success(f"Imported {res['n_preferences']} preferences over "
                           f"{res['n_groups']} queries ({res['n_items_created']} items "
                           "created)" + (f"; {res['n_already_stored']} were already stored "
                                         f"(same vote ids), {res['n_new']} new."
                                         if res.get("n_already_stored") else "."))
            pressed = up_r is not None and c2.button("Import ratings", key="rk_rating_import")
            # ratings of the same source are replaced only once the person said so
            res = ask_before_replacing(
                "rk_rating_replace", pressed,
                (task, up_r and up_r.name, up_r and len(up_r.getvalue())),
                lambda replace: import_ratings(db, task, data=up_r.getvalue(),
                                               filename=up_r.name, replace=replace)
            ) if up_r is not None else None
            if res:
                c2.success(f"Imported {res['n_ratings']} ratings as "
                           f"{md_escape(repr(res['source']))}: {len(res['matched'])} systems "
                           "of this task" + (f", {len(res['unmatched'])} not in it"
                                             if res["unmatched"] else "")
                           + (f" (replacing {res['replaced']} earlier ratings)."
                              if res["replaced"] else "."))
        except PreferenceError as e:
            st.error(md_escape(str(e)))


def pair_picker(view: dict[str, Any], focus: str | None) -> tuple[int, int]:
    """Query, system A and system B selectors; by default a pair that some checklist question
    decides (``view["default_pair"]``), or the leaderboard's selected system as A."""
    groups, dflt = list(view["queries"]), view["default_pair"] or {}
    if not groups:
        st.info("This run has no scored answers.")
        st.stop()
    q1, q2, q3 = st.columns([3, 2, 2])
    group = q1.selectbox("Query", groups, key="rk_query",
                         index=groups.index(dflt["group"]) if dflt and not focus else 0,
                         format_func=lambda g: f"{g} · {view['queries'].get(g, '')[:80]}")
    in_q = systems_of(view, group)
    if len(in_q) < 2:
        st.info("This query has fewer than two scored answers.")
        st.stop()
    systems = list(in_q)
    is_dflt = not focus and dflt.get("group") == group
    a_name = focus if focus in systems else (dflt["system_a"] if is_dflt else systems[0])
    # a new key per leaderboard selection, so selecting a system there moves System A to it
    sys_a = q2.selectbox("System A", systems, index=systems.index(a_name),
                         key="rk_sys_a" if focus is None else f"rk_sys_a:{focus}")
    others = [s for s in systems if s != sys_a]
    b_name = dflt["system_b"] if is_dflt and dflt.get("system_b") in others else others[0]
    sys_b = q3.selectbox("System B", others, key="rk_sys_b", index=others.index(b_name))
    return in_q[sys_a], in_q[sys_b]


def show_pair(detail: dict[str, Any]) -> None:
    """Both answers side by side and each question's Yes/No and p(Yes) for A and B."""
    st.markdown("**Query**")
    st.text(detail["query"] or "(no query text)")
    for col, side, name in zip(st.columns(2), (detail["a"], detail["b"]), "AB"):
        score = fmt(side["score"])
        who = md_escape(side["system"] or side["item_id"])
        col.markdown(f"**{name}: {who}** · score {score}")
        col.code(side["output"], language=None, wrap_lines=True, height=320)
    if detail["human"]:
        st.caption("Human vote(s): " + ", ".join(
            f"{md_escape(h['winner'])} ({md_escape(h['source'] or h['annotator'])})"
            for h in detail["human"]))
    st.caption(detail["summary"])
    if detail["rows"]:
        st.dataframe(pd.DataFrame(detail["rows"]), hide_index=True, key="rk_questions",
                     column_order=["decided", "A", "p(Yes) A", "B", "p(Yes) B", "Δ p(Yes)",
                                   "question"],
                     column_config={"p(Yes) A": st.column_config.NumberColumn(format="%.2f"),
                                    "p(Yes) B": st.column_config.NumberColumn(format="%.2f"),
                                    "Δ p(Yes)": st.column_config.NumberColumn(format="%+.2f"),
                                    "question": st.column_config.TextColumn(width="large")})


def show_position_bias(block: dict[str, Any]) -> None:
    """The position bias of the human votes (``view["position_bias"]``): a warning per
    annotator (and overall) whose votes follow position, then the short table."""
    for w in block["warnings"]:
        st.warning(md_escape(w), icon="⚠️")
    if block["caption"]:
        st.caption(block["caption"])
    if block["rows"]:
        st.dataframe(pd.DataFrame(block["rows"]), hide_index=True, key="rk_position_bias",
                     column_config={
                         "left share": st.column_config.NumberColumn(format="percent"),
                         "CI low": st.column_config.NumberColumn(format="percent"),
                         "CI high": st.column_config.NumberColumn(format="percent")})
