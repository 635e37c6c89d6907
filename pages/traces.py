"""Traces: one item's texts and every question with each run's Yes/No answer and p(Yes),
grouped by dimension and sub-dimension, with the scores; SEAL units with their verdicts."""

import pandas as pd
import streamlit as st

from checkeval_core.runs import list_runs
from checkeval_core.runs.traces import disagreements, item_trace, items_by_gap
from checkeval_core.store import open_db
from studio_ui.widgets import task_picker

st.title("Traces")
db = open_db()
qp = st.query_params
task = task_picker(db, "tr_task", "No task yet: load the demo on the Home page.")
runs = [r for r in list_runs(db, task) if r["status"] in ("completed", "running", "cancelled",
                                                           "failed")]
if not runs:
    st.info("No run for this task yet: start one on the Run page.")
    st.stop()
labels = {r["id"]: f"#{r['id']} {r['judge_spec']} · {r['method']} · {r['status']}" for r in runs}
wanted = [int(x) for x in qp.get("runs", "").split(",") if x.strip().isdigit()]
default = [r for r in wanted if r in labels] or [runs[0]["id"]]
chosen = st.multiselect("Runs (side by side)", list(labels), default=default,
                        format_func=labels.get, key="tr_runs")
if not chosen:
    st.stop()

dims = [r[0] for r in db.execute("SELECT DISTINCT dimension FROM score WHERE run_id = ? "
                                 "ORDER BY dimension", [chosen[0]])]
gap_dim = st.selectbox("Sort items by |judge − human| on", dims or ["(no scores yet)"],
                       key="tr_dim")
listing = items_by_gap(db, chosen[0], gap_dim) if dims else []
if not listing:
    ids = {r[0] for r in db.execute("SELECT DISTINCT item_id FROM answer WHERE run_id = ?",
                                    [chosen[0]])}
    listing = [{"item_pk": i, "item_id": db.execute("SELECT item_id FROM item WHERE id = ?",
                                                    [i]).fetchone()[0], "gap": None}
               for i in sorted(ids)]
if not listing:
    st.info("This run has no answers yet.")
    st.stop()
with st.expander(f"Items ({len(listing)}), largest disagreement with humans first"):
    st.dataframe(pd.DataFrame(listing), hide_index=True, width="stretch")
pks = [r["item_pk"] for r in listing]
want_item = qp.get("item")
start = pks.index(int(want_item)) if want_item and want_item.isdigit() and \
    int(want_item) in pks else 0
pk = st.selectbox("Item", pks, index=start, format_func=lambda k: next(
    f"{r['item_id']}" + (f" · gap {r['gap']:.2f}" if r.get("gap") is not None else "")
    for r in listing if r["item_pk"] == k), key="tr_item")

trace = item_trace(db, pk, chosen)
item = trace["item"]
left, right = st.columns([2, 3])
with left:
    for field in ("source", "context", "fact", "reference", "output"):
        if item[field]:
            st.markdown(f"**{field}**")
            st.text(item[field])
    if trace["human"]:
        st.markdown("**Human scores**")
        st.dataframe(pd.DataFrame([trace["human"]]), hide_index=True)
with right:
    if trace["scores"]:
        sc = pd.DataFrame(trace["scores"]).pivot_table(index=["dimension", "aggregation"],
                                                       columns="run_id", values="value")
        sc.columns = [labels[c] for c in sc.columns]
        st.markdown("**Scores**")
        st.dataframe(sc, width="stretch")
    only = st.radio("Show", ["all questions", "judges disagree", "disagree with humans or "
                             "judges"], horizontal=True, key="tr_filter")
    dis = disagreements(trace["answers"], trace["annotations"] if only.startswith("disagree w")
                        else None)
    table: dict[tuple, dict] = {}
    for a in trace["answers"]:
        key = (a["dimension"], a["sub_dimension"] or a["unit"].split("|")[1] if "|" in a["unit"]
               else a["sub_dimension"] or "", a["question"] or a["unit"], a["question_id"],
               a["unit"])
        row = table.setdefault(key, {"dimension": a["dimension"], "sub-dimension": key[1],
                                     "question / unit": key[2]})
        mark = {"yes": "✅ Yes", "no": "❌ No", "invalid": "⚠️ invalid"}[a["verdict"]]
        if a["value"] is not None:
            mark = f"{a['value']:g}"
        p = f" ({a['p_yes']:.2f})" if a["p_yes"] is not None else ""
        row[labels[a["run_id"]]] = mark + p
    rows = [v for k, v in table.items() if only == "all questions" or (k[3], k[4]) in dis]
    st.markdown(f"**Yes/No decisions** ({len(rows)} shown)")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    if trace["units"]:
        st.markdown("**SEAL units**")
        verdicts = {}
        for a in trace["answers"]:
            if "|" in a["unit"]:
                dim, sub, idx = a["unit"].split("|", 2)
                verdicts.setdefault((a["run_id"], dim, idx), []).append(a["verdict"])
        urows = []
        for u in trace["units"]:
            v = verdicts.get((u["run_id"], u["dimension"], u["unit"]), [])
            badge = "🟩" * v.count("yes") + "🟥" * v.count("no") + "🟨" * v.count("invalid")
            urows.append({"run": labels[u["run_id"]], "dimension": u["dimension"],
                          "kind": u["kind"], "unit": u["text"], "verdicts (sub-dimensions)": badge})
        st.dataframe(pd.DataFrame(urows), hide_index=True, width="stretch")
