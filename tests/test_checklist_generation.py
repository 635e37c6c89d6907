"""Parsing messy LLM output; augmentation, filtering and instance checklists with provenance."""

from checkeval_core.checklists.augment import augment
from checkeval_core.checklists.editing import questions
from checkeval_core.checklists.filtering import filter_dimension, parse_decisions, similar_pairs
from checkeval_core.checklists.instance import generate_instance_checklists
from checkeval_core.checklists.parse import parse_questions, question_flags
from checkeval_core.judges.base import GenerateResult
from checkeval_core.prompts.checklist import PROMPT_VERSION
from tests.helpers import import_checklist_seeds, new_task


class Scripted:
    """A judge returning fixed generate answers, in order."""

    spec = "scripted"

    def __init__(self, texts):
        self.texts = list(texts)

    def generate(self, reqs):
        return [GenerateResult(text=self.texts.pop(0)) for _ in reqs]


def test_parse_messy_outputs():
    assert parse_questions("1. Is it clear?\n2) Does it flow?\n(3) Is it short?")[0] == \
        ["Is it clear?", "Does it flow?", "Is it short?"]
    qs, probs = parse_questions("Sure, here they are:\n- Is A?\n* Is B?\n• Is C?\nThanks!")
    assert qs == ["Is A?", "Is B?", "Is C?"] and len(probs) == 2
    assert parse_questions('```json\n{"questions": ["Is A?", {"text": "Is B?"}]}\n```')[0] == \
        ["Is A?", "Is B?"]
    assert parse_questions("") == ([], ["the model returned an empty answer"])
    qs, probs = parse_questions("I think the summary is good overall.")
    assert qs == [] and "not a question" in probs[0]
    assert parse_questions("Q1: Is A?\nQ2: Is A?")[0] == ["Is A?"]
    # answer options listed under a question are not questions (a 0.5B model does this)
    qs, probs = parse_questions("1. Is A?\n   - Yes\n   - No\n2. Is B?\n   a) Yes/No")
    assert qs == ["Is A?", "Is B?"] and len(probs) == 3
    assert all("answer option" in p for p in probs)


def test_flags():
    assert question_flags("Is the summary fluent?") == []
    assert "not_yes_no" in question_flags("Rate the fluency.")
    assert "negative" in question_flags("Does the summary contain errors?")
    assert question_flags("Is the summary free of errors?") == []


def test_augment_provenance_and_independence(db, tmp_path):
    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    seeds_before = [q["id"] for q in questions(db, t, dimension="coherence")]
    res = augment(db, t, "coherence", "diversify", "fake")
    assert res["added"] and res["problems"]  # the fake wraps its list in prose
    div = [q for q in questions(db, t, dimension="coherence") if q["origin"] == "diversification"]
    assert all(q["status"] == "proposed" and q["model"] == "fake" and
               q["prompt_version"] == PROMPT_VERSION and q["parent_id"] is None for q in div)
    assert any("negative" in q["flags"] for q in div)
    res2 = augment(db, t, "coherence", "elaborate", "fake")
    ela = [q for q in questions(db, t, dimension="coherence") if q["origin"] == "elaboration"]
    assert ela and all(q["parent_id"] in seeds_before for q in ela)
    # elaboration started from seeds only, never from diversification output
    assert {a["parent_id"] for a in res2["added"]} <= set(seeds_before)


def test_unparsable_answer_is_reported(db, tmp_path):
    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    res = augment(db, t, "relevance", "diversify", "x",
                  judge_obj=Scripted(["I refuse."] * 5))
    assert res["added"] == [] and any("no question could be read" in p for p in res["problems"])


