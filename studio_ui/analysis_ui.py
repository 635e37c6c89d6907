"""Rendering of the Analysis page's sections from ``checkeval_core.analysis.analysis_view``
results (Streamlit calls only; every number and sentence comes from the core).

Sending flagged questions back to review changes a checklist, so it shows what it will move
and the evidence behind each flag, lets the person pick, asks to confirm and can be undone.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import sqlite_utils
import streamlit as st

from checkeval_core.analysis.analysis_view import page_data, send_reasons
from checkeval_core.analysis.external import MetricFileError, import_metric
from checkeval_core.analysis.judge_agreement import judge_agreement
from checkeval_core.checklists.review import send_to_review, undo_send_to_review
from checkeval_core.export import rows_to_csv
from checkeval_core.store import open_db
from checkeval_core.team import acting_name
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.tables import NOTE_COLUMNS as NOTES
from studio_ui.tables import order, show_table, table_config
from studio_ui.widgets import ask_before_replacing

REASON = "flagged by question diagnostics"


def table(rows: Any, spec: dict[str, Any], key: str | None = None,
          reasons: dict[str, str] | None = None, notes: bool = False, **kw: Any) -> Any:
    """A table with its column meanings (``spec`` from ``analysis_view.columns``); an
    undefined value is a dash, why on the column's hover (``reasons``, else the row's note).
    With ``notes``, the notes and the reasons for a missing interval are also written out in
    full under it (a cell cuts them at 1440 px)."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    out = show_table(df, table_config(**spec["config"]), reasons, hide_index=True,
                     width="stretch", key=key,
                     column_order=order([c for c in spec["order"] if c in df.columns],
                                        spec.get("long", [])), **kw)
    lines = note_lines(df) if notes else []
    if lines:
        st.caption("Notes in full:\n" + "\n".join(f"- {line}" for line in lines))  # escaped
    return out


MAX_NOTES = 6


def note_lines(df: pd.DataFrame) -> list[str]:
    """Each distinct note of a table (its note column, and any cell saying why there is no
    interval) once, with the rows it is about (their dimension, else their first column)."""
    if df.empty:
        return []
    key = "dimension" if "dimension" in df.columns else df.columns[0]
    found: dict[str, list[str]] = {}
    for _, row in df.iterrows():
        texts = [row[c] for c in df.columns if c != key and isinstance(row[c], str)
                 and (c in NOTES or row[c].startswith("no interval"))]
        for text in (t.strip() for t in texts):
            if text:
                found.setdefault(text, []).append(str(row[key]))
    lines = [f"**{md_escape(', '.join(dict.fromkeys(rows)))}** ({len(rows)} row(s)): "
             f"{md_escape(text)}" for text, rows in found.items()]
    if len(lines) > MAX_NOTES:
        lines = [*lines[:MAX_NOTES], f"… and {len(lines) - MAX_NOTES} more note(s): every one "
                 "is in the CSV"]
    return lines


@st.cache_data(ttl=60, show_spinner="Computing correlations and bootstrap intervals…")
def cached_page_data(db_file: str, *args: Any) -> dict[str, Any]:
    """``analysis_view.page_data(db, *args)``, cached across reruns and sessions (it opens the
    database file itself); the last argument is the cache stamp (``report.scores_stamp``)."""
    return page_data(open_db(db_file), *args[:-1])


@st.cache_data(ttl=600, show_spinner="Comparing judges per method…")
def cached_judge_agreement(db_file: str, task: str, stamp: str) -> dict[str, Any]:
    """``judge_agreement(db, task)``: it reads every run of the task, not the selection, so
    it is cached on the task and the scores' stamp only (a new selection does not redo it)."""
    return judge_agreement(open_db(db_file), task)


def correlation_chart(slot: Any, view: dict[str, Any], key: str | None = None) -> Any:
    """The correlation chart in ``slot`` (``st.empty``) with what it is read with: the
    coverage note, why there is no chart, how many bars lack an interval — or, for the point
    figures drawn first (``analysis_view.first_chart``), what is still being computed. The
    page draws those in a slot of their own and empties it once the full view is drawn (drawn
    into the same slot, the first chart stayed under the full one in a browser); ``key``: a
    clickable chart, whose selection event is returned."""
    with slot.container():
        if view["coverage_note"]:  # runs over different items: said before anything is read
            (st.warning if view["comparable"] else st.error)(view["coverage_note"])
        if view["chart_note"]:
            st.info(view["chart_note"])
            return None
        if view.get("interval_note"):  # a bar without an interval is read with this
            st.warning(view["interval_note"])
        if view.get("pending"):
            st.caption(view["pending"])
        if key is None:
            st.plotly_chart(view["figure"])
            return None
        return st.plotly_chart(view["figure"], key=key, on_select="rerun",
                               selection_mode="points")


