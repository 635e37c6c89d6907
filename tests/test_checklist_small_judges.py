"""Checklist generation and filtering shaped for small local judges: one question per
generation under a grammar, task-kind wording, "generate again", and Yes/No filtering."""

from __future__ import annotations

from checkeval_core.checklists.augment import augment, default_mode, usable, wrong_subject
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.filtering import default_mode as filter_mode
from checkeval_core.checklists.filtering import filter_dimension, is_human
from checkeval_core.judges.registry import get_judge
from checkeval_core.prompts.checklist import SINGLE_PROMPT_VERSION
from tests.helpers import import_checklist_seeds, new_task


class Recording:
    """Wraps the fake judge and keeps every request it was sent."""

    def __init__(self, db):
        self.inner = get_judge("fake", db=db)
        self.spec = "fake"
        self.gen, self.bin = [], []

    def generate(self, reqs):
        self.gen += reqs
        return self.inner.generate(reqs)

    def binary(self, reqs):
        self.bin += reqs
        return self.inner.binary(reqs)


def _summary_task(db, tmp_path) -> str:
    t = new_task(db, tmp_path)
    db.execute("UPDATE task SET kind = 'summarization' WHERE name = ?", [t])
    import_checklist_seeds(db, t)
    return t


def test_defaults_follow_the_judge() -> None:
    assert default_mode("embedded") == default_mode("embedded:quality") == "single"
    assert default_mode("openai:gpt-4o") == default_mode("fake") == "list"
    assert filter_mode("embedded") == "binary" and filter_mode("openai:gpt-4o") == "json"


def test_single_mode_one_question_per_sample_with_the_tasks_noun(db, tmp_path) -> None:
    t = _summary_task(db, tmp_path)
    j = Recording(db)
    res = augment(db, t, "coherence", "diversify", "fake", n=3, judge_obj=j, mode="single")
    n_subs = len({q["sub_dimension_id"] for q in questions(db, t, dimension="coherence")})
    assert res["mode"] == "single" and res["requests"] == 3 * n_subs == len(j.gen)
    # every request: a grammar forcing its own opening about the summary, never "answer"
    assert all(r.grammar.startswith('root ::= "') and "summary" in r.grammar for r in j.gen)
    assert len({r.grammar for r in j.gen}) == 3
    assert len({r.messages for r in j.gen}) == len(j.gen)  # each lists what came before
    text = " ".join(c for r in j.gen for _, c in r.messages).lower()
    assert "summary" in text and " answer " not in text
    added = [q for q in questions(db, t, dimension="coherence") if q["origin"] == "diversification"]
    assert added and all(q["prompt_version"] == SINGLE_PROMPT_VERSION for q in added)
    assert all(a["usable"] for a in res["added"])


def test_asking_again_uses_the_cache_and_fresh_asks_anew(db, tmp_path) -> None:
    t = _summary_task(db, tmp_path)
    first = augment(db, t, "fluency", "elaborate", "fake", n=2, mode="single")
    assert first["from_cache"] == 0 and first["added"]
    again = augment(db, t, "fluency", "elaborate", "fake", n=2, mode="single")
    assert again["from_cache"] == again["requests"] and again["added"] == []
    fresh = augment(db, t, "fluency", "elaborate", "fake", n=2, mode="single", fresh=True)
    assert fresh["from_cache"] == 0 and fresh["seed"] > 0


def test_wrong_subject_and_usable() -> None:
    assert wrong_subject("Does the answer avoid blaming the reader?", "summary")
    assert not wrong_subject("Does the summary avoid repeating the answer of the article?",
                             "summary")
    assert not wrong_subject("Is the response polite?", "response")
    assert usable("Is the summary easy to follow?", "summary")
    assert not usable("Does the summary contain errors?", "summary")  # Yes = worse
    assert not usable("Rate the fluency.", "summary")


def test_binary_filter_decides_every_question(db, tmp_path) -> None:
    t = _summary_task(db, tmp_path)
    pool = [q for q in questions(db, t, dimension="relevance") if q["status"] in ("proposed", "kept")]
    j = Recording(db)
    res = filter_dimension(db, t, "relevance", "fake", judge_obj=j, mode="binary", scope="all")
    assert res["mode"] == "binary" and res["problems"] == []
    assert len(res["decisions"]) == len(pool)  # a decision for every question
    assert len(j.bin) >= 2 * len(pool)  # alignment + consistency each, + similar pairs
    removed = [d for d in res["decisions"] if not d["keep"]]
    assert res["removed"] + res["flagged"] == len(removed)
    assert all(d["criterion"] in ("alignment", "consistency", "redundancy") for d in removed)
    stored = {q["id"]: q for q in questions(db, t, dimension="relevance")}
    before = {q["id"]: q for q in pool}
    for d in removed:  # generated questions are filtered; a person's or a file's only flagged
        human = is_human(before[d["id"]])
        assert d["outcome"] == ("flagged" if human else "filtered")
        assert stored[d["id"]]["status"] == (before[d["id"]]["status"] if human else "filtered")


def test_binary_filter_invalid_answers_change_nothing(db, tmp_path) -> None:
    t = _summary_task(db, tmp_path)
    db.execute("UPDATE dimension SET definition = 'see [[invalid]]' WHERE name = 'fluency'")
    before = [(q["id"], q["status"]) for q in questions(db, t, dimension="fluency")]
    res = filter_dimension(db, t, "fluency", "fake", mode="binary", scope="all")
    assert res["decisions"] == [] and res["removed"] == 0 and res["problems"]
    assert [(q["id"], q["status"]) for q in questions(db, t, dimension="fluency")] == before


def test_cli_mode_fresh_and_cache_note(db, db_path, tmp_path) -> None:
    from typer.testing import CliRunner

    from checkeval_core.cli import app

    t = _summary_task(db, tmp_path)
    args = ["checklist", "augment", "--task", t, "--dimension", "coherence", "--strategy",
            "diversify", "--judge", "fake", "--mode", "single", "--n", "2"]
    r1 = CliRunner().invoke(app, args)
    assert r1.exit_code == 0 and "from the cache" not in r1.output
    r2 = CliRunner().invoke(app, args)
    assert r2.exit_code == 0 and "0 questions proposed" in r2.output
    assert "from the cache (--fresh asks anew)" in r2.output
    bad = CliRunner().invoke(app, [*args[:-4], "--mode", "bogus"])
    assert bad.exit_code == 2 and "use list or single" in bad.output
    f = CliRunner().invoke(app, ["checklist", "filter", "--task", t, "--dimension", "coherence",
                                 "--judge", "fake", "--mode", "binary", "--json"])
    assert f.exit_code == 0 and '"mode": "binary"' in f.output


def test_binary_filter_uses_the_pools_ranking_of_p_yes() -> None:
    from checkeval_core.checklists.filtering import _fails, _pool_medians
    from checkeval_core.judges.base import BinaryResult

    # the probe's alignment p(Yes): every verdict "no", the two bad questions lowest
    ps = [0.449, 0.492, 0.415, 0.463, 0.4146]
    res = [BinaryResult("no", p) for p in ps]
    keys = [("alignment", i, None) for i in range(5)]
    med = _pool_medians(keys, res)["alignment"]
    assert [_fails("alignment", r, med) for r in res] == [False, False, True, False, True]
    assert _fails("alignment", BinaryResult("no", None), None)  # no p(Yes): the verdict
    assert _fails("redundancy", BinaryResult("yes", 0.6), None)
    assert _pool_medians(keys[:2], res[:2]) == {}  # fewer than 3: no ranking