def test_filter_records_verdicts_and_duplicates(db, tmp_path):
    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    pool = questions(db, t, dimension="coherence")
    answer = ('Here: {"decisions": [{"id": 1, "keep": true, "criterion": "", "reason": "ok"}, '
              '{"id": 2, "keep": false, "criterion": "redundancy", "reason": "same as 1", '
              '"duplicate_of": 1}, {"id": 3, "keep": false, "criterion": "alignment", '
              '"reason": "yes means worse"}]}')
    # the third question as if a judge had written it; the first two are the person's seeds
    db.execute("UPDATE question SET origin = 'diversification', origins = "
               "'[\"diversification\"]', author = 'llm', model = 'x' WHERE id = ?",
               [pool[2]["id"]])
    res = filter_dimension(db, t, "coherence", "x", judge_obj=Scripted([answer]), scope="all")
    assert res["removed"] == 1 and res["flagged"] == 1
    after = {q["id"]: q for q in questions(db, t, dimension="coherence")}
    assert after[pool[1]["id"]]["status"] == "kept"  # a seed is flagged, never demoted
    assert after[pool[1]["id"]]["filter_verdict"] == "remove"
    assert after[pool[1]["id"]]["duplicate_of_id"] == pool[0]["id"]
    assert after[pool[2]["id"]]["status"] == "filtered"
    assert after[pool[2]["id"]]["filter_criterion"] == "alignment"
    assert [d["outcome"] for d in res["decisions"]] == ["kept", "flagged", "filtered"]
    assert after[pool[0]["id"]]["filter_verdict"] == "keep"
    bad = filter_dimension(db, t, "fluency", "x", judge_obj=Scripted(["no json here"]),
                           scope="all")
    assert bad["removed"] == 0 and "nothing was changed" in bad["problems"][0]


def test_filter_with_fake_and_helpers(db, tmp_path):
    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    augment(db, t, "coherence", "diversify", "fake")
    res = filter_dimension(db, t, "coherence", "fake")
    assert any(d["criterion"] == "alignment" for d in res["decisions"] if not d["keep"])
    assert parse_decisions("[]") == []
    assert similar_pairs(["Is the summary fluent?", "Is the summary fluent ?", "Other?"])[0][:2] \
        == (0, 1)


def test_instance_checklists(db, tmp_path):
    p = tmp_path / "i.jsonl"
    p.write_text('{"id": "a", "input": "Write a haiku about autumn leaves falling", '
                 '"output": "x", "reference": "r"}\n{"id": "b", "input": "List three primes", '
                 '"output": "2, 3, 5"}\n', encoding="utf-8")
    from checkeval_core.datasets import import_file

    import_file(db, p, "inst", kind="instruction")
    res = generate_instance_checklists(db, "inst", "fake")
    assert res["items"] == 2 and 10 <= res["questions"] <= 20
    qs = questions(db, "inst", instance=True)
    # issue 14: per query (items without a group are each their own query)
    assert all(q["origin"] == "instance" and q["group_id"] in ("a", "b") for q in qs)
    assert generate_instance_checklists(db, "inst", "fake")["items"] == 0  # already done


def test_copies_of_seed_questions_are_dropped_and_said(db, tmp_path):
    """A small model often writes back a seed: the copy is dropped, and the result says what
    was dropped and of which question (it said only "1 proposed from 3 requests")."""
    from checkeval_core.checklists.augment import augment_summary

    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    seeds = [q["text"] for q in questions(db, t, dimension="relevance")]
    subs = {q["sub_dimension"] for q in questions(db, t, dimension="relevance")}
    near = seeds[0].rstrip("?") + "s?"  # one letter more: a near-copy
    texts = [seeds[0], near, "Does the summary name the main event of the article?"]
    res = augment(db, t, "relevance", "diversify", "x", n=3, mode="single",
                  judge_obj=Scripted(texts * 3 * len(subs)))
    why = {d["text"]: d for d in res["dropped"]}
    assert why[seeds[0]]["why"] == "the same as an existing question"
    assert why[seeds[0]]["copy_of"] == seeds[0]
    assert why[near]["why"].startswith("a near-copy") and why[near]["copy_of"] == seeds[0]
    assert [a["text"] for a in res["added"]] == [texts[2]]
    summary, _ = augment_summary(res)
    assert f"1 questions proposed (0 flagged) from {res['requests']} request(s); " \
           f"{len(res['dropped'])} dropped as copies of questions already there" in summary
    assert "near-copies" in summary


def test_dimensions_page_lists_what_generate_dropped(db, tmp_path):
    from tests.conftest import open_app_page

    t = new_task(db, tmp_path)
    import_checklist_seeds(db, t)
    at = open_app_page("app_pages/dimensions.py")
    at.text_input(key="gen_judge").input("fake").run()
    at.button(key="gen_run").click().run()
    assert not at.exception, at.exception
    first = [s.value for s in at.success if "questions proposed" in s.value]
    assert first and "dropped" not in first[0]
    at.button(key="gen_run").click().run()  # the same answers again: all already there
    again = [s.value for s in at.success if "questions proposed" in s.value]
    assert again and again[0].startswith("0 questions proposed") and "dropped as copies" in again[0]
    assert any(c.value.startswith("Dropped") for c in at.caption)
    assert any("copy_of" in d.value.columns or "text" in d.value.columns for d in at.dataframe)
