"""The judge-health warning box shown above the charts a weak judge undermines (Analysis,
Rankings): one call per page; the findings and thresholds come from
``checkeval_core.analysis.health``."""

from __future__ import annotations

import math

import sqlite_utils
import streamlit as st

from checkeval_core.analysis.health import health_warnings, runs_health
from checkeval_core.analysis.report import scores_stamp
from checkeval_core.stats.values import pct
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape

#: Findings shown in the warning box itself (so the charts stay near the top of the page).
SHOWN = 2


@st.cache_data(ttl=60, show_spinner=False)
def _health(db_file: str, run_ids: tuple[int, ...], aggregation: str | None,
            tie_margin: float | None, stamp: str) -> dict:
    return runs_health(open_db(db_file), list(run_ids), aggregation, tie_margin)


def health_box(db: sqlite_utils.Database, run_ids: list[int], context: str,
               aggregation: str | None = None, tie_margin: float | None = None,
               labels: dict[int, str] | None = None, tie_key: str | None = None) -> None:
    """A warning listing the health findings of ``run_ids`` that matter for ``context``
    (``analysis`` / ``rankings``); nothing when the judges look healthy. With ``tie_key``
    (the page's tie-margin widget) it also says which margin is used and offers the one
    derived from the score spread."""
    run_ids = [int(r) for r in run_ids if str(r).isdigit()]
    if not run_ids:
        return
    health = _health(db_path(db), tuple(run_ids), aggregation, tie_margin, scores_stamp(db))
    names = {str(k): v for k, v in (labels or {}).items()}
    msgs = health_warnings(health, context, names)
    if msgs:  # the two most undermining findings in view, the rest one click away
        st.warning("**Judge health** — read the charts below with this in mind:\n\n"
                   + "\n".join(f"- {md_escape(m)}" for m in msgs[:SHOWN]),
                   icon=":material/warning:")
        if msgs[SHOWN:]:
            with st.expander(f"{len(msgs) - SHOWN} more judge-health finding(s)"):
                st.markdown("\n".join(f"- {md_escape(m)}" for m in msgs[SHOWN:]))
    if tie_key is None:
        return
    t = health[str(run_ids[0])]["ties"]
    d = t["derived_margin"]
    if d is None or math.isnan(d):
        st.caption(f"Tie margin used: {t['margin']:g} ({t['margin_source']}); no margin can be "
                   "derived from the score spread (fewer than 2 scored items).")
        return
    share = t["share"]
    c1, c2 = st.columns([5, 1], vertical_alignment="center")
    c1.caption(f"Tie margin used: **{t['margin']:.3g}** ({t['margin_source']}"
               + (f", {pct(share)} of {t['n_matches']} matches tied" if share == share else "")
               + f") · derived from the score spread: **{d:.3g}** ({t['rule']}, IQR "
                 f"{t['score_iqr']:.3g}"
               + (f"; {pct(t['share_at_derived'])} ties" if t["share_at_derived"] ==
                  t["share_at_derived"] else "") + ")")
    c2.button("Use derived margin", key=f"{tie_key}_derive", disabled=abs(t["margin"] - d) < 1e-9,
              on_click=_set, args=(tie_key, round(float(d), 4)),
              help="Set the tie margin to the one derived from this run's score spread")


def _set(key: str, value: float) -> None:
    st.session_state[key] = value
