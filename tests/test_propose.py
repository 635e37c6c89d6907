"""Proposing a revised checklist from evidence: a hand-checked tiny task (a constant question,
a near-copy and a question that pulls agreement down are dropped; held-out figures read
held-out groups only), the split discipline (held-out human scores never change the
proposal), the ranking setting, weights, the CLI JSON and the review queue."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from checkeval_core import task_split as S
from checkeval_core.analysis import proposal as P
from checkeval_core.analysis.proposal.evidence import ProposalError, load_evidence
from checkeval_core.analysis.proposal.weights import fit_weights
from checkeval_core.checklists.review import to_review
from tests.helpers import PROPOSE_GROUPS as GROUPS
from tests.helpers import PROPOSE_HUMAN as HUMAN
from tests.helpers import PROPOSE_SYSTEMS as SYSTEMS
from tests.helpers import PROPOSE_TEXTS as TEXTS
from tests.helpers import build_proposal_task as build
from tests.helpers import proposal_values as values
from tests.helpers import run_cli


def _rho_by_hand(groups, human, names):
    """Mean over documents of Spearman(mean of the questions' p(Yes), human)."""
    out = []
    for g in groups:
        judge = [np.mean([values(n, h) for n in names]) for h in HUMAN[g]]
        out.append(stats.spearmanr(judge, human[g])[0])
    return float(np.mean(out))


def test_refuses_a_task_without_a_split(db):
    rid, _ = build(db)
    with pytest.raises(ProposalError, match="checkeval split --task pt"):
        P.propose(db, [rid])


@pytest.mark.usefixtures("few_groups_allowed")
def test_hand_checked_tiny_task(db):
    rid, qid = build(db)
    sp = S.set_split(db, "pt", 0.5, seed=0)
    out = P.propose(db, [rid], n_boot=100)
    assert [q["id"] for q in out["kept"]] == [qid["good"]]
    rules = {d["question"]["id"]: d["rule"] for d in out["dropped"]}
    assert rules == {qid["constant"]: "never varies", qid["copy"]: "near-copy",
                     qid["anti"]: "lowers dev agreement"}
    why = {d["question"]["id"]: d["reason"] for d in out["dropped"]}
    assert f"#{qid['good']}" in why[qid["copy"]] and "similarity" in why[qid["copy"]]
    assert "'yes' on all 16 valid dev answers" in why[qid["constant"]]
    assert out["weights"] is None and out["weights_reason"]
    # checkeval asks a sub-dimension's questions in one prompt: its only sub-dimension lost
    # questions, so a run of the revised version asks again once per item
    assert out["rerun"] == {**out["rerun"], "method": "checkeval", "judge_calls": 32,
                            "reused_answers": 0}
    for part in ("dev", "heldout"):
        f = out[part]
        assert (f["n_groups"], f["n_items"]) == (len(sp[part]), 4 * len(sp[part]))
        assert f["before"] == pytest.approx(_rho_by_hand(sp[part], HUMAN, list(TEXTS)))
        assert f["after"] == pytest.approx(1.0)
        assert f["delta"] == pytest.approx(1.0 - f["before"])
        assert f["ci"]["after"] == pytest.approx([1.0, 1.0])
        lo, hi = f["ci"]["before"]
        assert lo <= f["before"] <= hi and f["ci_reason"] is None


@pytest.mark.usefixtures("few_groups_allowed")
def test_split_discipline_heldout_scores_never_change_the_proposal(db_path, tmp_path):
    """The proposal is a function of dev evidence: reversing the held-out documents' human
    scores leaves kept / dropped / weights / dev figures unchanged and moves only the held-out
    figure."""
    from checkeval_core.store import open_db

    def run(human, path):
        d = open_db(path)
        rid, _ = build(d, human)
        S.set_split(d, "pt", 0.5, seed=0)
        out = P.propose(d, [rid], weights=True, n_boot=50, new_questions=2)
        sp = S.get_split(d, "pt")
        d.close()
        return out, sp

    a, sp = run(HUMAN, tmp_path / "a.db")
    flipped = {g: (hs[::-1] if g in sp["heldout"] else hs) for g, hs in HUMAN.items()}
    b, _ = run(flipped, tmp_path / "b.db")
    for key in ("kept", "dropped", "weights", "dev", "new_questions", "rerun"):
        assert a[key] == b[key], key
    assert a["heldout"]["after"] == pytest.approx(1.0)
    assert b["heldout"]["after"] == pytest.approx(-1.0)
    assert a["heldout"]["n_groups"] == b["heldout"]["n_groups"] == len(sp["heldout"])


@pytest.mark.usefixtures("few_groups_allowed")
def test_weights_are_non_negative_and_fitted_on_dev(db):
    rid, qid = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    out = P.propose(db, [rid], weights=True, n_boot=0)
    assert set(out["weights"]) == {str(q["id"]) for q in out["kept"]}
    assert all(w >= 0 for w in out["weights"].values())
    assert out["dev"]["ci_reason"] == "no interval: bootstrap switched off (0 resamples)"


def test_ranking_setting_fits_dev_systems_reports_heldout_systems(db):
    """Reference ratings and a split by system: questions are chosen on the dev systems'
    answers (labels: their ratings) and the held-out systems' ranking is reported."""
    from checkeval_core.annotation.preferences import import_ratings

    rid, qid = build(db)
    ratings = [{"system_id": s, "arena_elo": 1000 + 10 * k} for k, s in enumerate(SYSTEMS)]
    import_ratings(db, "pt", data=json.dumps(ratings).encode(), filename="r.json")
    db.execute("DELETE FROM human_score")
    sp = S.set_split(db, "pt", 0.5, seed=0)
    assert sp["systems"] is not None
    out = P.propose(db, [rid], n_boot=50)
    assert out["evidence"] == "reference_ratings" and out["setting"].startswith("ranking")
    assert out["dev"]["n_systems"] == len(sp["systems"]["dev"])
    assert out["heldout"]["n_systems"] == len(sp["systems"]["heldout"])
    assert out["dev"]["n_groups"] == len(GROUPS)
    assert "kendall" in out["heldout"]


def cli(db_path, *args):
    return run_cli(list(args), db=db_path)


@pytest.mark.usefixtures("few_groups_allowed")
def test_cli_propose_json_shape(db, db_path):
    rid, qid = build(db)
    r = cli(db_path, "checklist", "propose", "--run", str(rid), "--json")
    assert r.returncode == 2 and "checkeval split --task pt" in r.stderr
    S.set_split(db, "pt", 0.5, seed=0)
    r = cli(db_path, "checklist", "propose", "--run", str(rid), "--json", "--bootstrap", "30")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"kept", "dropped", "weights", "dev", "heldout"} <= set(out)
    assert out["weights"] is None
    assert all({"question", "reason"} <= set(d) for d in out["dropped"])
    for part in ("dev", "heldout"):
        assert {"before", "after", "n_groups", "ci"} <= set(out[part])
        assert out[part]["after"] == pytest.approx(1.0)
    r = cli(db_path, "checklist", "propose", "--run", str(rid), "--weights", "--bootstrap", "0")
    assert r.returncode == 0, r.stderr
    assert "held-out" in r.stdout and "dropped" in r.stdout
    r = cli(db_path, "checklist", "propose", "--run", "999")
    assert r.returncode == 2 and "no run 999" in r.stderr


