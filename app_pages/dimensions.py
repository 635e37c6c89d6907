"""Dimensions: define what "good" means — dimensions, sub-dimensions, seed questions — then
generate (diversify / elaborate) and filter questions with a judge."""

import streamlit as st

from checkeval_core.checklists import augment as A
from checkeval_core.checklists import editing as M
from checkeval_core.checklists import grounded as G
from checkeval_core.checklists.seeds import save_seeds, seed_questions
from checkeval_core.runs import estimate as E
from checkeval_core.store import task_id
from checkeval_core.textsafe import md_escape
from studio_ui.dimensions_ui import evidence_block, filter_block, presets_and_files
from studio_ui.frame import page_db
from studio_ui.question_results import show_augment_result
from studio_ui.widgets import confirm_step, known_user, task_picker

st.title("Dimensions")
if "dim_flash" in st.session_state:
    st.success(st.session_state.pop("dim_flash"))
db = page_db()
task = task_picker(db, "dim_task", "No task yet: load the demo on the Home page or import data on the Data page.")


def _do(fn, *args) -> None:  # a button's action, run before the redraw
    fn(page_db(), *args)


presets_and_files(db, task)

dims = M.dimensions(db, task)
st.subheader("Dimensions")
with st.form("add_dim", clear_on_submit=True):
    c1, c2 = st.columns([1, 3])
    new_name, new_def = c1.text_input("New dimension"), c2.text_input("Definition")
    if st.form_submit_button("Add dimension") and new_name.strip():
        M.ensure_dimension(db, task_id(db, task), new_name.strip(), new_def)
        st.session_state["dim_pick"] = new_name.strip()  # the editor opens on the new one
        st.rerun()
if not dims:
    st.info("No dimension yet: add one, or use a preset above.")
    st.stop()

dim_name = st.selectbox("Dimension", [d["name"] for d in dims], key="dim_pick")
dim = next(d for d in dims if d["name"] == dim_name)
c1, c2, c3, c4, c5 = st.columns([1, 3, 0.5, 0.5, 0.4])
c1.text_input("Name", dim["name"], key=f"dn_{dim['id']}")
c5.button("↑", key="dim_up", on_click=_do, args=(M.move, "dimension", dim["id"], -1))
c5.button("↓", key="dim_down", on_click=_do, args=(M.move, "dimension", dim["id"], 1))
c2.text_area("Definition", dim["definition"], key=f"dd_{dim['id']}", height=80)
c3.button("Save", key="dim_save", on_click=lambda i=dim["id"]: M.update_dimension(
    page_db(), i, st.session_state[f"dn_{i}"], st.session_state[f"dd_{i}"]))
# Deleting is two steps (Delete, then confirm), and the core refuses while any human
# annotation, review decision or settled answer references the dimension's questions.
if confirm_step("dim_delete", c4.button("Delete", key="dim_delete"), dim["id"],
                f"Delete the dimension {md_escape(dim['name'])} with its "
                f"{len(dim['sub_dimensions'])} sub-dimension(s) and all their questions? "
                "This cannot be undone."):
    try:
        M.delete_dimension(db, dim["id"])
        st.session_state["dim_flash"] = "Dimension deleted"
        st.rerun()
    except M.InUse as e:
        st.error(md_escape(str(e)))

