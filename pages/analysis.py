"""Analysis: correlation with humans, agreement across judges, stability and question
diagnostics — each chart next to the Yes/No decisions it is computed from."""

import json

import pandas as pd
import streamlit as st

from checkeval_core.analysis import charts
from checkeval_core.analysis.correlation import COEFFICIENTS, LEVELS
from checkeval_core.analysis.ensemble import ENSEMBLE_MODES, analyze_ensemble
from checkeval_core.analysis.external import MetricFileError, import_metric, list_metrics
from checkeval_core.analysis.report import (
    analyze_metric,
    analyze_runs,
    question_diagnostics,
    run_frame,
    send_to_review,
)
from checkeval_core.export import rows_to_csv
from checkeval_core.runs import list_runs
from checkeval_core.runs.scores import aggregations
from checkeval_core.store import open_db
from studio_ui.widgets import task_picker

st.title("Analysis")
db = open_db()
task = task_picker(db, "an_task", "No task yet: load the demo on the Home page.")
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
    st.stop()


@st.cache_data(ttl=60, show_spinner="Computing correlations and bootstrap intervals…")
def compute(db_file: str, run_ids: tuple, metric_names: tuple, aggregation: str | None,
            stamp: str, ensemble: bool = False, mode: str = "mean") -> dict:
    d = open_db(db_file)
    out = analyze_runs(d, list(run_ids), aggregation, n_boot=100) if run_ids else \
        {"runs": {}, "agreement": {}, "stability": {}}
    if ensemble:
        ens = analyze_ensemble(d, list(run_ids), aggregation, n_boot=100, mode=mode)
        out["runs"]["ensemble:" + "+".join(map(str, run_ids))] = {
            "judge": "ensemble", "method": "ensemble", "aggregation": aggregation or "each run's",
            **ens}
    for m in metric_names:
        out["runs"][f"metric:{m}"] = {"judge": m, "method": "external", "aggregation": m,
                                      **analyze_metric(d, task, m, n_boot=100)}
    return out


from checkeval_core.store import db_path  # noqa: E402

stamp = str(db.execute("SELECT MAX(id) FROM score").fetchone()[0])
report = compute(db_path(db), tuple(chosen), tuple(chosen_metrics), agg, stamp, use_ensemble,
                 ens_mode)
per_run = report["runs"]
for k, r in per_run.items():
    r["label"] = labels.get(int(k), k) if k.isdigit() else \
        (f"ensemble of {', '.join('#' + m for m in k[9:].split('+'))}"
         if k.startswith("ensemble:") else k)

st.subheader("Correlation with human scores")
table = []
for r in per_run.values():
    for dim, d in r["dimensions"].items():
        e = d[level]
        table.append({"run": r["label"], "dimension": dim, coef: e[coef],
                      "CI low": e["ci"][coef][0], "CI high": e["ci"][coef][1], "n": e["n"],
                      "skipped groups": e.get("skipped", 0)})
    table.append({"run": r["label"], "dimension": "AVERAGE", coef: r["average"][level][coef],
                  "n": r["average"][level]["n"]})
tdf = pd.DataFrame(table)
left, right = st.columns([3, 2])
with left:
    event = st.plotly_chart(charts.correlation_bars(per_run, level, coef), key="an_bars",
                            on_select="rerun", selection_mode="points")
with right:
    st.dataframe(tdf, hide_index=True, width="stretch")
    d1, d2, d3 = st.columns(3)
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

# Click-through: a bar -> the items behind it and their judge vs human scores -> traces
picked = None
pts = (event or {}).get("selection", {}).get("points", []) if event else []
if pts:
    picked = pts[0].get("customdata")
pick_run = st.selectbox("Items behind a bar — run", [k for k in per_run if k.isdigit()]
                        or ["-"],
                        index=0, key="an_pick_run", format_func=lambda k: per_run.get(k, {}).get(
                            "label", k))
dims = sorted({d for r in per_run.values() for d in r["dimensions"]})
pick_dim = st.selectbox("dimension", dims or ["-"], key="an_pick_dim")
if picked:
    pick_run, pick_dim = str(picked[0]), picked[1]
if pick_run in per_run and pick_run.isdigit() and pick_dim in dims:
    df, _ = run_frame(db, int(pick_run), agg)
    part = df[df["dimension"] == pick_dim].dropna(subset=["human"]).copy()
    part["gap"] = (part["metric"].rank(pct=True) - part["human"].rank(pct=True)).abs()
    part = part.sort_values("gap", ascending=False)
    st.markdown(f"**{per_run[pick_run]['label']} · {pick_dim}: {len(part)} items** "
                "(largest rank disagreement with humans first)")
    st.dataframe(part[["item_id", "group", "system", "metric", "human", "gap"]],
                 hide_index=True, width="stretch")
    if len(part):
        first = int(part.iloc[0]["item_pk"])
        st.page_link("pages/traces.py", label=f"Open the Yes/No trace of {part.iloc[0]['item_id']}",
                     query_params={"runs": pick_run, "item": str(first)})

