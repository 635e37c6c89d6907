"""Escalation by item (``--escalate-by item``): when the first judge's mean confidence over an
item's answers is below the margin, all of the item's questions go to the second judge, and
no question of any other item does. The fake judge is A; B is the fake judge under another
name (a backend declared in the test suite only), so the answers are known by rule."""

from __future__ import annotations

from collections import defaultdict

import pytest

from checkeval_core.judges.fake import FakeJudge
from checkeval_core.judges.spec import BACKENDS, Backend, register_backend
from checkeval_core.runs import create_run, execute_run
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.runs.jobs import get_run
from checkeval_core.store import db_path as path_of
from tests.helpers import make_runs_task, run_cli

ASKED: list[str] = []


class FakeB(FakeJudge):
    def __init__(self, spec: object = "fakeb", **params: object) -> None:
        super().__init__(spec, **params)
        self.capabilities = type(self.capabilities)(logprobs=True, local=True, model="fake-b")

    def binary(self, requests):
        ASKED.extend(r.prefix for r in requests)
        return super().binary(requests)


@pytest.fixture(autouse=True)
def second_fake():
    register_backend(Backend("fakeb", FakeB, title="the fake judge as B"))
    ASKED.clear()
    yield
    BACKENDS.pop("fakeb", None)


def item_confidence(db, rid):
    """Each item's mean |p(Yes) − 0.5| in A's answers, by hand."""
    by_item = defaultdict(list)
    for item, p in db.execute("SELECT i.item_id, a.p_yes FROM answer a JOIN item i ON "
                              "i.id = a.item_id WHERE a.run_id = ?", [rid]):
        by_item[item].append(abs(p - 0.5))
    return {k: sum(v) / len(v) for k, v in by_item.items()}


def test_an_unsure_item_goes_to_b_whole_and_no_other_question_does(db, tmp_path):
    task = make_runs_task(db, tmp_path)  # 9 items × 5 questions
    alone = create_run(db, task, "fake", "rocketeval")
    assert execute_run(path_of(db), alone)["status"] == "completed"
    conf = item_confidence(db, alone)
    ranked = sorted(conf.values())
    margin = (ranked[3] + ranked[4]) / 2  # the 4 least sure items escalate
    low = {k for k, c in conf.items() if c < margin}
    assert len(low) == 4
    # by answer, the same margin touches single questions of other items too
    per_answer = {(item, p) for item, p in db.execute(
        "SELECT i.item_id, a.p_yes FROM answer a JOIN item i ON i.id = a.item_id "
        "WHERE a.run_id = ?", [alone])}
    assert {item for item, p in per_answer if abs(p - 0.5) < margin} - low

    rid = create_run(db, task, "fake", "rocketeval",
                     params=escalation_params("fakeb", margin=margin, escalate_by="item"))
    run = execute_run(path_of(db), rid)
    assert run["status"] == "completed", run["error"]
    judges = defaultdict(set)
    for item, judge in db.execute("SELECT i.item_id, a.judge FROM answer a JOIN item i ON "
                                  "i.id = a.item_id WHERE a.run_id = ?", [rid]):
        judges[item].add(judge)
    assert {k: v for k, v in judges.items()} == {
        k: {"fakeb"} if k in low else {"fake"} for k in conf}
    assert len(ASKED) == 4 * 5  # B asked every question of the 4 items, nothing else
    esc = get_run(db, rid)["params"]["escalation"]
    assert esc["escalate_by"] == "item" and esc["n_items_escalated"] == 4
    assert esc["n_escalated"] == 20 and esc["coverage"] == pytest.approx(25 / 45)


def test_escalate_by_is_checked(db_path, db, tmp_path):
    task = make_runs_task(db, tmp_path)
    r = run_cli(["run", "--task", task, "--judge", "fake", "--escalate-by", "item"],
                db=db_path)
    assert r.returncode == 2 and "need --escalate-to" in r.stderr
    r = run_cli(["run", "--task", task, "--judge", "fake", "--escalate-to", "fakeb",
                 "--margin", "0.1", "--escalate-by", "question"], db=db_path)
    assert r.returncode == 2 and "choose one of answer, item" in r.stderr
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0
    assert escalation_params("fakeb", margin=0.1, escalate_by="answer") == {
        "escalate_to": "fakeb", "delta": 0.1, "margin": 0.1}


