"""Analysis: correlation with humans, agreement across judges, stability and question
diagnostics — each chart next to the Yes/No decisions it is computed from.

Every blank statistic comes with the reason the core computed (too few documents, one
judge, a constant rater) and what to do; sections that need ≥ 2 runs say so instead of
drawing. The page only renders what ``checkeval_core.analysis.report`` returns.
"""

import json

import pandas as pd
import streamlit as st

from checkeval_core.analysis import charts
from checkeval_core.analysis.correlation import COEFFICIENTS, LEVELS
from checkeval_core.analysis.ensemble import ENSEMBLE_MODES
from checkeval_core.analysis.external import MetricFileError, import_metric, list_metrics
from checkeval_core.analysis.report import (
    LEVEL_UNITS,
    correlation_chart_note,
    correlation_table,
    diagnostics_notes,
    interval_note,
    items_behind,
    method_significance,
    page_report,
    quality_rows,
    question_diagnostics,
    scores_stamp,
    send_to_review,
    significance_rows,
    stability_note,
)
from checkeval_core.export import rows_to_csv
from checkeval_core.runs import list_runs
from checkeval_core.runs.score_read import aggregations
from checkeval_core.store import db_path, open_db
from studio_ui.frame import page_db
from studio_ui.tables import order, table_config
from studio_ui.widgets import task_picker

#: Selections that name runs or dimensions of one task: forgotten when the task changes.
TASK_STATE = ("an_runs", "an_metrics", "an_agg", "an_pick_run", "an_pick_dim", "an_last_pick",
              "an_ensemble")


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or x != x else f"{x:.{digits}f}"


st.title("Analysis")
db = page_db()
task = task_picker(db, "an_task", "No task yet: load the demo on the Home page.",
                   with_human_scores=True)
if st.session_state.get("an_task_seen") != task:
    if "an_task_seen" in st.session_state:
        for k in TASK_STATE:
            st.session_state.pop(k, None)
    st.session_state["an_task_seen"] = task
runs = [r for r in list_runs(db, task) if r["status"] == "completed"]
labels = {r["id"]: f"#{r['id']} {r['judge_spec']} · {r['method']}" for r in runs}

with st.expander("External metric (compare with ROUGE or your own metric)"):
    up = st.file_uploader("CSV with item_id and one column per dimension", type=["csv"],
                          key="an_metric_file")
    if up is not None and st.button("Import metric", key="an_metric_import"):
        try:
            res = import_metric(db, task, up.name, data=up.getvalue())
            st.success(f"Imported {res['n_scores']} scores as metric {res['metric']!r}")
        except MetricFileError as e:
            st.error(str(e))
metrics = [m["name"] for m in list_metrics(db, task)]

if not runs and not metrics:
    st.info("No completed run for this task yet: start one on the Run page.")
    st.stop()
c1, c2, c3, c4 = st.columns([3, 2, 1, 1])
chosen = c1.multiselect("Runs", list(labels), default=list(labels)[:4], format_func=labels.get,
                        key="an_runs")
chosen_metrics = c2.multiselect("External metrics", metrics, key="an_metrics")
level = c3.selectbox("Level", LEVELS, key="an_level",
                     format_func=lambda x: x.replace("_", " "))
coef = c4.selectbox("Coefficient", COEFFICIENTS, key="an_coef")
aggs = sorted({a for r in chosen for a in aggregations(db, r)})
agg = st.selectbox("Aggregation (default: each run's own)", ["(run default)", *aggs],
                   key="an_agg")
agg = None if agg == "(run default)" else agg
use_ensemble = len(chosen) >= 2 and st.checkbox(
    "Add the ensemble of the selected runs", key="an_ensemble",
    help="Judges that err differently cancel some noise; the members' agreement is shown "
         "below the chart.")
