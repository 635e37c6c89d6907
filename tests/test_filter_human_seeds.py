"""The filter never demotes a question a person wrote: its verdict on a seed is a flag for the
person (status unchanged), p(Yes) near 0.5 reads "the judge is unsure", the message counts
what really happened, and the Dimensions page shows each seed's status and edited successor.
Seeds are edited and preset seeds added all-or-nothing by core functions the CLI also uses."""

import json

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from checkeval_core.annotation import jobs as J
from checkeval_core.checklists import editing as M
from checkeval_core.checklists.filtering import (
    UNSURE_BAND,
    filter_dimension,
    filter_summary,
    is_unsure,
)
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.seeds import add_preset_seeds, save_seeds, seed_questions
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from tests.conftest import APP

# "any errors" makes the fake judge's filter say remove (alignment); the other stays
SEEDS = ["Is the summary coherent?", "Does the summary have any errors?"]


@pytest.fixture(autouse=True)
def _no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


def _task(db, tmp_path, seeds=SEEDS) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "source": "A long article text.",
                                     "output": f"Summary {i}."}) + "\n" for i in range(2)))
    import_file(db, p, "news", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"coherence": {"definition": "well organised", "sub_dimensions": {
        "Structure": {"seed": seeds}}}}))
    import_checklist(db, "news", c)


def _status(db) -> dict[str, str]:
    return {q["text"]: q["status"] for q in M.questions(db, "news")}


def test_filter_flags_a_seed_and_filters_a_generated_question(db, tmp_path):
    _task(db, tmp_path)
    sub = M.dimensions(db, "news")[0]["sub_dimensions"][0]["id"]
    dim = M.dimension_id(db, "news", "coherence")
    gen = M.add_question(db, M.questions(db, "news")[0]["task_id"], dim, sub,
                         "Are there any errors in the summary?", origin="diversification")
    res = filter_dimension(db, "news", "coherence", "fake", mode="json", scope="all")
    out = {d["text"]: d["outcome"] for d in res["decisions"]}
    assert out == {SEEDS[0]: "kept", SEEDS[1]: "flagged",
                   "Are there any errors in the summary?": "filtered"}
    assert (res["removed"], res["flagged"]) == (1, 1)
    st = _status(db)
    assert st[SEEDS[1]] == "kept" and st["Are there any errors in the summary?"] == "filtered"
    q = next(q for q in M.questions(db, "news") if q["text"] == SEEDS[1])
    assert q["filter_verdict"] == "remove" and q["id"] != gen
    assert filter_summary(res).startswith("1 of 3 questions filtered out; 1 question(s) you "
                                          "wrote would be removed by the judge")


def test_unsure_band_with_the_fake_judge(db, tmp_path):
    _task(db, tmp_path, SEEDS + [  # words of the definition raise the fake judge's p(Yes)
        "Is the summary well organised?", "Does the summary show coherence?",
        "Is the summary organised around one topic?", "Is the coherence of the summary good?",
        "Is the summary well organised and coherent?"])
    assert UNSURE_BAND == (0.4, 0.6)
    assert is_unsure(0.4) and is_unsure(0.6) and is_unsure(0.5)
    assert not is_unsure(0.39) and not is_unsure(0.61) and not is_unsure(None)
    res = filter_dimension(db, "news", "coherence", "fake", mode="binary", scope="all")
    assert res["decisions"] and all(d["p_yes"] is not None for d in res["decisions"])
    for d in res["decisions"]:
        assert d["unsure"] == (0.4 <= d["p_yes"] <= 0.6)
        assert d["reason"].startswith("the judge is unsure") == d["unsure"]
    assert res["unsure"] == sum(d["unsure"] for d in res["decisions"])
    assert set(_status(db).values()) == {"kept"}  # only seeds: nothing demoted
    assert res["unsure"] >= 1
    assert f"the judge is unsure on {res['unsure']} of 7" in filter_summary(res)


def test_cli_filter_prints_flags_and_counts(db, tmp_path):
    from checkeval_core.cli import app

    _task(db, tmp_path)
    r = CliRunner().invoke(app, ["checklist", "filter", "--task", "news", "--dimension",
                                 "coherence", "--judge", "fake", "--mode", "json", "--scope",
                                 "all"])
    assert r.exit_code == 0, r.output
    assert "? #" in r.output and SEEDS[1] in r.output
    assert "0 of 2 questions filtered out; 1 question(s) you wrote" in r.output