st.markdown("**Sub-dimensions and seed questions** (phrase questions so that *Yes* = better)")
all_seeds = seed_questions(db, task, dim["name"])
for s in dim["sub_dimensions"]:
    with st.container(border=True):
        a, b, c, d, e = st.columns([2, 3, 0.4, 0.4, 0.6])
        a.text_input("Sub-dimension", s["name"], key=f"sn_{s['id']}")
        b.text_input("Description", s["description"], key=f"sd_{s['id']}")
        c.button("↑", key=f"su_{s['id']}", on_click=_do, args=(M.move, "sub_dimension", s["id"], -1))
        d.button("↓", key=f"sdn_{s['id']}", on_click=_do, args=(M.move, "sub_dimension", s["id"], 1))
        e.button("Save", key=f"ss_{s['id']}", on_click=lambda i=s["id"]: M.update_sub(
            page_db(), i, st.session_state[f"sn_{i}"], st.session_state[f"sd_{i}"]))
        texts = {}
        for q in all_seeds.get(s["id"], []):  # each with its status and any edited successor
            texts[q["id"]] = st.text_input(f"Seed #{q['id']}", q["text"], key=f"seed_{q['id']}",
                                           help="Empty the text and save to delete the question")
            st.caption(md_escape(q["note"]))
        # A fresh "new seed" field after each save (the generation counter changes its key),
        # and a seed is never added twice: a second click adds nothing.
        gen = st.session_state.get(f"newseed_gen_{s['id']}", 0)
        new_seed = st.text_input("New seed question",
                                 key=f"newseed_{s['id']}" + (f"_{gen}" if gen else ""))
        pressed = st.button("Save seed questions", key=f"seedsave_{s['id']}")
        emptied = tuple(sorted(i for i, t in texts.items() if not t.strip()))
        # an emptied text deletes its question: that asks first (another set asks again)
        go = confirm_step(
            f"seeddel_{s['id']}", pressed, emptied,
            f"Delete seed question(s) {', '.join(f'#{i}' for i in emptied)} (their text is "
            "empty) and save the others? A deletion cannot be undone.",
            "Save and delete") if emptied else pressed
        if go:
            try:  # all or nothing: a refused deletion leaves every seed as it was
                r = save_seeds(db, s["id"], texts, new_seed, author=known_user("reviewer"))
            except M.InUse as e:
                st.error(f"Nothing was saved: {md_escape(str(e))}")
            else:
                st.session_state[f"newseed_gen_{s['id']}"] = gen + 1
                st.session_state["dim_flash"] = "Seed questions saved" + (
                    " (that new seed was already there)" if new_seed.strip() and
                    not r["added"] else "")
                st.rerun()
with st.form("add_sub", clear_on_submit=True):
    c1, c2 = st.columns([1, 3])
    sub_new, sub_desc = c1.text_input("New sub-dimension"), c2.text_input("Description ")
    if st.form_submit_button("Add sub-dimension") and sub_new.strip():
        M.ensure_sub(db, dim["id"], sub_new.strip(), sub_desc)
        st.rerun()

st.subheader("Generate and filter with a judge")
st.caption("Diversification and elaboration start from the seeds (never from each other); "
           "contrastive and inductive from people's examples (dev pairs they scored apart, "
           "their notes). "
           "Generated questions are *proposed*: review them on the Checklist review page. "
           "The embedded judge works offline but a stronger one writes better questions. The "
           "filter only flags questions you wrote or imported (a published checklist), and "
           "leaves a question alone when the judge is unsure.")
c1, c2, c3 = st.columns([2, 1, 1])
judge = c1.text_input("Judge spec", A.generation_judge(), key="gen_judge",
                      help="embedded:quality (the 1.5B model) is preselected when installed")
n = c2.number_input("Questions asked per sub-dimension / seed", 1, 10, 4, key="gen_n",
                    help="per sub-dimension (diversify), per seed question (elaborate), "
                         "from the notes (inductive); pairs of outputs (contrastive)")
strategy = c3.selectbox("Strategy", G.STRATEGIES, key="gen_strategy", help=G.HELP)
gen_mode = A.default_mode(judge.strip() or "embedded")
st.caption(f"Mode for this judge: **{gen_mode}** — "
           "`single` asks one question per generation (small local judges), `list` a "
           "numbered list. " + G.asked_text(db, task, dim["name"], strategy, int(n), gen_mode))
line, notes = E.cost_line(E.estimate_generate, db, task, dim["name"], strategy, judge, int(n))
st.caption("**Generate** — " + md_escape(line + (f" ({'; '.join(notes)})" if notes else "")))
b1, b3, _ = st.columns(3)
again = b3.button("Generate again (new samples)", key="gen_again",
                  help="Bypass the cache: sample new questions instead of the answers stored "
                       "for the same request.")
try:
    if b1.button("Generate questions", type="primary", key="gen_run") or again:
        with st.spinner("Asking the judge…"):
            res = G.generate(db, task, dim["name"], strategy, judge.strip(), n=int(n),
                             fresh=again)
        show_augment_result(res)
    filter_block(db, task, dim["name"], judge.strip())  # scope and cost said before it runs
    evidence_block(db, task, dim["name"], judge.strip())  # each proposal tested on dev items
except (ValueError, ImportError) as e:
    st.error(md_escape(str(e)))