@pytest.mark.usefixtures("few_groups_allowed")
def test_to_review_queues_the_proposal_and_review_undoes_it(db):
    from checkeval_core.checklists.review import decide

    rid, qid = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    out = P.propose(db, [rid], n_boot=0)
    res = to_review(db, out)
    assert res["queued"] == 3 and res["added"] == []
    st = dict(db.execute("SELECT id, status FROM question").fetchall())
    assert st[qid["good"]] == "kept"
    for n in ("constant", "copy", "anti"):
        assert st[qid[n]] == "proposed"
    reason = db.execute("SELECT reason FROM question WHERE id = ?", [qid["copy"]]).fetchone()[0]
    assert reason.startswith("proposal: drop") and "near-copy" in reason
    assert to_review(db, out)["queued"] == 3  # pressing twice changes nothing more
    decide(db, [qid["copy"]], "ann", "keep")
    assert db.execute("SELECT status FROM question WHERE id = ?",
                      [qid["copy"]]).fetchone()[0] == "kept"
    assert not math.isnan(out["heldout"]["after"])


def test_new_questions_are_costed_before_they_are_asked(db):
    """Without a judge only the plan and its cost; with the fake judge one question per
    planned dev disagreement, queued as proposed and marked as a proposal."""
    rid, qid = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    # make the kept question miss one dev document: its answers reversed there
    sp = S.get_split(db, "pt")
    g = sp["dev"][0]
    db.execute("UPDATE answer SET p_yes = 0.5 - p_yes WHERE question_id = ? AND item_id IN "
               "(SELECT id FROM item WHERE group_id = ?)", [qid["good"], g])
    plan = P.propose(db, [rid], n_boot=0, new_questions=2)["new_questions"]
    assert "questions" not in plan  # nothing asked without a judge
    assert plan["n"] >= 1 and plan["generation_calls"] == plan["n"]
    assert plan["judge_calls"] == plan["n"] * 32  # each new question on all 32 items
    assert all(s["group"] in sp["dev"] for s in plan["sources"])
    with pytest.raises(ProposalError, match="--new-questions"):
        P.propose(db, [rid], n_boot=0, judge="fake")
    out = P.propose(db, [rid], n_boot=0, new_questions=1, judge="fake")
    q = out["new_questions"]["questions"][0]
    assert q["problem"] is None and q["text"].startswith("Does the summary mention")
    res = to_review(db, out)
    assert len(res["added"]) == 1
    row = db.execute("SELECT status, origins, flags, reason FROM question WHERE id = ?",
                     [res["added"][0]]).fetchone()
    assert row[0] == "proposed" and "proposal" in row[1] and "proposal" in row[2]
    assert row[3].startswith("proposal: new")
    assert to_review(db, out)["added"] == []  # not added twice