def test_dimensions_page_warns_instead_of_filtered_out_and_shows_seed_fate(db, tmp_path):
    _task(db, tmp_path)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/dimensions.py").run()
    at.selectbox(key="dim_task").select("news").run()
    at.text_input(key="gen_judge").input("fake").run()
    at.radio(key="filter_scope").set_value("all").run()  # the seeds are kept, not proposals
    at.button(key="filter_run").click().run()
    assert not at.exception
    assert not any("filtered out" in s.value for s in at.success)  # nothing green
    assert any("0 of 2 questions filtered out" in w.value and "you wrote" in w.value
               for w in at.warning)
    assert set(_status(db).values()) == {"kept"}
    ids = {q["text"]: q["id"] for q in M.questions(db, "news")}
    new = decide(db, [ids[SEEDS[0]]], "rev", "edit", new_text="Is the summary well ordered?")[0]
    at.run()
    notes = [c.value.replace("\\", "") for c in at.caption]  # shown as text: escaped markdown
    assert any(n.startswith("rejected") and f"edited into #{new} (kept)" in n
               and "well ordered" in n for n in notes)
    assert any(n.startswith("kept") and "the filter would remove it" in n for n in notes)


def test_review_page_lists_flagged_seeds_by_default(db, tmp_path):
    _task(db, tmp_path)
    filter_dimension(db, "news", "coherence", "fake", mode="json", scope="all")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/checklist.py").run()
    at.selectbox(key="rv_task").select("news").run()
    assert "flagged" in at.multiselect(key="rv_status").value
    assert any("1 question(s) a person wrote are flagged" in w.value for w in at.warning)
    table = at.dataframe[0].value
    assert dict(zip(table["question"], table["status"])) == {SEEDS[0]: "kept",
                                                             SEEDS[1]: "kept ⚑"}


def _second_seed_answered(db, tmp_path):
    """The news task frozen, ann's answer on its second seed: ``({text: id}, sub id)``."""
    _task(db, tmp_path)
    freeze(db, "news")
    jid = J.create_job(db, "news", ["ann"], 1, n_items=1)
    item = J.queue(db, jid, "ann")[0]["item_pk"]
    qs = {q["text"]: q["id"] for q in M.questions(db, "news")}
    J.save_answer(db, jid, "ann", item, qs[SEEDS[1]], "yes")
    sub = M.dimensions(db, "news")[0]["sub_dimensions"][0]["id"]
    return qs, sub


def test_save_seeds_is_all_or_nothing(db, tmp_path):
    qs, sub = _second_seed_answered(db, tmp_path)
    with pytest.raises(M.InUse, match="human answer"):  # deleting an answered seed is refused
        save_seeds(db, sub, {qs[SEEDS[0]]: "Is it coherent?", qs[SEEDS[1]]: ""}, "New one?")
    assert sorted(_status(db)) == sorted(SEEDS)  # … and nothing else changed either
    r = save_seeds(db, sub, {qs[SEEDS[0]]: "Is it coherent?"}, "New one?", author="rev")
    assert r == {"changed": 1, "deleted": 0, "added": True}
    again = save_seeds(db, sub, {qs[SEEDS[0]]: "Is it coherent?"}, " New  one? ")
    assert again == {"changed": 0, "deleted": 0, "added": False}
    assert [s["text"] for s in seed_questions(db, "news", "coherence")[sub]] == \
        ["Is it coherent?", SEEDS[1], "New one?"]


def test_rewording_an_answered_seed_is_refused_and_changes_nothing(db, tmp_path):
    """Rewording a seed people already answered would keep their answers on words they
    never read (the audit's repro: "logical order?" became "spelling mistake?", its Yes
    answers still attached): refused like a deletion, all or nothing."""
    qs, sub = _second_seed_answered(db, tmp_path)
    with pytest.raises(M.InUse, match="its text was not changed.*Checklist review"):
        save_seeds(db, sub, {qs[SEEDS[0]]: "Is it coherent?",
                             qs[SEEDS[1]]: "Does it contain a spelling mistake?"})
    assert sorted(_status(db)) == sorted(SEEDS)  # the unanswered one unchanged too
    with pytest.raises(M.InUse):
        M.set_question_text(db, qs[SEEDS[1]], "Does it contain a spelling mistake?")
    M.set_question_text(db, qs[SEEDS[0]], "Is it coherent?")  # nobody answered this one
    assert {q["text"] for q in M.questions(db, "news")} == {"Is it coherent?", SEEDS[1]}


def test_preset_seeds_core_and_cli(db, tmp_path):
    from checkeval_core.cli import app

    _task(db, tmp_path)
    res = add_preset_seeds(db, "news", "summeval")
    assert res["n_questions"] > 0 and set(res["dimensions"]) >= {"coherence", "fluency"}
    n = len(M.questions(db, "news"))
    assert all(q["origin"] == "seed" for q in M.questions(db, "news"))
    r = CliRunner().invoke(app, ["checklist", "preset", "SummEval", "--task", "news"])
    assert r.exit_code == 0 and "added" in r.output
    assert len(M.questions(db, "news")) == n  # the same seeds are not added twice
    bad = CliRunner().invoke(app, ["checklist", "preset", "bogus", "--task", "news"])
    assert bad.exit_code != 0 and "SummEval, Topical-Chat" in bad.output
