"""Judges: add a judge by spec, see its capabilities, run a one-question test."""

import pandas as pd
import streamlit as st

from checkeval_core.judges.probe import TEST_QUESTION, judge_test
from checkeval_core.judges.registry import FORMS, JudgeSpecError, get_judge, parse_spec
from checkeval_core.judges.saved import add_judge, delete_judge, list_judges
from checkeval_core.store import open_db

st.title("Judges")
st.write("A judge answers Yes/No questions (with p(Yes) when the backend gives "
         "log-probabilities) and writes free text for checklist generation. Spec forms: "
         f"`{FORMS}`.")
st.caption("The default **embedded** judge runs Qwen2.5-Coder-0.5B on the CPU: offline, no key, "
           "slow and weak (it leans towards Yes). Point a spec at a stronger OpenAI-compatible "
           "server for real evaluations.")
db = open_db()

judges = list_judges(db)
st.dataframe(pd.DataFrame([{"id": j["id"], "spec": j["spec"], "label": j["label"],
                            "key from env": j["key_env"]} for j in judges]),
             hide_index=True, width="stretch")

with st.expander("Add a judge", expanded=False):
    backend = st.selectbox("Backend", ["openai-compat", "openai", "embedded:quality", "vllm",
                                       "fake"], key="add_backend")
    base_url, model, key_env = "", "", ""
    if backend == "openai-compat":
        base_url = st.text_input("Base URL", "http://localhost:8000/v1", key="add_url")
    if backend in ("openai-compat", "openai", "vllm"):
        model = st.text_input("Model", key="add_model")
    if backend in ("openai-compat", "openai"):
        key_env = st.text_input(
            "Key source: name of an environment variable (the key itself is never stored)",
            "OPENAI_API_KEY" if backend == "openai" else "CHECKEVAL_OPENAI_COMPAT_KEY",
            key="add_key_env")
    label = st.text_input("Label (optional)", key="add_label")
    spec = {"openai-compat": f"openai-compat:{base_url}#{model}", "openai": f"openai:{model}",
            "vllm": f"vllm:{model}"}.get(backend, backend)
    st.code(spec, language=None)
    if st.button("Save judge", key="add_save"):
        try:
            add_judge(db, spec, label=label, key_env=key_env)
        except (JudgeSpecError, ValueError) as e:
            st.error(str(e))
        else:
            st.success(f"Saved {spec}")
            st.rerun()

st.subheader("Test a judge")
specs = [j["spec"] for j in judges]
chosen = st.selectbox("Judge", specs, key="test_spec")
row = next(j for j in judges if j["spec"] == chosen)
caps_col, test_col = st.columns(2)
with caps_col:
    st.markdown("**Backend**")
    st.text(f"{parse_spec(chosen).backend} · model {parse_spec(chosen).model or '(bundled)'}")
question = test_col.text_input("Question", TEST_QUESTION, key="test_question")
if test_col.button("Ask one question", type="primary", key="test_run"):
    try:
        # the key: the saved judge's variable, then the defaults (environment, then st.secrets)
        with st.spinner("Asking… (the embedded model loads in a few seconds the first time)"):
            res = judge_test(get_judge(chosen, db=db, cache=False,
                                       key_env=row["key_env"] or None, secrets=st.secrets),
                             question=question)
    except (JudgeSpecError, ValueError, ImportError) as e:
        st.error(str(e))
    else:
        if res["error"]:
            st.error(f"The judge failed: {res['error']}")
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Verdict", res["verdict"])
        c2.metric("p(Yes)", "n/a" if res["p_yes"] is None else f"{res['p_yes']:.3f}")
        c3.metric("Latency", f"{res['latency_ms']:.0f} ms")
        c4.metric("Tokens in/out", f"{res['tokens_in']}/{res['tokens_out']}")
        st.markdown("**Capabilities**")
        st.json(res["capabilities"])
        st.caption(f"Scoring mode: {res['mode']}")

with st.expander("Remove a saved judge"):
    removable = [j for j in judges if j["spec"] != "embedded"]
    if removable:
        rid = st.selectbox("Judge", [j["id"] for j in removable],
                           format_func=lambda i: next(j["spec"] for j in removable
                                                      if j["id"] == i), key="rm_id")
        if st.button("Remove", key="rm_btn"):
            delete_judge(db, rid)
            st.rerun()
    else:
        st.caption("Only the default judge is configured.")