def _with_votes(db):
    """The tiny task with a vote for the better human score in every pair of a document, split
    by document; returns (run id, question ids, split)."""
    from checkeval_core.annotation.preferences import import_preferences

    rid, qid = build(db)
    recs = [{"group_id": g, "item_a": f"{g}-{a}", "item_b": f"{g}-{b}",
             "winner": "a" if hs[a] > hs[b] else "b"}
            for g, hs in HUMAN.items() for a in range(4) for b in range(a + 1, 4)]
    import_preferences(db, "pt", data="\n".join(json.dumps(r) for r in recs).encode(),
                       filename="prefs.jsonl")
    return rid, qid, S.set_split(db, "pt", 0.5, seed=0, by_system=False)


@pytest.mark.usefixtures("few_groups_allowed")
def test_preferences_evidence_pair_accuracy_on_dev_pairs_only(db):
    """Pairwise votes (the better human score wins) as the evidence: the kept question orders
    every pair right (accuracy 1 on both parts); the pair counts are those of each part."""
    rid, qid, sp = _with_votes(db)
    out = P.propose(db, [rid], evidence="preferences", n_boot=50, tie_margin=0.05)
    assert out["evidence"] == "preferences" and out["weights"] is None
    assert qid["good"] in [q["id"] for q in out["kept"]]
    for part in ("dev", "heldout"):
        assert out[part]["after"] == pytest.approx(1.0)
        assert out[part]["n_groups"] == len(sp[part])
        assert out[part]["n_items"] == 4 * len(sp[part])
    # with the default margin 0.1, the pair 0.3 vs 0.2 (0.0999… apart) is a judge tie: a miss
    out = P.propose(db, [rid], evidence="preferences", n_boot=0)
    assert out["heldout"]["after"] == pytest.approx(5 / 6)
    with pytest.raises(ProposalError, match="--evidence"):
        P.propose(db, [rid], evidence="votes")


def test_weights_from_pairwise_votes_hand_computed(db):
    """Votes as the evidence: NNLS of the vote (±1) on the two answers' difference. With one
    question the fit is max(0, x·y / (x·x + λ)); a question against the votes gets 0."""
    rid, qid, sp = _with_votes(db)
    ev = load_evidence(db, [rid], "preferences")
    cols = [next(k for k, q in enumerate(ev.questions) if q["id"] == qid[n])
            for n in ("good", "anti")]
    w, why = fit_weights(ev, np.ones(len(ev.questions), bool))
    assert why is None and w[cols[1]] == 0 and w[cols[0]] > 0
    only = np.zeros(len(ev.questions), bool)
    only[cols[0]] = True
    w1, _ = fit_weights(ev, only)
    d = [abs(HUMAN[g][a] - HUMAN[g][b]) / 10 for g in sp["dev"] for a in range(4)
         for b in range(a + 1, 4)]
    assert w1[cols[0]] == pytest.approx(sum(d) / (sum(x * x for x in d) + 0.1 * len(d)))