def agreement_section(ag: dict[str, Any], cols: dict[str, Any]) -> None:
    if ag.get("note"):
        st.info(ag["note"])
        return
    for col, tile in zip(st.columns(3), ag["tiles"]):
        col.metric(tile["label"], tile["value"], help=tile["reason"] or None)
        col.caption(" · ".join(x for x in (tile["reason"], tile["interval"]) if x))
    st.caption(ag["caption"])
    if ag["heatmap"] is not None:
        st.plotly_chart(ag["heatmap"], key="an_heat")
    if ag["pairs"]:
        table(ag["pairs"], cols["pairs"])


def judge_agreement_section(ja: dict[str, Any], cols: dict[str, Any]) -> None:
    """CheckEval's comparison: agreement across judges per method, checklist vs Likert."""
    st.markdown("**Per method: do different judges agree? (checklist vs Likert, over every "
                "completed run of this task)**")
    if ja["note"]:
        st.info(ja["note"])
        return
    st.plotly_chart(ja["figure"], key="an_judge_agreement")
    table(ja["rows"], cols["judge_agreement"])
    st.caption("Each method: one run per judge on one checklist version, compared on the items "
               "all of them scored; α near 1 = the judges give the same scores, 0 = no better "
               "than chance, below 0 = systematic disagreement. α on the scores counts one "
               "judge's offset (e.g. a mean p(Yes) of 0.5 against 0.8) as disagreement; α on "
               "the standardised scores asks only whether the judges agree on which items are "
               "better." + ("  Not compared — " + "; ".join(ja["missing"])
                            if ja["missing"] else ""))


def metric_import(db: sqlite_utils.Database, task: str) -> None:
    """The external-metric uploader: a bad file is refused with the core's message."""
    with st.expander("External metric (compare with ROUGE or your own metric)"):
        up = st.file_uploader("CSV with item_id and one column per dimension", type=["csv"],
                              key="an_metric_file")
        pressed = up is not None and st.button("Import metric", key="an_metric_import")
        try:  # a metric of the same name is replaced only once the person said so
            res = ask_before_replacing(
                "an_metric_replace", pressed,
                (task, up and up.name, up and len(up.getvalue())),
                lambda replace: import_metric(db, task, up.name, data=up.getvalue(),
                                              replace=replace)) if up is not None else None
        except MetricFileError as e:
            st.error(md_escape(str(e)))
        else:
            if res:
                st.success(f"Imported {res['n_scores']} scores as metric "
                           f"'{md_escape(res['metric'])}'" + (
                               f" (replacing its {res['replaced']} earlier scores)"
                               if res["replaced"] else ""))


def stability_section(view: dict[str, Any], cols: dict[str, Any]) -> None:
    """Stability across judges, method-vs-method significance and the quality split."""
    st.subheader("Stability across judges")
    stab = view["stability"]
    if stab["note"]:
        st.info(stab["note"])
    else:
        st.plotly_chart(stab["figure"], key="an_violin")
        table(stab["rows"], cols["stability"])
    if view["significance"]:
        st.subheader("Significance: method vs method over judges (Wilcoxon, BH-corrected)")
        table(view["significance"], cols["significance"])
        st.caption("Pairs are the same judge under two methods; the note says why a test is "
                   "blank.")
    st.subheader("High- vs low-quality items (human ≥ 3 vs < 3)")
    if not view["quality"]:
        st.caption("No item of the selected runs has a human score: nothing to split.")
    else:
        table(view["quality"], cols["quality"])


def humans_section(ev: dict[str, Any], cols: dict[str, Any]) -> None:
    if not ev["annotators"]:
        st.caption("Humans vs judges: no Yes/No annotations for this task yet — annotate items "
                   "on the Annotate page to compare the judges with people.")
        return
    st.subheader("Humans: among annotators and against each judge")
    st.write(ev["human_line"])
    if ev["human_empty"]:
        st.caption("α and κ among annotators need ≥ 2 annotators answering the same (item, "
                   "question): assign overlapping items on the Annotation jobs page.")
    table(ev["human_judge"], cols["human_judge"])


