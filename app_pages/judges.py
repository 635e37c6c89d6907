"""Judges: save a judge from its backend's declared fields, list the saved ones, ask one
question. Backends, their fields and key variables come from ``checkeval_core.judges.spec``."""

import pandas as pd
import streamlit as st

from checkeval_core.judges.keys import key_sources_for
from checkeval_core.judges.saved import DEFAULT_SPEC, add_judge, delete_judge, list_judges
from checkeval_core.judges.spec import BACKENDS, JudgeSpecError, parse_spec, spec_forms
from checkeval_core.runs.judge_check import TEST_QUESTION, ask_judge
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.tables import table_config

st.title("Judges")
st.write("A judge answers Yes/No questions (with p(Yes) when the backend gives "
         "log-probabilities) and writes free text for checklist generation. Spec forms: "
         f"`{spec_forms()}`.")
st.caption("The default **embedded** judge runs Qwen2.5-Coder-0.5B on the CPU: offline, no key, "
           "slow and weak (it leans towards Yes). Point a spec at a stronger OpenAI-compatible "
           "server for real evaluations.")
db = page_db()

# a confirmation survives the rerun that shows the new judge in the table
if saved := st.session_state.pop("judges_saved", None):
    st.success(saved)

judges = list_judges(db)
longest = max(len(j["spec"]) for j in judges)
st.dataframe(
    pd.DataFrame([{"id": j["id"], "spec": j["spec"], "label": j["label"],
                   "key from env": j["key_env"]} for j in judges]),
    hide_index=True, width="stretch",
    column_config=table_config(
        keys={"id": ""},
        long={"spec": "The judge's spec, as the CLI's --judge takes it", "label": "",
              "key from env": "The environment variable the key is read from"},
        # wide enough for the longest spec (about 8 px a character), so none is cut
        widths={"spec": max(240, 8 * longest + 24), "label": "medium",
                "key from env": "medium"}))

with st.expander("Add a judge", expanded=False):
    name = st.selectbox("Backend", list(BACKENDS), key="add_backend",
                        format_func=lambda b: BACKENDS[b].title or b)
    backend = BACKENDS[name]
    values = {}
    for f in backend.fields:
        if f.choices:
            values[f.name] = st.selectbox(f.label, f.choices, key=f"add_{name}_{f.name}",
                                          format_func=lambda c: c or "default", help=f.help)
        else:
            values[f.name] = st.text_input(f.label, f.default, key=f"add_{f.name}",
                                           help=f.help or None)
    label = st.text_input("Label (optional)", key="add_label")
    spec = backend.spec(values)
    st.code(spec, language=None)
    key_env = ""
    if backend.key_envs:
        # only variables the operator declared and approved for this address are offered
        choice = key_sources_for(spec, secrets=st.secrets)
        key_env = st.selectbox(
            "Key source (the key itself is never stored)", [""] + choice["approved"],
            key="add_key_env",
            format_func=lambda v: v or "default: " + ", then ".join(backend.key_envs)
            + " where approved for this address, else no key")
        st.caption(choice["note"])
    if st.button("Save judge", key="add_save"):
        try:
            jid = add_judge(db, spec, label=label, key_env=key_env, secrets=st.secrets)
        except (JudgeSpecError, ValueError) as e:
            st.error(md_escape(str(e)))
        else:
            st.session_state["judges_saved"] = (
                f"Saved judge {jid}: {parse_spec(spec).spec}"
                + (f" (key from ${key_env})" if key_env else ""))
            st.rerun()

st.subheader("Test a judge")
specs = list(dict.fromkeys(j["spec"] for j in judges))
chosen = st.selectbox("Judge", specs, key="test_spec")
row = next(j for j in judges if j["spec"] == chosen)
parsed = parse_spec(chosen)
caps_col, test_col = st.columns(2)
with caps_col:
    st.markdown("**Backend**")
    st.text(f"{BACKENDS[parsed.backend].title or parsed.backend}\n"
            f"model: {parsed.model or '(bundled)'}")
question = test_col.text_input("Question", TEST_QUESTION, key="test_question")
if test_col.button("Ask one question", type="primary", key="test_run"):
    st.session_state.pop("judge_answer", None)  # an older answer is never shown as this one
    try:
        # the key: the saved judge's variable, then the defaults (environment, then st.secrets)
        with st.spinner("Asking… (the embedded model loads in a few seconds the first time)"):
            answer = ask_judge(db, chosen, key_env=row["key_env"] or None,
                               secrets=st.secrets, question=question)
    except (JudgeSpecError, ValueError, ImportError) as e:
        answer = {"error": str(e), "setup": True}
    st.session_state["judge_answer"] = {**answer, "spec": chosen, "question": question}

answer = st.session_state.get("judge_answer")
if answer and (answer["spec"], answer["question"]) == (chosen, question):
    if answer["error"]:
        # a failed request has no verdict, latency or capability worth showing
        st.error(md_escape(answer["error"] if answer.get("setup") else  # server text
                           f"The judge failed: {answer['error']}"))
    else:
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Verdict", answer["verdict"])
        c2.metric("p(Yes)", "n/a (text mode)" if answer["p_yes"] is None
                  else f"{answer['p_yes']:.3f}")
        c3.metric("Latency", f"{answer['latency_ms']:.0f} ms")
        c4.metric("Tokens in/out", f"{answer['tokens_in']}/{answer['tokens_out']}")
        st.caption(f"Scoring mode of this answer: {answer['mode']}")
        with st.expander("What the backend declares it can do"):
            st.json(answer["capabilities"])

with st.expander("Remove a saved judge"):
    removable = [j for j in judges if j["spec"] != DEFAULT_SPEC]
    if removable:
        rid = st.selectbox("Judge", [j["id"] for j in removable],
                           format_func=lambda i: next(j["spec"] for j in removable
                                                      if j["id"] == i), key="rm_id")
        # asks first; the judge's runs and cached answers stay
        sure = st.checkbox("Yes, remove this saved judge (its runs are kept)", key="rm_sure")
        if st.button("Remove", key="rm_btn", disabled=not sure):
            delete_judge(db, rid)
            st.session_state["judges_saved"] = \
                f"Removed judge {rid}: {next(j['spec'] for j in removable if j['id'] == rid)}"
            st.rerun()
    else:
        st.caption("Only the default judge is configured.")
