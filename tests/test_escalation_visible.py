"""What an escalating run shows of its second judge: its cost before the click (the Run page's
cost box sums both judges) and after (the stored estimate and actuals hold its share), its
pass in the progress ("second judge: k of N"), its name in every run label, the Traces cell of
each answer it gave ("by fakeb (fake said ✗ 0.48)") and the exported answers' judge column."""

from __future__ import annotations

import csv
import io
import os

import pytest

from checkeval_core.annotation.jobs import create_job, save_answer
from checkeval_core.export import rows_to_csv
from checkeval_core.judges.base import BinaryResult
from checkeval_core.judges.fake import FakeJudge
from checkeval_core.judges.spec import BACKENDS, Backend, register_backend
from checkeval_core.runs import create_run, execute_run, list_runs
from checkeval_core.runs.escalation.estimate import start_cost_line
from checkeval_core.runs.escalation.options import escalation_params
from checkeval_core.runs.estimate import estimate_batch, estimate_vs_actual
from checkeval_core.runs.export import run_rows
from checkeval_core.runs.jobs import get_run
from checkeval_core.runs.labels import run_label, run_labels
from checkeval_core.runs.progress import panel
from checkeval_core.runs.traces import decision_rows, item_trace, verdict_cell
from checkeval_core.store import db_path, loads, open_db
from tests.conftest import open_app_page
from tests.helpers import submit_answered

SEEN: list[dict] = []  # what the Run page's panel said while the second judge answered


class FlipB(FakeJudge):
    """A second judge that says the opposite of ``fake`` (its raw answer would start a formula
    in a spreadsheet) and, on each call, records what the Run page's live panel shows."""

    def binary(self, requests):
        SEEN.append(panel(open_db(os.environ["CHECKEVAL_DB"]), "t")["active"])
        out = []
        for r in super().binary(requests):
            p = round(1 - r.p_yes, 4)
            out.append(BinaryResult(verdict="yes" if p >= 0.5 else "no", p_yes=p,
                                    raw="=1+1 " + ("Yes" if p >= 0.5 else "No"),
                                    mode="logprob", tokens_in=r.tokens_in, tokens_out=1))
        return out


@pytest.fixture(autouse=True)
def flip_b():
    register_backend(Backend("fakeb", FlipB, title="test B"))
    SEEN.clear()
    yield
    BACKENDS.pop("fakeb", None)


def _escalated_run(db, task, margin=0.2):
    rid = create_run(db, task, "fake", "rocketeval", params=escalation_params("fakeb",
                                                                              margin=margin))
    run = execute_run(db_path(db), rid)
    assert run["status"] == "completed", run["error"]
    return rid


def test_cost_before_the_click_sums_both_judges(db, task):
    a = estimate_batch(db, task, ["fake"], ["rocketeval"], checklist="latest", limit=9)
    one, _ = start_cost_line(db, task, ["fake", ""], ["rocketeval"], "latest", 9, {},
                             {"escalate_to": ""})
    assert one == "Cost: " + a.text()
    both, notes = start_cost_line(db, task, ["fake", ""], ["rocketeval"], "latest", 9, {},
                                  {"escalate_to": "fakeb", "margin": 0.2})
    # no earlier run of fake on the task: the second judge may be asked all of it (at most)
    assert both.startswith(f"Cost: {2 * a.calls} judge calls")
    assert f"of which the second judge fakeb: {a.calls} judge calls" in both
    assert any("fakeb asked 100% of fake's requests at most" in n for n in notes)
    # after a run of fake, the share is the one of its answers below the margin
    _escalated_run(db, task)
    kept = db.execute("SELECT AVG(ABS(COALESCE(a_p_yes, p_yes) - 0.5) >= 0.2) FROM answer"
                      ).fetchone()[0]
    again, _ = start_cost_line(db, task, ["fake"], ["rocketeval"], "latest", 9, {},
                               {"escalate_to": "fakeb", "margin": 0.2})
    b = estimate_batch(db, task, ["fakeb"], ["rocketeval"], checklist="latest", limit=9)
    assert b.cached > 0  # B's cache holds what it answered in the run
    assert f"second judge fakeb: {round(b.calls * (1 - kept))} judge calls " \
           f"({round(b.cached * (1 - kept))} already cached)" in again


def test_run_page_cost_box_names_the_second_judge(db, task):
    at = open_app_page("app_pages/run.py")
    at.selectbox(key="run_task").select(task).run()
    at.multiselect(key="run_judges").set_value([])
    at.text_input(key="run_extra").input("fake")
    at.multiselect(key="run_methods").set_value(["rocketeval"])
    at.number_input(key="run_limit").set_value(9).run()
    alone = next(i.value for i in at.info if i.value.startswith("Cost"))
    at.text_input(key="run_escalate_to").input("fakeb").run()
    at.radio(key="run_esc_how").set_value("margin").run()
    assert not at.exception, at.exception
    both = next(i.value for i in at.info if i.value.startswith("Cost"))
    n = int(alone.split()[1])
    assert both.startswith(f"Cost: {2 * n} judge calls") and "second judge fakeb" in both


