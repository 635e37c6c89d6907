"""Rankings: which of my models is best, and why — a run's ranking of systems against a
reference rating and human pairwise votes, down to each checklist decision (RocketEval's
setting). The page renders what ``checkeval_core.analysis.rankings_view`` returns; each
agreement number carries the pairs, queries and systems behind it and its interval."""

import pandas as pd
import streamlit as st

from checkeval_core.analysis.ranking_charts import score_vs_reference
from checkeval_core.analysis.rankings_view import pair_view, rankings_page
from checkeval_core.annotation.preferences import human_data_stamp, rating_sources
from checkeval_core.runs import list_runs
from checkeval_core.runs.labels import run_label
from checkeval_core.runs.score_read import aggregations
from checkeval_core.runs.selection import default_reference
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape
from studio_ui.calibrate_ui import calibrated_section
from studio_ui.frame import page_db
from studio_ui.health import health_box
from studio_ui.rankings_ui import (
    import_expander,
    opening_margin,
    pair_picker,
    show_pair,
    show_position_bias,
)
from studio_ui.tables import dash_missing, show_table, table_config
from studio_ui.widgets import csv_download, task_picker

st.title("Rankings")
st.caption("Rank the systems (models) of a task by a run's checklist scores, compare the "
           "ranking with a reference rating (e.g. Chatbot Arena Elo) and with human pairwise "
           "votes, and open any two answers to see which questions decided between them.")
db = page_db()
task = task_picker(db, "rk_task", "No task yet: load the demo on the Home page or import "
                                  "queries × models on the Data page.", prefer_kind="instruction")
import_expander(db, task)
runs = [r for r in list_runs(db, task) if r["status"] == "completed"]
if not runs:
    st.info("No completed run for this task yet: start one on the Run page (for rankings, "
            "a per-query checklist with the rocketeval method).")
    st.stop()
labels = {r["id"]: run_label(r) for r in runs}
ref = default_reference(db, task, list(labels))  # the reference run, not the newest small one
c1, c2, c3, c4 = st.columns([3, 2, 1, 2])
run_id = c1.selectbox("Run", list(labels), format_func=labels.get, key="rk_run",
                      index=list(labels).index(ref) if ref in labels else 0)
aggs = aggregations(db, run_id)
agg = c2.selectbox("Aggregation", aggs, key="rk_agg",
                   index=aggs.index("mean_p_yes") if "mean_p_yes" in aggs else 0)
if st.session_state.get("rk_tie_for") != (run_id, agg):  # a run's own spread sets the margin
    st.session_state.update(rk_tie_for=(run_id, agg), rk_tie=opening_margin(db, run_id, agg))
tie = c3.number_input("Tie margin", 0.0, 1.0, step=0.01, key="rk_tie", format="%.4f",
                      help="Two answers whose scores differ by less than this are a tie. Opens "
                           "on the margin derived from this run's score spread (0.2 × IQR; "
                           "RocketEval's 0.1 ties most matches of a judge with close scores).")
sources = rating_sources(db, task)
ref_src = c4.selectbox("Reference rating", sources or ["(none imported)"], key="rk_ref")


@st.cache_data(ttl=60, show_spinner="Ranking systems and bootstrapping over queries…")
def compute(db_file: str, run: int, aggregation: str, margin: float, source: str | None,
            stamp: str, drop_biased: bool) -> dict:
    return rankings_page(open_db(db_file), run, aggregation, margin, source,
                         drop_biased=drop_biased)


try:  # the checkbox is drawn with the position bias below; its last value is read here
    view = compute(db_path(db), run_id, agg, float(tie), ref_src if sources else None,
                   human_data_stamp(db), bool(st.session_state.get("rk_drop_biased")))
except ValueError as e:
    st.error(md_escape(str(e)))
    st.stop()