def test_ranking_setting_on_the_alpacaeval_demo_per_query_checklists(db, monkeypatch):
    """The demo's per-query checklists, a fake rocketeval run, a split by system: per-query
    questions are chosen on the dev systems' answers to the same queries, the held-out
    systems are ranked, weights are refused with the reason, and a run of the revised
    version needs no judge call (one question per prompt)."""
    from checkeval_core.demo.instruction import TASK, load_instruction_demo
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path as path_of

    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "0")
    load_instruction_demo(db)
    rid = create_run(db, TASK, "fake", "rocketeval")
    execute_run(path_of(db), rid)
    sp = S.set_split(db, TASK, 0.5, seed=0)
    out = P.propose(db, [rid], weights=True, n_boot=50)
    assert out["setting"].startswith("ranking") and out["evidence"] == "reference_ratings"
    # per-query weights, fitted on the dev systems' answers to each query (RocketEval's
    # per-query predictor): non-negative, one per kept question
    assert out["weights"] is not None and out["weights_reason"] is None
    assert set(out["weights"]) == {str(q["id"]) for q in out["kept"]}
    assert min(out["weights"].values()) >= 0 and max(out["weights"].values()) > 0
    # held-out systems' ratings never reach the weights nor the selection
    held = sp["systems"]["heldout"]
    db.execute(f"UPDATE system_rating SET rating = 3000 - rating WHERE system_id IN "
               f"({','.join('?' * len(held))})", held)
    again = P.propose(db, [rid], weights=True, n_boot=50)
    assert again["weights"] == out["weights"] and again["kept"] == out["kept"]
    assert again["dev"]["after"] == pytest.approx(out["dev"]["after"])
    assert out["dev"]["n_systems"] == len(sp["systems"]["dev"]) == 6
    assert out["heldout"]["n_systems"] == len(sp["systems"]["heldout"]) == 6
    assert out["heldout"]["n_groups"] == 8 and out["heldout"]["n_items"] == 48
    assert not math.isnan(out["heldout"]["before"]) and "kendall" in out["heldout"]
    assert all(q.get("group_id") for q in out["kept"])
    # every query keeps at least one question
    assert len({q["group_id"] for q in out["kept"]}) == 8
    assert out["rerun"]["method"] == "rocketeval" and out["rerun"]["judge_calls"] == 0


@pytest.mark.usefixtures("few_groups_allowed")
def test_runs_are_checked_and_several_runs_are_averaged(db):
    from checkeval_core.store import now_iso, task_id

    rid, qid = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    tid = task_id(db, "pt")
    vid = db.execute("SELECT checklist_version_id FROM run WHERE id = ?", [rid]).fetchone()[0]

    def run(status="completed", method="checkeval", version=vid):
        return db.execute("INSERT INTO run (task_id, checklist_version_id, judge_spec, method, "
                          "status, created_at) VALUES (?, ?, 'fake', ?, ?, ?)",
                          [tid, version, method, status, now_iso()]).lastrowid

    with pytest.raises(ProposalError, match="is running"):
        P.propose(db, [rid, run(status="running")])
    with pytest.raises(ProposalError, match="geval"):
        P.propose(db, [run(method="geval")])
    db.execute("INSERT INTO checklist_version (task_id, version, hash, content, n_questions, "
               "created_at) VALUES (?, 2, 'h', '{}', 0, ?)", [tid, now_iso()])
    v2 = db.execute("SELECT id FROM checklist_version WHERE version = 2").fetchone()[0]
    with pytest.raises(ProposalError, match="one task and one checklist version"):
        P.propose(db, [rid, run(version=v2)])
    # a second run whose answers to the good question are all 0.5: averaged per item and
    # question, the good question still orders every document like the humans
    r2 = run()
    db.execute("INSERT INTO answer (run_id, item_id, question_id, dimension, verdict, p_yes, "
               "created_at) SELECT ?, item_id, question_id, dimension, verdict, CASE WHEN "
               "question_id = ? THEN 0.5 ELSE p_yes END, created_at FROM answer WHERE "
               "run_id = ?", [r2, qid["good"], rid])
    one, two = P.propose(db, [rid], n_boot=0), P.propose(db, [rid, r2], n_boot=0)
    assert two["runs"] == [rid, r2] and two["kept"] == one["kept"]
    assert two["heldout"]["after"] == pytest.approx(1.0)
    assert two["heldout"]["n_items"] == one["heldout"]["n_items"]


@pytest.mark.usefixtures("few_groups_allowed")
def test_rerun_cost_asks_the_registry_whether_a_method_groups_questions(db, monkeypatch):
    from dataclasses import replace

    from checkeval_core.runs import registry as REG

    rid, _ = build(db)
    S.set_split(db, "pt", 0.5, seed=0)
    grouped = P.propose(db, [rid], n_boot=20)["rerun"]
    assert REG.method("checkeval").grouped and grouped["judge_calls"] == 32
    # the same method declared one question per prompt: the kept questions' prompts are
    # unchanged, so nothing is asked again (no test of the method's name decides it)
    monkeypatch.setitem(REG.METHODS, "checkeval", replace(REG.METHODS["checkeval"],
                                                          grouped=False))
    single = P.propose(db, [rid], n_boot=20)["rerun"]
    assert single["judge_calls"] == 0 and single["reused_answers"] > 0
    assert "asked again" not in single["note"]