def test_stored_estimate_actuals_and_progress_include_the_second_judge(db, task):
    rid = _escalated_run(db, task)
    run = get_run(db, rid)
    b_calls = db.execute("SELECT COUNT(*) FROM answer WHERE run_id = ? AND judge = 'fakeb'",
                         [rid]).fetchone()[0]
    assert b_calls > 0
    est, act = run["estimate"], run["actual"]
    est = est if isinstance(est, dict) else loads(est)
    act = act if isinstance(act, dict) else loads(act)
    n_a = 9 * 5  # 9 items × 5 questions, none cached
    assert est["parts"]["fakeb"]["calls"] == n_a  # no earlier run: all of them, at most
    assert est["calls"] == 2 * n_a
    assert act["parts"]["fakeb"]["calls"] == b_calls and act["calls"] == n_a + b_calls
    rows = {r["figure"]: r for r in estimate_vs_actual(run)}
    assert rows["calls · second judge fakeb"]["actual"] == b_calls
    assert rows["calls"]["actual"] == n_a + b_calls
    # while B answered, the Run page's panel said so (k of N, the bar following it)
    texts = [a[0]["text"] for a in SEEN if a]
    assert texts and all("second judge fakeb: " in t for t in texts)
    assert texts[0].endswith(f"second judge fakeb: 0 of {b_calls}")
    assert [a[0]["fraction"] for a in SEEN][:1] == [0.0]
    assert "Run 1 · fake → fakeb · rocketeval · 9/9 items" in texts[0]
    assert run["params"]["escalation"]["b_progress"] == {"done": b_calls, "total": b_calls}


def test_labels_traces_and_export_say_who_answered(db, task, tmp_path):
    rid = _escalated_run(db, task)
    row = next(r for r in list_runs(db, task) if r["id"] == rid)
    assert run_label(row) == f"#{rid} · v1 · fake → fakeb · rocketeval · 9 items"
    assert run_labels(db, [rid])[rid] == run_label(row)
    a = db.execute("SELECT item_id, question_id, p_yes, a_verdict, a_p_yes, verdict FROM answer "
                   "WHERE run_id = ? AND judge = 'fakeb' LIMIT 1", [rid]).fetchone()
    rows = decision_rows(item_trace(db, a[0], [rid]))
    cell = next(r for r in rows if r["question_id"] == a[1])[f"#{rid}"]
    mark = "✓" if a[2] >= 0.5 else "✗"
    first = "✓" if a[3] == "yes" else "✗"
    assert cell == f"{verdict_cell(a[5], a[2])} by fakeb (fake said {verdict_cell(a[3], a[4])})"
    # the cell's own words: ✓/✗ and p(Yes) of each judge (≈ where p(Yes) is a coin flip)
    assert cell.startswith(f"{mark} {a[2]:.2f}") and f"(fake said {first} {a[4]:.2f}" in cell
    kept = [r[f"#{rid}"] for r in rows if "by fakeb" not in r[f"#{rid}"]]
    assert kept and all(" by " not in c for c in kept)
    # export: who answered, and the first judge's answer where it was replaced
    out = run_rows(db, rid, "answers")
    got = list(csv.DictReader(io.StringIO(rows_to_csv(out))))
    by_b = [r for r in got if r["judge"] == "fakeb"]
    assert by_b and all(r["first_judge_verdict"] in ("yes", "no") and r["first_judge_p_yes"]
                        for r in by_b)
    assert all(r["judge"] == "fake" and r["first_judge_verdict"] == "" for r in got
               if r not in by_b)
    assert all(r["raw"].startswith("'=1+1") for r in by_b)  # no cell starts a formula


def test_traces_page_says_by_whom_and_shows_peoples_answers(db, task):
    rid = _escalated_run(db, task)
    pk, qid = db.execute("SELECT item_id, question_id FROM answer WHERE run_id = ? AND "
                         "judge = 'fakeb' LIMIT 1", [rid]).fetchone()
    job = create_job(db, task, ["ann", "bob"], overlap=2)
    save_answer(db, job, "ann", pk, qid, "yes")
    save_answer(db, job, "bob", pk, qid, "no")
    save_answer(db, job, "bob", pk, qid, "yes")  # changed: the last answer counts
    submit_answered(db, job)
    at = open_app_page("app_pages/traces.py")
    # the link Align's disagreeing items give
    at.query_params.update({"runs": str(rid), "item": str(pk), "dim": "", "show": "people"})
    at.run()
    assert not at.exception, at.exception
    assert at.radio(key="tr_filter").value == "disagree with humans or judges"
    at.radio(key="tr_filter").set_value("all questions").run()
    table = at.dataframe(key="tr_dec").value
    assert any("by fakeb (fake said" in str(c) for c in table[f"#{rid}"])
    people = dict(zip(table["question_id"], table["people"]))
    assert people[qid] == "✓ 2 · ✗ 0"
    assert set(people.values()) == {"✓ 2 · ✗ 0", "no one answered"}


def test_a_second_judge_without_an_estimate_keeps_the_first_judges(db, task, monkeypatch):
    import checkeval_core.runs.escalation.estimate as EE

    real = EE.estimate_run

    def no_b(db_, run_id, judge=None):
        if judge == "fakeb":
            raise ImportError("fakeb's package is not installed")
        return real(db_, run_id, judge)

    monkeypatch.setattr(EE, "estimate_run", no_b)
    est = get_run(db, _escalated_run(db, task))["estimate"]
    est = est if isinstance(est, dict) else loads(est)
    assert est["calls"] == 45 and "parts" not in est
    assert any("fakeb: no estimate of the second judge's share (ImportError" in n
               for n in est["notes"])