if len(chosen) >= 2:
    st.subheader("Agreement across judges")
    ag = report["agreement"]
    a1, a2, a3 = st.columns(3)
    a1.metric("Krippendorff α (Yes/No)", f"{ag['krippendorff_alpha']:.3f}")
    a2.metric("Fleiss κ (Yes/No)", f"{ag['fleiss_kappa']:.3f}")
    a3.metric("Krippendorff α (scores, interval)", f"{ag['krippendorff_alpha_scores']:.3f}")
    st.plotly_chart(charts.agreement_heatmap(ag["pairwise_cohen"],
                                             {str(r): labels[r] for r in chosen}),
                    key="an_heat")
    st.caption(f"{ag['n_units']} (item, question) units answered Yes/No by at least two runs.")

from checkeval_core.annotation.agreement_report import agreement_report  # noqa: E402

human_ag = agreement_report(db, task, list(chosen))
if human_ag["annotators"]:
    st.subheader("Humans: among annotators and against each judge")
    hh = human_ag["human_human"]
    st.write(f"{len(human_ag['annotators'])} annotators, {hh['n_units']} (item, question) units "
             f"answered by two or more: Krippendorff α = {hh['krippendorff_alpha']:.3f}, "
             f"Fleiss κ = {hh['fleiss_kappa']:.3f}")
    st.dataframe(pd.DataFrame([{"judge": k, **v} for k, v in human_ag["human_judge"].items()]),
                 hide_index=True)

st.subheader("Stability across judges")
st.plotly_chart(charts.stability_violin(per_run, level, coef), key="an_violin")
st.dataframe(pd.DataFrame([{"method": m, **{k: v for k, v in s.items() if k != "values"}}
                           for m, s in report["stability"].items()]), hide_index=True)

methods = sorted({r["method"] for r in per_run.values() if r["method"] != "external"})
if len(methods) >= 2:
    from itertools import combinations

    from checkeval_core.analysis.report import wilcoxon_bh

    st.subheader("Significance: method vs method over judges (Wilcoxon, BH-corrected)")
    by = {(r["method"], r["judge"]): r for r in per_run.values()}
    pairs = {}
    for a, b in combinations(methods, 2):
        judges = sorted({j for m, j in by if m == a} & {j for m, j in by if m == b})
        for dim in dims:
            va = [by[(a, j)]["dimensions"].get(dim, {}).get(level, {}).get(coef) for j in judges]
            vb = [by[(b, j)]["dimensions"].get(dim, {}).get(level, {}).get(coef) for j in judges]
            ok = [(x, y) for x, y in zip(va, vb) if x is not None and y is not None]
            pairs[f"{a} vs {b} · {dim}"] = ([x for x, _ in ok], [y for _, y in ok])
    sig = wilcoxon_bh(pairs)
    st.dataframe(pd.DataFrame([{"comparison": k, **v} for k, v in sig.items()]),
                 hide_index=True, width="stretch")
    st.caption("Pairs are the same judge under two methods; with fewer than two common judges "
               "the test is undefined (NaN).")

st.subheader("High- vs low-quality items (human ≥ 3 vs < 3)")
split = [{"run": r["label"], "dimension": dim, "subset": name, **vals}
         for r in per_run.values() for dim, d in r["dimensions"].items()
         for name, vals in d["quality_split"].items()]
st.dataframe(pd.DataFrame(split), hide_index=True, width="stretch")

if chosen:
    st.subheader("Question diagnostics")
    diag = question_diagnostics(db, list(chosen))
    st.plotly_chart(charts.diagnostics_scatter(diag), key="an_diag")
    ddf = pd.DataFrame([{**d, "flags": ", ".join(d["flags"])} for d in diag])
    only_flagged = st.checkbox("Only flagged questions", key="an_flagged")
    if only_flagged and len(ddf):
        ddf = ddf[ddf["flags"] != ""]
    st.dataframe(ddf, hide_index=True, width="stretch")
    flagged = [d["question_id"] for d in diag if d["flags"]]
    if st.button(f"Send {len(flagged)} flagged questions to the review queue",
                 key="an_send", disabled=not flagged):
        n = send_to_review(db, flagged, "flagged by question diagnostics")
        st.success(f"{n} questions are back in the review queue (Checklist review page)")