ens_mode = st.radio("Ensemble", ENSEMBLE_MODES, horizontal=True, key="an_ensemble_mode",
                    format_func={"mean": "mean of standardised scores",
                                 "stack": "learned on all runs' answers (other documents)",
                                 "stack_len": "learned, plus output length"}.get) \
    if use_ensemble else "mean"
if not chosen and not chosen_metrics:
    st.info("Select at least one run (or an external metric) above.")
    st.stop()


@st.cache_data(ttl=60, show_spinner="Computing correlations and bootstrap intervals…")
def compute(db_file: str, task: str, run_ids: tuple, metric_names: tuple,
            aggregation: str | None, stamp: str, ensemble: bool = False,
            mode: str = "mean") -> dict:
    return page_report(open_db(db_file), task, list(run_ids), metric_names, aggregation,
                       ensemble, mode, n_boot=100)


report = compute(db_path(db), task, tuple(chosen), tuple(chosen_metrics), agg, scores_stamp(db),
                 use_ensemble, ens_mode)
per_run = report["runs"]
dims = sorted({d for r in per_run.values() for d in r["dimensions"]})

st.subheader("Correlation with human scores")
table = correlation_table(per_run, level, coef)
unit = LEVEL_UNITS[level]
event = None
note = correlation_chart_note(per_run, level, coef)
if note:
    st.info(note)
else:
    ci_note = interval_note(per_run, level, coef)
    if ci_note:  # before the chart: a bar without an interval is read with this in mind
        st.warning(ci_note)
    event = st.plotly_chart(charts.correlation_bars(per_run, level, coef), key="an_bars",
                            on_select="rerun", selection_mode="points")
st.dataframe(pd.DataFrame(table), hide_index=True, width="stretch",
             column_config=table_config(
                 keys={"dimension": ""},
                 scores={coef: f"{coef} correlation with the human scores "
                               f"({level.replace('_', ' ')})"},
                 counts={f"n {unit}": f"Sample size: the number of {unit} the value is "
                                      "computed over"},
                 long={"run": "The run (judge · method), ensemble or external metric",
                       "95% CI": "Bootstrap interval (documents resampled), or why none",
                       "note": "Why a value is blank, or how the average is made"},
                 widths={"run": 200, "95% CI": 270}),
             column_order=order(["run", "dimension", coef, "95% CI", f"n {unit}", "note"]))
d1, d2, d3, _ = st.columns([1, 1, 1, 3])
d1.download_button("CSV", rows_to_csv(table), f"{task}-correlations.csv", key="an_dl_csv")
d2.download_button("JSON", json.dumps(report, default=str), f"{task}-analysis.json",
                   key="an_dl_json")
d3.download_button("Figure (HTML)", charts.correlation_bars(per_run, level, coef).to_html(),
                   f"{task}-correlations.html", key="an_dl_html")

for k, r in per_run.items():
    if k.startswith("ensemble:"):
        st.caption("Ensemble members' agreement (Spearman between their scores): " + "; ".join(
            f"{dim}: " + ", ".join(f"#{p.replace('-', ' vs #')} {v:.2f}" for p, v in
                                   pairs.items())
            for dim, pairs in r["member_agreement"].items()))

# Click-through: a bar -> the items behind it (the selectors follow the click) -> traces
pts = (event or {}).get("selection", {}).get("points", []) if event else []
picked = pts[0].get("customdata") if pts else None
run_keys = [k for k in per_run if k.isdigit()]
if picked and list(picked[:2]) != st.session_state.get("an_last_pick"):
    st.session_state["an_last_pick"] = list(picked[:2])
    if str(picked[0]) in run_keys:
        st.session_state["an_pick_run"] = str(picked[0])
    if picked[1] in dims:
        st.session_state["an_pick_dim"] = picked[1]
if st.session_state.get("an_pick_run") not in run_keys:
    st.session_state.pop("an_pick_run", None)
if st.session_state.get("an_pick_dim") not in dims:
    st.session_state.pop("an_pick_dim", None)