def test_run_page_starts_a_run_escalating_by_item(db, tmp_path, launched):
    from tests.conftest import run_page

    task = make_runs_task(db, tmp_path)
    started = launched
    at = run_page(task, "fake", ["rocketeval"])
    at.text_input(key="run_escalate_to").input("fakeb").run()
    at.radio(key="run_esc_how").set_value("margin")
    at.radio(key="run_esc_by").set_value("item")
    at.button(key="run_start").click().run()
    assert not at.exception, at.exception
    p = get_run(db, started[0])["params"]
    assert p["escalate_to"] == "fakeb" and p["escalate_by"] == "item" and p["margin"] == 0.2


def test_the_cost_before_a_start_counts_the_answers_of_unsure_items(db, tmp_path):
    """By item, B's expected share before a start is the share of answers in items whose mean
    confidence is below the margin — what the run will send — not the share of unsure answers
    (B's cost follows the answers it is asked, docs/scaling.md)."""
    from checkeval_core.runs.escalation.estimate import expected_coverage, second_judge_estimate

    task = make_runs_task(db, tmp_path)  # 9 items × 5 questions
    alone = create_run(db, task, "fake", "rocketeval")
    execute_run(path_of(db), alone)
    conf = item_confidence(db, alone)
    ranked = sorted(conf.values())
    margin = (ranked[3] + ranked[4]) / 2  # the 4 least sure items escalate: 20 answers
    by_item, why = expected_coverage(db, task, "fake", margin, escalate_by="item")
    assert by_item == pytest.approx(25 / 45) and "items whose mean confidence" in why
    by_answer, _ = expected_coverage(db, task, "fake", margin)
    per_answer = [abs(p - 0.5) >= margin for (p,) in db.execute(
        "SELECT p_yes FROM answer WHERE run_id = ?", [alone])]
    assert by_answer == pytest.approx(sum(per_answer) / 45) != pytest.approx(by_item)
    est = second_judge_estimate(db, task, ["fake"], ["rocketeval"], None, None,
                                escalation_params("fakeb", margin=margin, escalate_by="item"))
    assert est.calls == 20  # B asked the 4 items' 5 questions, as the run then does
    rid = create_run(db, task, "fake", "rocketeval",
                     params=escalation_params("fakeb", margin=margin, escalate_by="item"))
    execute_run(path_of(db), rid)
    assert len(ASKED) == est.calls
    # a fitted run's achieved coverage is reused only for runs escalating the same way
    fitted = get_run(db, rid)["params"]["escalation"]["coverage"]
    assert expected_coverage(db, task, "fake", None, escalate_by="item")[0] == fitted
    assert expected_coverage(db, task, "fake", None)[1] != f"achieved by escalating run {rid}"


def test_the_cost_line_says_answers_scattered_over_items_cost_a_prefix_judge_more(db, tmp_path):
    """By answer, a second judge that reuses an item's prefix (the embedded model) re-reads
    each item it is asked about: measured 12 % above the share of answers on SummEval
    (docs/benchmarks.md). The cost line says so then, and only then: not by item (measured
    within 1 %), not for a judge without a prefix cache (each request costs its own prompt)."""
    from checkeval_core.runs.escalation.estimate import SCATTERED, second_judge_estimate

    task = make_runs_task(db, tmp_path)
    alone = create_run(db, task, "fake", "rocketeval")
    execute_run(path_of(db), alone)
    ranked = sorted(item_confidence(db, alone).values())
    margin = (ranked[3] + ranked[4]) / 2

    def notes(b: str, by: str | None) -> list[str]:
        return second_judge_estimate(db, task, ["fake"], ["rocketeval"], None, 2,
                                     escalation_params(b, margin=margin, escalate_by=by)).notes

    said = SCATTERED.format(b="embedded")
    assert said in notes("embedded", None) and "12 % above this share" in said
    assert said not in notes("embedded", "item")
    assert not any("re-reads the text" in n for n in notes("fakeb", None))
