"""Pairwise votes: two systems' answers to one query side by side; the annotator picks A, B or
a tie (keys A, B, T). Systems stay hidden until the vote is stored; every vote is a human
pairwise preference that the Rankings analysis reads beside imported ones."""

import streamlit as st

from checkeval_core.annotation import pairwise as PW
from checkeval_core.textsafe import md_escape
from studio_ui.frame import page_db
from studio_ui.widgets import settled_user

st.title("Pairwise votes")
st.caption("Two answers to the same query, side by side: which is better? Which system wrote "
           "which answer is shown only after your vote. Votes feed the human Elo and the "
           "judges' pair accuracy on the Rankings page.")
db = page_db()
c0, c1, c2 = st.columns([2, 3, 1])
with c0:
    who, why_not = settled_user("pw_name", "annotator")  # no name field left to type A/B/T in
if not who:
    st.info(why_not or "Enter your name to start voting.")
    st.stop()
tasks = PW.pairwise_tasks(db)
if not tasks:
    st.info("No task has two systems' answers to the same query (items with the same "
            "group_id and different system_id). Import one on the Data page.")
    st.stop()
task = c1.selectbox("Task", tasks, key="pw_task")
n_pairs = c2.number_input("Pairs to vote on", 1, 1000, PW.DEFAULT_PAIRS, key="pw_n",
                          help="Your pairs are spread evenly over systems and queries; the "
                               "order is fixed for you, so raising this adds pairs at the end.")
view = PW.pair_queue(db, task, who, n_pairs=int(n_pairs))
st.progress(view["n_voted"] / view["n_pairs"],
            text=f"{md_escape(who)}: {view['n_voted']} of {view['n_pairs']} pairs voted · "
                 f"{view['n_queries']} queries, {view['n_systems']} systems, "
                 f"{view['n_candidates']} possible pairs")
if view["n_votes_total"]:
    ch = view["choices"]
    st.caption(f"Your votes on this task ({view['n_votes_total']}): A {ch['A']}, "
               f"B {ch['B']}, tie {ch['tie']} (A and B are placed at random: a strong lean to one side "
               "over many votes is a position bias).")


def _vote(task_name: str, annotator: str, a: int, b: int, choice: str) -> None:
    try:
        st.session_state["pw_last"] = PW.record_vote(page_db(), task_name, annotator, a, b,
                                                     choice) | {"task": task_name,
                                                                "who": annotator}
    except (ValueError, LookupError) as e:
        st.session_state["pw_error"] = str(e)


if err := st.session_state.pop("pw_error", None):
    st.error(md_escape(err))
last = st.session_state.get("pw_last")
if last and last["task"] == task and last["who"] == who:  # never the previous person's vote
    pref = "a tie" if last["preferred"] == "tie" else f"**{md_escape(last['preferred'])}**"
    st.success(f"Stored your vote on query {md_escape(last['group_id'])}: "
               f"A was {md_escape(last['system_a_shown'])}, B was "
               f"{md_escape(last['system_b_shown'])}; you chose {last['choice']} ({pref}).")

nxt = view["next"]
if nxt is None:
    st.info("Every pair assigned to you has your vote. Raise “Pairs to vote on” for more.")
    st.stop()
st.subheader(f"Pair {nxt['position']} of {view['n_pairs']} · query {md_escape(nxt['group_id'])}")
q = nxt["query"]
for field, label in (("source", "Query"), ("context", "Context"), ("fact", "Fact")):
    if q[field]:
        st.markdown(f"**{label}**")
        st.text(q[field])
a_pk, b_pk = nxt["a"]["id"], nxt["b"]["id"]
# The vote buttons sit above the answers so that they are on screen at 1440×900 without
# scrolling; each answer scrolls inside its own box.
b1, b2, b3 = st.columns(3)
# Keyed by the pair: a click that arrives after the page moved on to the next pair does
# not vote on it.
for col, choice, label in ((b1, "A", "A is better"), (b2, "tie", "Tie"),
                           (b3, "B", "B is better")):
    col.button(label, key=f"pw|{choice}|{a_pk}|{b_pk}|{who}", width="stretch",
               shortcut="T" if choice == "tie" else choice,
               type="primary" if choice != "tie" else "secondary",
               on_click=_vote, args=(task, who, a_pk, b_pk, choice))
cols = st.columns(2)
for col, side in zip(cols, ("A", "B")):
    with col:
        st.markdown(f"**Answer {side}**")
        with st.container(border=True, height=400):
            st.text(nxt[side.lower()]["output"])
if q["reference"]:
    with st.expander("Reference answer (from the data set)"):
        st.text(q["reference"])
st.caption("Keyboard: A = answer A is better, B = answer B is better, T = tie (when the "
           "cursor is not in a text field). Voting again on a pair replaces your vote.")