health_box(db, [run_id], "rankings", agg, float(tie), tie_key="rk_tie")
st.subheader("Leaderboard")
st.caption(view["board_caption"])
board = pd.DataFrame(view["leaderboard"])
board_cfg = {**table_config(long={"system": "The system (model)"}, widths={"system": 260},
                            counts={"queries": "Queries the score rests on"}),
             **{c: st.column_config.NumberColumn(c, format="%.3f", help=h) for c, h in (
                 ("score", "Mean over queries of the answer scores"),
                 ("CI low", "95% interval (queries resampled)"),
                 ("CI high", "95% interval (queries resampled)"))},
             "judge Elo": st.column_config.NumberColumn("judge Elo", format="%.0f")}
no_ref, no_ci = "no reference rating for this system", "no interval: see the caption above"
shown, board_cfg = dash_missing(board, board_cfg, {  # a dash with why, never "None"
    "reference": no_ref, "reference rank": no_ref, "CI low": no_ci, "CI high": no_ci})
sel_board = st.dataframe(shown, hide_index=True, on_select="rerun", key="rk_board",
                         selection_mode="single-row", column_config=board_cfg)
csv_download(board, f"rankings_run{run_id}.csv", "rk_board_csv")
if view["correlation_line"] is None:
    st.info("No reference ratings for this task: import a file of system_id, rating (or "
            "Chatbot Arena's models.json) above to see ρ / τ against it.")
else:
    st.markdown(view["correlation_line"])  # the one place ρ/τ are printed (numbers only)
    st.plotly_chart(score_vs_reference(view["report"]), key="rk_scatter")
    if view["aggregation_line"]:
        st.caption(view["aggregation_line"])
calibrated_section(db, [run_id], labels, agg, "rk_cal")
with st.expander("Elo ratings (Bradley–Terry on matches per query)", expanded=False):
    st.caption(view["elo"]["caption"])
    st.caption(md_escape(view["elo"]["human_caption"]))  # names the annotators left out
    show_table(pd.DataFrame(view["elo"]["rows"]),
               {c: st.column_config.NumberColumn(format="%.0f") for c in (
                   "judge Elo", "CI low", "CI high", "human Elo", "human CI low",
                   "human CI high")}, hide_index=True, key="rk_elo")
st.subheader("Agreement with human pairwise votes")
show_position_bias(view["position_bias"])
if view["position_bias"]["biased"]:
    st.checkbox(f"Leave out the votes of {md_escape(', '.join(view['position_bias']['biased']))}"
                " (they follow position)", key="rk_drop_biased",
                help="Human Elo, pair accuracy and the pairs below then use the other "
                     "annotators' votes only; the position-bias table still shows everyone.")
    if view["position_bias"]["dropped"]:
        st.caption(f"{view['position_bias']['n_dropped']} votes left out.")
pw, sel_pair, pairs_df = view["pairwise"], None, pd.DataFrame()
if pw["n_pairs"] == 0:
    st.info(pw["reason"])
else:
    for col, (label, value, why) in zip(st.columns(4), pw["metrics"]):
        col.metric(label, value, help=why)
    st.caption(pw["support_line"])
    st.dataframe(pd.DataFrame(pw["confusion"]).T, key="rk_confusion")
    pairs_df = pd.DataFrame(pw["rows"])
    st.caption("Select a pair to see both answers and the questions that decided it.")
    sel_pair = st.dataframe(pairs_df, hide_index=True, on_select="rerun", key="rk_pairs",
                            selection_mode="single-row",
                            column_order=[c for c in pairs_df.columns if not c.startswith("_")],
                            column_config={c: st.column_config.NumberColumn(format="%.3f")
                                           for c in ("score A", "score B")})
st.subheader("Two answers side by side")
rows_sel = sel_pair.selection.rows if sel_pair is not None else []
if rows_sel:
    r = pairs_df.iloc[rows_sel[0]]
    pick_a, pick_b = int(r["_a"]), int(r["_b"])
    st.caption(f"Pair selected above (group {md_escape(str(r['group']))}); clear the selection "
               f"to pick a query and two systems instead.")
else:
    board_rows = sel_board.selection.rows
    pick_a, pick_b = pair_picker(view, board.iloc[board_rows[0]]["system"] if board_rows
                                 else None)
show_pair(pair_view(db, run_id, pick_a, pick_b, agg))