if run_keys and dims:
    p1, p2 = st.columns(2)
    pick_run = p1.selectbox("Items behind a bar — run", run_keys, key="an_pick_run",
                            format_func=lambda k: per_run[k]["label"])
    pick_dim = p2.selectbox("dimension", dims, key="an_pick_dim")
    part = items_behind(db, int(pick_run), pick_dim, agg)
    st.markdown(f"**{per_run[pick_run]['label']} · {pick_dim}: {len(part)} items** "
                "(largest rank disagreement with humans first)")
    st.dataframe(part, hide_index=True, width="stretch",
                 column_order=["item_id", "group", "system", "metric", "human", "gap"],
                 column_config=table_config(
                     keys={"item_id": "", "group": "Source document / context",
                           "system": ""},
                     scores={"metric": "The run's score of the item", "human": "Human score",
                             "gap": "|percentile rank of judge − of human|"},
                     labels={"item_id": "item", "metric": "judge score",
                             "human": "human score", "gap": "rank gap"}))
    if len(part):
        st.page_link("app_pages/traces.py", label=f"Open the Yes/No trace of {part.iloc[0]['item_id']}",
                     query_params={"runs": pick_run, "item": str(int(part.iloc[0]["item_pk"])),
                                   "dim": pick_dim})

st.subheader("Agreement across judges")
ag = report["agreement"]
why = ag.get("reasons") or {}
if len(chosen) < 2:
    st.info("Agreement across judges needs ≥ 2 runs (judges) of this task: select another run "
            "above.")
else:
    a1, a2, a3 = st.columns(3)
    for col, key, name in ((a1, "krippendorff_alpha", "Krippendorff α (Yes/No)"),
                           (a2, "fleiss_kappa", "Fleiss κ (Yes/No)"),
                           (a3, "krippendorff_alpha_scores", "Krippendorff α (scores, interval)")):
        col.metric(name, _fmt(ag[key]), help=why.get(key) or None)
        if why.get(key):
            col.caption(why[key])
    st.caption(f"{ag['n_units']} (item, question) units answered Yes/No by at least two runs; "
               f"all runs agree on {ag.get('n_agree', 0)} of them.")
    if ag["n_units"]:
        st.plotly_chart(charts.agreement_heatmap(ag["pairwise_cohen"],
                                                 {str(r): labels[r] for r in chosen}),
                        key="an_heat")
    pairs = [{"pair": f"{labels[int(k.split('-')[0])]} vs {labels[int(k.split('-')[1])]}",
              "Cohen κ": v["kappa"], "raw agreement": f"{v['agree']}/{v['n']}",
              "note": v["reason"] or ""} for k, v in (ag.get("pairwise") or {}).items()]
    if pairs:
        st.dataframe(pd.DataFrame(pairs), hide_index=True, width="stretch",
                     column_config=table_config(
                         scores={"Cohen κ": "Chance-corrected agreement of the two runs' Yes/No"},
                         decisions={"raw agreement": "Units where both gave the same answer"},
                         long={"note": "Why κ is blank or 0 by construction"}),
                     column_order=["pair", "Cohen κ", "raw agreement", "note"])

from checkeval_core.annotation.agreement_report import agreement_report  # noqa: E402

human_ag = agreement_report(db, task, list(chosen))
if human_ag["annotators"]:
    st.subheader("Humans: among annotators and against each judge")
    hh = human_ag["human_human"]
    st.write(f"{len(human_ag['annotators'])} annotators, {hh['n_units']} (item, question) units "
             f"answered by two or more: Krippendorff α = {_fmt(hh['krippendorff_alpha'])}, "
             f"Fleiss κ = {_fmt(hh['fleiss_kappa'])}")
    if hh["n_units"] == 0:
        st.caption("α and κ among annotators need ≥ 2 annotators answering the same (item, "
                   "question): assign overlapping items on the Annotation jobs page.")
    st.dataframe(pd.DataFrame([{"judge": k, **v} for k, v in human_ag["human_judge"].items()]),
                 hide_index=True,
                 column_config=table_config(labels={"cohen_kappa": "Cohen κ vs humans",
                                                    "krippendorff_alpha": "Krippendorff α",
                                                    "n_units": "units"}))