def diagnostics_section(db: sqlite_utils.Database, ev: dict[str, Any],
                        cols: dict[str, Any]) -> None:
    st.subheader("Question diagnostics")
    if ev.get("basis"):  # which answers and items every row below reads
        st.info(ev["basis"])
    if ev["figure"] is not None:
        st.plotly_chart(ev["figure"], key="an_diag")
    for line in ev["notes"]:
        st.caption(line)
    rows = pd.DataFrame(ev["diagnostics"])
    f1, f2 = st.columns(2)
    if f1.checkbox("Only flagged questions", key="an_flagged") and len(rows):
        rows = rows[rows["flags"].astype(bool) & ~rows["flags"].str.startswith("(")]
    if f2.checkbox("Only unstable or length-following questions", key="an_unstable_length",
                   help="Questions flagged 'unstable' (their verdict changes with the "
                        "prompt's wording) or 'follows length' (their Yes rises or falls "
                        "with the output's length)") and len(rows):
        rows = rows[rows["question_id"].isin(ev["unstable_or_length"])]
    table(rows, cols["diagnostics"], reasons=dict.fromkeys(
        ("yes_rate", "discrimination", "judge_agreement", "human_agreement", "flip_rate",
         "p_yes_sd", "flip_n", "length_r"), "undefined: the notes above the table say why"))
    review_flagged(db, ev["candidates"], cols)


def _send_confirmed(pending: list[int], reasons: dict[int, str]) -> None:
    """*Confirm*'s action, run before the redraw: only there may the selector be emptied (a
    widget's value cannot be set once it is drawn; popping it left the sent chips shown)."""
    st.session_state["an_send_done"] = send_to_review(page_db(), pending, REASON,
                                                      actor=acting_name(), reasons=reasons)
    st.session_state.pop("an_send_pending", None)
    st.session_state["an_send_pick"] = []


def review_flagged(db: sqlite_utils.Database, cands: list[dict[str, Any]],
                   cols: dict[str, Any]) -> None:
    """Pick flagged questions, see their evidence, confirm, then (optionally) undo."""
    done = st.session_state.get("an_send_done")
    if done:
        st.success(f"{len(done['moved'])} questions are back in the review queue (Checklist "
                   "review page)." + (f" {len(done['skipped'])} skipped (no longer kept)."
                                      if done["skipped"] else ""))
        if st.button("Undo: put them back as they were", key="an_send_undo"):
            res = undo_send_to_review(db, done)
            st.session_state.pop("an_send_done")
            st.session_state["an_send_undone"] = res
            st.rerun()
    undone = st.session_state.pop("an_send_undone", None)
    if undone:
        st.success(f"Undone: {len(undone['restored'])} questions restored."
                   + (f" {len(undone['kept_decision'])} keep the decision a reviewer made "
                      "since." if undone["kept_decision"] else ""))
    if not cands:
        st.caption("No flagged question is still kept: nothing to send back to review.")
        return
    st.markdown(f"**Send flagged questions back to the review queue** — {len(cands)} flagged "
                "and still kept; the evidence behind each flag:")
    table(cands, cols["candidates"])
    text = {c["question_id"]: c for c in cands}
    picked = st.multiselect(
        "Questions to send back (they become 'proposed' until a reviewer decides again)",
        list(text), key="an_send_pick",
        format_func=lambda q: f"#{q} {text[q]['question'][:70]} — {text[q]['flags']} "
                              f"({text[q]['groups']} groups)")
    if st.button(f"Send {len(picked)} selected questions to review…", key="an_send",
                 disabled=not picked):
        st.session_state["an_send_pending"] = list(picked)
    pending = [q for q in st.session_state.get("an_send_pending") or [] if q in text]
    if not pending:
        return
    st.warning(f"Move {len(pending)} questions from kept back to proposed? They leave the "
               "checklist until a reviewer keeps them again; you can undo this.")
    c1, c2, _ = st.columns([1, 1, 4])
    c1.button("Confirm", key="an_send_confirm", type="primary", on_click=_send_confirmed,
              args=(pending, send_reasons([text[q] for q in pending])))
    if c2.button("Cancel", key="an_send_cancel"):
        st.session_state.pop("an_send_pending", None)
        st.rerun()


def downloads(view: dict[str, Any], task: str) -> None:
    """The correlation table (CSV), the whole report (JSON) and the chart (HTML)."""
    d1, d2, d3, _ = st.columns([1, 1, 1, 3])
    d1.download_button("CSV", rows_to_csv(view["table"]), f"{task}-correlations.csv",
                       key="an_csv")
    d2.download_button("JSON", json.dumps(view["report"], default=str),
                       f"{task}-analysis.json", key="an_dl_json")
    if view["figure"] is not None:
        d3.download_button("Figure (HTML)", view["figure"].to_html(),
                           f"{task}-correlations.html", key="an_dl_html")
