"""Rankings: which of my models is best, and why — a run's ranking of systems against a
reference rating and human pairwise votes, down to each checklist decision (RocketEval's
setting, issue 14)."""

import math

import pandas as pd
import streamlit as st

from checkeval_core.analysis.ranking_charts import correlation_title, score_vs_reference
from checkeval_core.analysis.rankings import (
    pair_detail,
    pairs_report,
    query_answers,
    rankings_report,
)
from checkeval_core.annotation.preferences import (
    PreferenceError,
    human_data_stamp,
    import_preferences,
    import_ratings,
    rating_sources,
)
from checkeval_core.runs import list_runs
from checkeval_core.runs.score_read import aggregations
from checkeval_core.store import db_path, open_db
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.widgets import csv_download, task_picker

st.title("Rankings")
st.caption("Rank the systems (models) of a task by a run's checklist scores, compare the "
           "ranking with a reference rating (e.g. Chatbot Arena Elo) and with human pairwise "
           "votes, and open any two answers to see which questions decided between them.")
db = page_db()
task = task_picker(db, "rk_task", "No task yet: load the demo on the Home page or import "
                                  "queries × models on the Data page.", prefer_kind="instruction")

with st.expander("Import human preferences or reference ratings"):
    c1, c2 = st.columns(2)
    up_p = c1.file_uploader("Pairwise preferences (CSV / JSONL)", type=["csv", "jsonl", "json"],
                            key="rk_pref_file",
                            help="group_id, item_a, item_b, winner (a / b / tie) — or "
                                 "input, output_1, output_2, label (1 / 2), which creates the "
                                 "answers as items")
    if up_p is not None and c1.button("Import preferences", key="rk_pref_import"):
        try:
            res = import_preferences(db, task, data=up_p.getvalue(), filename=up_p.name)
            c1.success(f"Imported {res['n_preferences']} preferences over {res['n_groups']} "
                       f"queries ({res['n_items_created']} items created).")
        except PreferenceError as e:
            c1.error(str(e))
    up_r = c2.file_uploader("Reference ratings (CSV / JSON)", type=["csv", "json", "jsonl"],
                            key="rk_rating_file",
                            help="system_id, rating, optional lower / upper — or models.json "
                                 "with arena_elo, arena_elo_lower, arena_elo_upper")
    if up_r is not None and c2.button("Import ratings", key="rk_rating_import"):
        try:
            res = import_ratings(db, task, data=up_r.getvalue(), filename=up_r.name)
            c2.success(f"Imported {res['n_ratings']} ratings as {res['source']!r}: "
                       f"{len(res['matched'])} systems of this task"
                       + (f", {len(res['unmatched'])} not in it." if res["unmatched"] else "."))
        except PreferenceError as e:
            c2.error(str(e))

runs = [r for r in list_runs(db, task) if r["status"] == "completed"]
if not runs:
    st.info("No completed run for this task yet: start one on the Run page (for rankings, "
            "a per-query checklist with the rocketeval method).")
    st.stop()
labels = {r["id"]: f"#{r['id']} {r['judge_spec']} · {r['method']}" for r in runs}
c1, c2, c3, c4 = st.columns([3, 2, 1, 2])
run_id = c1.selectbox("Run", list(labels), format_func=labels.get, key="rk_run")
aggs = aggregations(db, run_id)
agg = c2.selectbox("Aggregation", aggs, key="rk_agg",
                   index=aggs.index("mean_p_yes") if "mean_p_yes" in aggs else 0)
tie = c3.number_input("Tie margin", 0.0, 1.0, 0.1, 0.01, key="rk_tie",
                      help="Two answers whose scores differ by less than this are a tie "
                           "(RocketEval: 0.1).")
sources = rating_sources(db, task)
ref_src = c4.selectbox("Reference rating", sources or ["(none imported)"], key="rk_ref")
ref_src = ref_src if sources else None


@st.cache_data(ttl=60, show_spinner="Ranking systems and bootstrapping over queries…")
def compute(db_file: str, run: int, aggregation: str, margin: float, source: str | None,
            stamp: str) -> tuple[dict, dict]:
    d = open_db(db_file)
    return (rankings_report(d, run, aggregation, tie_margin=margin, n_boot=200,
                            reference_source=source),
            pairs_report(d, run, aggregation, tie_margin=margin))


stamp = human_data_stamp(db)
try:
    rep, prs = compute(db_path(db), run_id, agg, float(tie), ref_src, stamp)
except ValueError as e:
    st.error(str(e))
    st.stop()