else:
    st.caption("Humans vs judges: no Yes/No annotations for this task yet — annotate items on "
               "the Annotate page to compare the judges with people.")

st.subheader("Stability across judges")
note = stability_note(per_run, level, coef)
if note:
    st.info(note)
else:
    st.plotly_chart(charts.stability_violin(per_run, level, coef), key="an_violin")
    st.dataframe(pd.DataFrame([{"method": m, **{k: v for k, v in s.items() if k != "values"}}
                               for m, s in report["stability"].items()]), hide_index=True,
                 column_config=table_config(
                     scores={"mean": "Mean of the runs' average correlation",
                             "variance": "Variance across judges (lower = more stable)"},
                     labels={"n_runs": "runs", "reason": "note"}))

sig = method_significance(per_run, level, coef)
if sig:
    st.subheader("Significance: method vs method over judges (Wilcoxon, BH-corrected)")
    st.dataframe(pd.DataFrame(significance_rows(sig)), hide_index=True, width="stretch",
                 column_config=table_config(
                     decisions={"judges": "Judges run with both methods (the pairs)"},
                     long={"result": "Wilcoxon W, p and BH-corrected p — or why no test"}))
    st.caption("Pairs are the same judge under two methods; the note says why a test is blank.")

st.subheader("High- vs low-quality items (human ≥ 3 vs < 3)")
split = quality_rows(per_run)
if not split:
    st.caption("No item of the selected runs has a human score: nothing to split.")
else:
    st.dataframe(pd.DataFrame(split), hide_index=True, width="stretch",
                 column_config=table_config(
                     keys={"run": "", "dimension": "", "subset": ""},
                     counts={"items": "Items in the subset"},
                     scores={"mean judge score": "Mean judge score",
                             "spearman": "Spearman with the human score within the subset"},
                     long={"note": "Why the correlation is blank"}))

if chosen:
    st.subheader("Question diagnostics")
    diag = question_diagnostics(db, list(chosen))
    st.plotly_chart(charts.diagnostics_scatter(diag), key="an_diag")
    for line in diagnostics_notes(diag, len(chosen)):
        st.caption(line)
    ddf = pd.DataFrame([{**d, "flags": ", ".join(d["flags"])} for d in diag])
    only_flagged = st.checkbox("Only flagged questions", key="an_flagged")
    if only_flagged and len(ddf):
        ddf = ddf[ddf["flags"] != ""]
    st.dataframe(ddf, hide_index=True, width="stretch",
                 column_order=order(["question_id", "dimension", "flags", "yes_rate",
                                     "invalid_rate", "discrimination", "judge_agreement",
                                     "human_agreement", "n"], ["question"]),
                 column_config=table_config(
                     keys={"question_id": "", "dimension": ""},
                     counts={"n": "Answers to the question over the selected runs"},
                     decisions={"flags": "Why the question may need review"},
                     scores={"yes_rate": "Share of valid answers that are Yes",
                             "invalid_rate": "Share of answers with no readable verdict",
                             "discrimination": "Spearman of the answers with the human score",
                             "judge_agreement": "Share of items where all runs agree",
                             "human_agreement": "Share agreeing with the annotators' majority"},
                     long={"question": "The checklist question"},
                     labels={"question_id": "id", "yes_rate": "yes-rate",
                             "invalid_rate": "invalid", "judge_agreement": "judges agree",
                             "human_agreement": "humans agree", "n": "answers"}))
    flagged = [d["question_id"] for d in diag if d["flags"]]
    if st.button(f"Send {len(flagged)} flagged questions to the review queue",
                 key="an_send", disabled=not flagged):
        n = send_to_review(db, flagged, "flagged by question diagnostics")
        st.success(f"{n} questions are back in the review queue (Checklist review page)")