def _v(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


# -- leaderboard --------------------------------------------------------------------------------
st.subheader("Leaderboard")
board = pd.DataFrame([{
    "rank": s["rank"], "system": s["system"], "score": _v(s["score"]),
    "CI low": _v(s["ci"][0]), "CI high": _v(s["ci"][1]), "reference": _v(s["reference"]),
    "reference rank": s["reference_rank"], "judge Elo": _v(s["elo"]),
    "queries": s["n_queries"]} for s in rep["systems"]])
st.caption(f"{rep['n_systems']} systems × {rep['n_queries']} queries · score = mean over "
           f"queries of the system's answer scores ({rep['aggregation']}); 95% interval from "
           f"resampling queries. Select a row to open that system's answers below.")
sel_board = st.dataframe(board, hide_index=True, on_select="rerun",
                         selection_mode="single-row", key="rk_board",
                         column_config={"score": st.column_config.NumberColumn(format="%.3f"),
                                        "CI low": st.column_config.NumberColumn(format="%.3f"),
                                        "CI high": st.column_config.NumberColumn(format="%.3f"),
                                        "judge Elo": st.column_config.NumberColumn(
                                            format="%.0f")})
csv_download(board, f"rankings_run{run_id}.csv", "rk_board_csv")
if rep["reference_source"] is None:
    st.info("No reference ratings for this task: import a file of system_id, rating (or "
            "Chatbot Arena's models.json) above to see ρ / τ against it.")
else:
    st.markdown(correlation_title(rep))  # numbers and our own reason strings only
    st.plotly_chart(score_vs_reference(rep), key="rk_scatter")
    st.caption("Per aggregation of this run (point estimates): " + " · ".join(
        f"{a}: ρ {v['spearman']:.2f}, τ {v['kendall']:.2f}" if not math.isnan(v["spearman"])
        else f"{a}: {v['reason']}" for a, v in rep["aggregations"].items()))

with st.expander("Elo ratings (Bradley–Terry on matches per query)", expanded=False):
    el = rep["elo"]
    st.caption(f"Judge: {el['n_matches']} matches over {el['n_queries']} queries, {el['n_ties']} "
               f"ties (|Δ| < {rep['tie_margin']}); 1000 = mean, +400 = 10:1 odds."
               + (" A weak prior keeps ratings finite (some system never won or never lost)."
                  if el["regularised"] else ""))
    elo_df = pd.DataFrame([{"rank": s["rank"], "system": s["system"], "judge Elo": s["rating"],
                            "CI low": _v(s["ci"][0]), "CI high": _v(s["ci"][1])}
                           for s in el["systems"]])
    hum = rep["human_elo"]
    if hum["systems"]:
        h = {s["system"]: s for s in hum["systems"]}
        elo_df["human Elo"] = elo_df["system"].map(lambda x: h[x]["rating"] if x in h else None)
        st.caption(f"Human: {hum['n_matches']} votes between systems; judge score vs human "
                   f"Elo ρ = {hum['judge_vs_human']['spearman']:.2f}.")
    else:
        st.caption(hum["reason"])
    st.dataframe(elo_df, hide_index=True, key="rk_elo",
                 column_config={c: st.column_config.NumberColumn(format="%.0f")
                                for c in ("judge Elo", "CI low", "CI high", "human Elo")})

# -- pairwise agreement -------------------------------------------------------------------------
st.subheader("Agreement with human pairwise votes")
sel_pair = None
pairs_df = pd.DataFrame()
if prs["n_pairs"] == 0:
    st.info(prs["reasons"].get("accuracy") or "No human pairwise preferences for this task.")
else:
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Accuracy (judge ties = misses)", f"{prs['accuracy']:.1%}"
              if not math.isnan(prs["accuracy"]) else "n/a")
    m2.metric("Judge tie rate", f"{prs['tie_rate']:.1%}")
    m3.metric("Three-way agreement", f"{prs['three_way']:.1%}"
              if not math.isnan(prs["three_way"]) else "n/a",
              help=prs["reasons"].get("three_way"))
    m4.metric("Pairs", prs["n_pairs"])
    conf = pd.DataFrame(prs["confusion"]).T.loc[["a", "b", "tie"], ["a", "b", "tie"]]
    conf.index = [f"human: {x}" for x in conf.index]
    conf.columns = [f"judge: {x}" for x in conf.columns]
    st.dataframe(conf, key="rk_confusion")
    pairs_df = pd.DataFrame([{
        "group": p["group_id"], "A": p["item_a_id"], "B": p["item_b_id"],
        "system A": p["system_a"], "system B": p["system_b"], "score A": p["score_a"],
        "score B": p["score_b"], "judge": p["judge"], "human": p["gold"],
        "agree": "✓" if p["correct"] else "✗", "source": p["source"],
        "_a": p["item_a"], "_b": p["item_b"]} for p in prs["pairs"]])
    st.caption("Select a pair to see both answers and the questions that decided it.")
    sel_pair = st.dataframe(pairs_df, hide_index=True, on_select="rerun",
                            selection_mode="single-row", key="rk_pairs",
                            column_order=[c for c in pairs_df.columns if not c.startswith("_")],
                            column_config={"score A": st.column_config.NumberColumn(
                                format="%.3f"), "score B": st.column_config.NumberColumn(
                                format="%.3f")})

# -- two answers side by side -------------------------------------------------------------------
st.subheader("Two answers side by side")
answers = query_answers(db, run_id, agg)
pick_a = pick_b = None
rows_sel = sel_pair.selection.rows if sel_pair is not None else []
if rows_sel:
    r = pairs_df.iloc[rows_sel[0]]
    pick_a, pick_b = int(r["_a"]), int(r["_b"])
    st.caption(f"Pair selected above (group {md_escape(str(r['group']))}); clear the selection "
               f"to pick a query and two systems instead.")
else:
    board_rows = sel_board.selection.rows
    focus = board.iloc[board_rows[0]]["system"] if board_rows else None
    groups = list(dict.fromkeys(answers["group"]))
    if not groups:
        st.info("This run has no scored answers.")
        st.stop()
    query_text = dict(zip(answers["group"], answers["query"]))
    q1, q2, q3 = st.columns([3, 2, 2])
    group = q1.selectbox("Query", groups, key="rk_query",
                         format_func=lambda g: f"{g} · {query_text.get(g, '')[:80]}")
    in_q = answers[answers["group"] == group]
    systems = list(in_q["system"])
    if len(systems) < 2:
        st.info("This query has fewer than two scored answers.")
        st.stop()
    ia = systems.index(focus) if focus in systems else 0
    # a new key per leaderboard selection, so selecting a system there moves System A to it
    sys_a = q2.selectbox("System A", systems, index=ia,
                         key="rk_sys_a" if focus is None else f"rk_sys_a:{focus}")
    others = [s for s in systems if s != sys_a]
    sys_b = q3.selectbox("System B", others, key="rk_sys_b")
    pick_a = int(in_q[in_q["system"] == sys_a]["item_pk"].iloc[0])
    pick_b = int(in_q[in_q["system"] == sys_b]["item_pk"].iloc[0])

detail = pair_detail(db, run_id, pick_a, pick_b, agg)
st.markdown("**Query**")
st.text(detail["query"] or "(no query text)")
ca, cb = st.columns(2)
for col, side, name in ((ca, detail["a"], "A"), (cb, detail["b"], "B")):
    score = "n/a" if side["score"] is None else f"{side['score']:.3f}"
    col.markdown(f"**{name}: {md_escape(side['system'] or side['item_id'])}** · score {score}")
    col.code(side["output"], language=None, wrap_lines=True, height=320)
if detail["human"]:
    st.caption("Human vote(s): " + ", ".join(
        f"{md_escape(h['winner'])} ({md_escape(h['source'] or h['annotator'])})"
        for h in detail["human"]))
qdf = pd.DataFrame([{
    "decided": "◆" if q["differs"] else "", "question": q["text"],
    "A": q["verdict_a"], "p(Yes) A": q["p_yes_a"], "B": q["verdict_b"], "p(Yes) B": q["p_yes_b"],
    "Δ p(Yes)": q["p_yes_delta"]} for q in detail["questions"]])
st.caption(f"{detail['n_differ']} of {len(detail['questions'])} checklist questions got "
           f"different answers (◆): those decided between A and B.")
if not qdf.empty:
    st.dataframe(qdf, hide_index=True, key="rk_questions",
                 column_order=["decided", "A", "p(Yes) A", "B", "p(Yes) B", "Δ p(Yes)",
                               "question"],
                 column_config={"p(Yes) A": st.column_config.NumberColumn(format="%.2f"),
                                "p(Yes) B": st.column_config.NumberColumn(format="%.2f"),
                                "Δ p(Yes)": st.column_config.NumberColumn(format="%+.2f"),
                                "question": st.column_config.TextColumn(width="large")})
