"""Reliability of each question across prompt wordings, and the bias probes (length
correlation, verbosity): values computed by hand, the refusals, the ``phrasing`` run option and
the CLI's JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from checkeval_core.analysis.bias import (
    PAD_LEAD,
    VERBOSITY_MARGIN,
    length_bias,
    pad_output,
    probe_items,
    verbosity_cost,
    verbosity_probe,
)
from checkeval_core.analysis.reliability import (
    RunSetError,
    diagnostics_columns,
    reliability,
    reliability_sets,
    unreliable_questions,
)
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze, get_version
from checkeval_core.cli import app
from checkeval_core.datasets import import_file
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.fake import FakeJudge, fake_p_yes
from checkeval_core.prompts.judge import BINARY_PHRASINGS, binary_request_for_item
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.jobs import get_run as get_run_row
from checkeval_core.runs.options import check_params, parse_params
from checkeval_core.runs.score_write import compute_scores
from checkeval_core.stats import bootstrap
from checkeval_core.store import db_path, now_iso
from checkeval_core.tasks import items
from tests.helpers import make_runs_task

# eight outputs of 2..9 words; none contains "words" (the verbosity question's only
# content word), so only the padding's "In other words:" can add it
OUTPUTS = ["Council approves.", "The council approved.", "The council approved parks.",
           "The town council approved parks.", "The town council approved a park.",
           "The town council approved a new park.",
           "The town council approved a new park. Nice.",
           "The town council approved a new park. Work starts."]
ROWS = [{"id": f"i{k}", "group_id": f"d{k // 4}", "system_id": f"s{k % 4}",
         "source": "The council of the town approved a new park. Work starts in May.",
         "output": o, "scores": {"fluency": float(k % 5)}} for k, o in enumerate(OUTPUTS)]
QA, QB, QC = ("Is the summary grammatical?", "Does the summary mention the council?",
              "Is the summary short and clear?")
CHECKLIST = {"fluency": {"definition": "grammar and wording", "sub_dimensions": {
    "Grammar": {"seed": [QA, QB, QC]}}}}


@pytest.fixture
def task(db, tmp_path):
    return make_runs_task(db, tmp_path, ROWS, CHECKLIST)


def qids(db) -> dict[str, int]:
    return {q["text"]: q["id"] for q in get_version(db, "t")["content"]["questions"]}


def pks(db) -> list[int]:
    return [i["id"] for i in items(db, "t")]


def stored_run(db, answers: dict[tuple[str, int], tuple[str, float | None]],
               method: str = "rocketeval", judge: str = "fake", **params) -> int:
    """A completed run whose answers are exactly ``answers``: (question, item index) →
    (verdict, p_yes)."""
    rid = create_run(db, "t", judge, method, params=params)
    q, p = qids(db), pks(db)
    for (text, k), (verdict, p_yes) in answers.items():
        db.execute("INSERT INTO answer (run_id, item_id, question_id, unit, dimension, verdict, "
                   "p_yes, mode, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                   [rid, p[k], q[text], "", "fluency", verdict, p_yes,
                    "text" if p_yes is None else "logprob", now_iso()])
    compute_scores(db, rid)
    db.execute("UPDATE run SET status = 'completed' WHERE id = ?", [rid])
    return rid


# -- reliability ----------------------------------------------------------------------------
# question A (with p(Yes)) on items 0-3 in three wordings; item 3 is invalid in run 2
A = [[("yes", .9), ("yes", .8), ("no", .2), ("no", .4)],
     [("yes", .7), ("no", .3), ("no", .1), ("invalid", None)],
     [("yes", .8), ("yes", .6), ("no", .3), ("no", .45)]]
# question B (text answers: no p(Yes)) on items 0-3
B = [["yes", "no", "yes", "yes"], ["yes", "no", "no", "yes"], ["yes", "no", "no", "yes"]]


@pytest.fixture
def rel_runs(db, task):
    ids = []
    for r in range(3):
        ans = {(QA, k): A[r][k] for k in range(4)}
        ans.update({(QB, k): (B[r][k], None) for k in range(4)})
        ids.append(stored_run(db, ans, phrasing=r))
    return ids


@pytest.mark.usefixtures("few_groups_allowed")
def test_flip_rate_and_sd_by_hand(db, rel_runs):
    res = reliability(db, rel_runs)
    by = {q["question"]: q for q in res["questions"]}
    a, b = by[QA], by[QB]
    # A: item 3 left out (invalid in one run); item 1 flips (yes/no/yes) → 1 of 3
    assert (a["n_items"], a["n_invalid"], a["n_flips"]) == (3, 1, 1)
    assert a["flip_rate"] == pytest.approx(1 / 3)
    # pooled within-item SD: item variances (ddof 1) .01, .063333, .01 → sqrt(mean) = 1/6
    assert a["p_yes_sd"] == pytest.approx(1 / 6)
    # B: 1/0 values; item 2 flips (yes/no/no, variance 1/3) → flip 1/4, sd sqrt(1/12)
    assert (b["n_items"], b["n_flips"]) == (4, 1)
    assert b["flip_rate"] == pytest.approx(0.25)
    assert b["p_yes_sd"] == pytest.approx(math.sqrt(1 / 12))
    assert b["yes_rate"] == pytest.approx(7 / 12)
    lo, hi = a["flip_rate_ci"]
    assert lo < 1 / 3 < hi and 0 <= lo and hi <= 1
    assert a["p_yes_sd_ci"][0] <= 1 / 6 <= a["p_yes_sd_ci"][1]
    # the set: 2 flips in 7 counted (item, question) pairs; QC was never asked
    s = res["summary"]
    assert (s["n_pairs"], s["n_items"]) == (7, 4)
    assert s["flip_rate"] == pytest.approx(2 / 7)
    assert s["p_yes_sd"] == pytest.approx(math.sqrt((.01 + .19 / 3 + .01 + 1 / 3) / 7))
    assert s["flip_rate_ci"][0] < 2 / 7 < s["flip_rate_ci"][1]
    assert (res["n_runs"], res["n_items"], [r["phrasing"] for r in res["runs"]]) == \
        (3, 8, [0, 1, 2])
    assert [q["question"] for q in res["questions"]] == [QA, QB]  # highest flip rate first


def test_unreliable_questions_threshold(db, rel_runs, monkeypatch):
    # the fixture's items come from one document: the flag's group minimum set to 1 here
    monkeypatch.setattr(bootstrap, "MIN_GROUPS", 1)
    res = reliability(db, rel_runs)
    assert [q["question"] for q in unreliable_questions(res)] == [QA, QB]  # default 0.10
    assert [q["question"] for q in unreliable_questions(res, max_flip=0.3)] == [QA]
    assert unreliable_questions(res, max_flip=0.5) == []
    assert res["summary"]["n_unreliable"] == 2
    assert reliability_sets(db, "t") == [rel_runs]
    cols = diagnostics_columns(res)
    assert cols[qids(db)[QB]]["flip_rate"] == pytest.approx(0.25)
    assert cols[qids(db)[QA]]["n_items"] == 3 and cols[qids(db)[QA]]["unreliable"]


@pytest.mark.usefixtures("few_groups_allowed")
def test_set_without_flips_still_has_an_interval(db, task):
    ids = [stored_run(db, {(QA, k): ("yes", .9) for k in range(5)}, phrasing=r)
           for r in range(2)]
    s = reliability(db, ids)["summary"]
    assert s["flip_rate"] == 0 and s["flip_rate_ci"][0] == 0 and s["flip_rate_ci"][1] > 0.2
    assert s["flip_rate_ci_method"].startswith("Wilson")


def test_no_counted_item_has_a_reason(db, task):
    ids = [stored_run(db, {(QA, 0): ("invalid" if r == 0 else "yes", None)}, phrasing=r)
           for r in range(2)]
    res = reliability(db, ids)
    q = res["questions"][0]
    assert q["flip_rate"] is None and q["n_invalid"] == 1
    assert "no item has a Yes/No answer in all 2 runs" in q["reason"]
    assert res["summary"]["flip_rate"] is None and res["summary"]["reason"]
    assert unreliable_questions(res) == []


def test_refuses_runs_that_are_not_a_set(db, task):
    ok = {(QA, 0): ("yes", .9)}
    r0 = stored_run(db, ok, phrasing=0)
    cases = [
        (stored_run(db, ok, method="checkeval", phrasing=1), "different methods"),
        (stored_run(db, ok, judge="embedded", phrasing=1), "different judges"),
        (stored_run(db, ok, phrasing=0), "same wording"),
        (stored_run(db, ok, phrasing=1, include_definition=True), "differ in include_definition"),
    ]
    for other, msg in cases:
        with pytest.raises(RunSetError, match=msg):
            reliability(db, [r0, other])
    with pytest.raises(RunSetError, match="at least two runs"):
        reliability(db, [r0])
    with pytest.raises(RunSetError, match="given twice"):
        reliability(db, [r0, r0])
    pending = create_run(db, "t", "fake", "rocketeval", params={"phrasing": 1})
    with pytest.raises(RunSetError, match="pending, not completed"):
        reliability(db, [r0, pending])
    # another checklist version
    db.execute("UPDATE question SET status = 'rejected' WHERE text = ?", [QC])
    freeze(db, "t")
    other_version = stored_run(db, ok, phrasing=1)
    with pytest.raises(RunSetError, match="different checklist versions"):
        reliability(db, [r0, other_version])


def test_phrasing_option_changes_the_prompt_and_is_not_served_from_cache(db, task):
    it = items(db, "t")[0]
    reqs = [binary_request_for_item(it, QA, "summarization", phrasing=k)
            for k in range(len(BINARY_PHRASINGS))]
    assert binary_request_for_item(it, QA, "summarization") == reqs[0]  # 0 is the default
    assert len({json.dumps(r.cache_payload()) for r in reqs}) == len(reqs)
    judge = CachedJudge(FakeJudge(), db=db)
    r0 = create_run(db, "t", "fake", "rocketeval")
    execute_run(db_path(db), r0, judge=judge)
    asked = judge.n_requests
    assert asked == 8 * 3
    r1 = create_run(db, "t", "fake", "rocketeval", params={"phrasing": 1})
    execute_run(db_path(db), r1, judge=judge)
    assert judge.n_requests == 2 * asked  # every request asked afresh
    r2 = create_run(db, "t", "fake", "rocketeval", params={"phrasing": 0})
    execute_run(db_path(db), r2, judge=judge)
    assert judge.n_requests == 2 * asked  # phrasing=0 is the default prompt: all cached
    res = reliability(db, [r0, r1])
    # the fake judge's p(Yes) hashes the prompt's prefix: the answers differ between wordings
    assert res["summary"]["p_yes_sd"] > 0
    # and one stored answer equals the fake judge's rule applied to the reworded prompt
    q = qids(db)[QA]
    p1 = db.execute("SELECT p_yes FROM answer WHERE run_id = ? AND item_id = ? AND "
                    "question_id = ?", [r1, it["id"], q]).fetchone()[0]
    assert p1 == fake_p_yes(QA, reqs[1].prefix)


def test_phrasing_option_is_checked():
    assert parse_params(["phrasing=2"]) == {"phrasing": 2}
    with pytest.raises(ValueError, match="expected int"):
        parse_params(["phrasing=true"])
    with pytest.raises(ValueError, match="phrasings 0 to 3"):
        check_params("rocketeval", {"phrasing": 4})
    with pytest.raises(ValueError, match="one wording only"):
        check_params("seal", {"phrasing": 1})
    check_params("checkeval", {"phrasing": 3})


# -- length correlation ----------------------------------------------------------------------
LEN_A = [.1, .2, .3, .5, .4, .6, .8, .7]  # ranks 1 2 3 5 4 6 8 7 against lengths 2..9
LEN_C = [.5, .1, .6, .2, .7, .3, .4]      # item 7 invalid


@pytest.fixture
def len_run(db, task):
    ans = {(QA, k): ("yes" if v >= .5 else "no", v) for k, v in enumerate(LEN_A)}
    ans.update({(QB, k): ("yes", None) for k in range(8)})
    ans.update({(QC, k): ("yes" if v >= .5 else "no", v) for k, v in enumerate(LEN_C)})
    ans[(QC, 7)] = ("invalid", None)
    return stored_run(db, ans)


def spearman_by_hand(d: list[int]) -> float:
    n = len(d)
    return 1 - 6 * sum(x * x for x in d) / (n * (n * n - 1))


def test_length_correlation_by_hand(db, len_run, monkeypatch):
    monkeypatch.setattr(bootstrap, "MIN_GROUPS", 1)  # the fixture's items: two documents
    assert [len(o.split()) for o in OUTPUTS] == list(range(2, 10))
    res = length_bias(db, len_run)
    by = {q["question"]: q for q in res["questions"]}
    a, b, c = by[QA], by[QB], by[QC]
    rho_a = spearman_by_hand([0, 0, 0, 1, -1, 0, 1, -1])  # = 1 - 24/504
    assert a["rho"] == pytest.approx(rho_a) and a["n"] == 8
    se = math.sqrt((1 + rho_a ** 2 / 2) / 5)
    assert a["ci"] == pytest.approx([math.tanh(math.atanh(rho_a) - 1.959964 * se),
                                     math.tanh(math.atanh(rho_a) + 1.959964 * se)])
    assert a["flagged"] and a["ci"][0] > 0
    assert b["rho"] is None and not b["flagged"]
    assert b["reason"] == "every answer is Yes on the 8 items: no variation to correlate"
    rho_c = spearman_by_hand([4, -1, 3, -2, 2, -3, -3])  # ranks 5 1 6 2 7 3 4 vs 1..7
    assert c["rho"] == pytest.approx(rho_c) == pytest.approx(1 / 14)
    assert c["n"] == 7 and not c["flagged"]
    assert res["n_flagged"] == 1 and res["n_items"] == 8
    # per dimension: the run's primary score (mean p(Yes), B counting 1) against length
    dim = res["dimensions"][0]
    means = [np.mean([LEN_A[k], 1.0] + ([LEN_C[k]] if k < 7 else [])) for k in range(8)]
    from scipy.stats import spearmanr

    assert dim["aggregation"] == "mean_p_yes" and dim["n"] == 8
    assert dim["rho"] == pytest.approx(spearmanr(means, range(8)).statistic)


def test_length_correlation_undefined_reasons():
    from checkeval_core.analysis.bias import spearman_entry

    assert spearman_entry([1.0, 0.0], [3, 4])["reason"] == "only 2 answered item(s): needs ≥ 3"
    assert "same length (5 words)" in spearman_entry([1.0, 0.0, 1.0], [5, 5, 5])["reason"]
    e = spearman_entry([0.0, 1.0, 0.5], [1, 2, 3])
    assert e["rho"] == pytest.approx(0.5) and e["ci"] is None and "≥ 4" in e["reason"]


# -- verbosity probe -------------------------------------------------------------------------
QW = "Are the words apt?"  # one content word (4+ letters, not a stop word): "words"


@pytest.fixture
def probe_task(db, tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    import_file(db, p, "t", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"fluency": {"definition": "wording", "sub_dimensions": {
        "Wording": {"seed": [QW, QB]}}}}))
    import_checklist(db, "t", c)
    freeze(db, "t")
    rid = create_run(db, "t", "fake", "rocketeval")
    assert execute_run(db_path(db), rid)["status"] == "completed"
    return rid


def test_pad_output_rule():
    assert pad_output("First point here. Second point, said Dr. Smith.") == (
        "First point here. Second point, said Dr. Smith.\n\n" + PAD_LEAD +
        "First point here. Second point, said Dr. Smith.")
    assert pad_output("  two\n lines  ") == "  two\n lines\n\n" + PAD_LEAD + "two lines"
    assert pad_output("   ") is None


def test_verbosity_probe_flags_a_question_padding_helps(db, probe_task):
    run = get_run_row(db, probe_task)
    sample = probe_items(db, run, 6)
    assert len(sample) == 6 and sample == probe_items(db, run, 6)  # fixed sample
    cost = verbosity_cost(db, probe_task, n_items=6)
    assert {k: cost[k] for k in ("n_items", "n_requests", "n_calls", "calls")} == \
        {"n_items": 6, "n_requests": 12, "n_calls": 12, "calls": 12}
    res = verbosity_probe(db, probe_task, n_items=6)
    assert (res["n_items"], res["n_requests"], res["n_calls"]) == (6, 12, 12)
    by = {q["question"]: q for q in res["questions"]}
    # the fake judge's rule, applied by hand to the original and the padded prompts
    orig = [fake_p_yes(QW, binary_request_for_item(it, QW, "summarization").prefix)
            for it in sample]
    pad = [fake_p_yes(QW, binary_request_for_item(dict(it, output=pad_output(it["output"])),
                                                  QW, "summarization").prefix) for it in sample]
    w = by[QW]
    assert w["n"] == 6
    assert w["yes_original"] == pytest.approx(np.mean(orig))
    assert w["yes_padded"] == pytest.approx(np.mean(pad))
    assert w["delta"] == pytest.approx(np.mean(pad) - np.mean(orig))
    # "words" now occurs in the text: overlap 0 → 1, p(Yes) + 0.5 before the hash term
    assert w["delta"] > VERBOSITY_MARGIN and w["delta_ci"][0] > 0 and w["flagged"]
    assert w["share_yes_padded"] >= w["share_yes_original"]
    assert not by[QB]["flagged"]  # padding adds no content word of this one
    assert res["n_flagged"] == 1
    # everything is cached: a rerun asks nothing and gives the same result
    assert verbosity_cost(db, probe_task, n_items=6)["n_calls"] == 0
    again = verbosity_probe(db, probe_task, n_items=6)
    assert again["n_calls"] == 0 and again["questions"] == res["questions"]


class _Dies(FakeJudge):
    """Fails after ``n`` answers: a probe killed midway."""

    def __init__(self, n: int):
        super().__init__()
        self.left = n

    def binary(self, requests):
        if self.left <= 0:
            raise RuntimeError("killed")
        self.left -= len(requests)
        return super().binary(requests)


def test_verbosity_probe_resumes(db, probe_task):
    with pytest.raises(RuntimeError, match="killed"):
        verbosity_probe(db, probe_task, n_items=6, judge=CachedJudge(_Dies(5), db=db))
    assert verbosity_cost(db, probe_task, n_items=6)["n_calls"] == 12 - 5
    assert verbosity_probe(db, probe_task, n_items=6)["n_calls"] == 7


def test_probe_refusals(db, probe_task):
    with pytest.raises(ValueError, match="positive number"):
        verbosity_probe(db, probe_task, n_items=0)
    seal = create_run(db, "t", "fake", "seal", limit=1)
    execute_run(db_path(db), seal)
    with pytest.raises(ValueError, match="no per-question answers"):
        verbosity_cost(db, seal)
    assert get_run(db, seal)["status"] == "completed"
    assert length_bias(db, seal)["questions_reason"].startswith("method seal")


# -- CLI ---------------------------------------------------------------------------------------
def test_cli_reliability_json(db, rel_runs, monkeypatch):
    monkeypatch.setattr(bootstrap, "MIN_GROUPS", 1)  # one document (see above)
    args = ["reliability", *sum((["--run", str(r)] for r in rel_runs), []), "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["n_runs"] == 3 and out["n_items"] == 8
    q = out["questions"][0]
    assert {"question_id", "question", "flip_rate", "p_yes_sd", "n_items"} <= set(q)
    assert q["question"] == QA and q["flip_rate"] == pytest.approx(1 / 3)
    text = CliRunner().invoke(app, args[:-1])
    assert text.exit_code == 0 and "UNRELIABLE" in text.output


def test_cli_reliability_refuses_mixed_runs(db, rel_runs):
    other = stored_run(db, {(QA, 0): ("yes", .5)}, method="checkeval", phrasing=3)
    res = CliRunner().invoke(app, ["reliability", "--run", str(rel_runs[0]), "--run",
                                   str(other)])
    assert res.exit_code == 2
    assert "different methods (rocketeval vs checkeval)" in res.output
    res = CliRunner().invoke(app, ["reliability", "--run", str(rel_runs[0]), "--run", "999"])
    assert res.exit_code == 2 and "no run 999" in res.output


def test_cli_bias_json(db, len_run, monkeypatch):
    monkeypatch.setattr(bootstrap, "MIN_GROUPS", 1)  # two documents (see above)
    res = CliRunner().invoke(app, ["bias", "--run", str(len_run), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    by = {q["question"]: q for q in out["questions"]}
    assert by[QA]["flagged"] and by[QB]["rho"] is None and by[QB]["reason"]
    assert out["dimensions"][0]["n"] == 8


def test_cli_probe_verbosity_json(db, probe_task):
    est = CliRunner().invoke(app, ["probe", "verbosity", "--run", str(probe_task), "--items",
                                   "6", "--estimate", "--json"])
    assert est.exit_code == 0, est.output
    out = json.loads(est.output)
    assert {k: out[k] for k in ("n_items", "n_requests", "n_calls", "calls", "usd")} == \
        {"n_items": 6, "n_requests": 12, "n_calls": 12, "calls": 12, "usd": 0}
    res = CliRunner().invoke(app, ["probe", "verbosity", "--run", str(probe_task), "--items",
                                   "6", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["n_items"] == 6 and out["n_calls"] == 12
    w = {q["question"]: q for q in out["questions"]}[QW]
    assert {"question_id", "question", "yes_original", "yes_padded", "delta",
            "flagged"} <= set(w) and w["flagged"]
    bad = CliRunner().invoke(app, ["probe", "verbosity", "--run", str(probe_task), "--items",
                                   "0"])
    assert bad.exit_code == 2 and "positive number" in bad.output


def test_no_length_flag_from_two_documents(db, len_run):
    """The small-sample rule at its real value: the same run, two documents, flags nothing."""
    res = length_bias(db, len_run)
    assert res["n_groups"] == 2 and res["n_flagged"] == 0
    assert not any(q["flagged"] for q in res["questions"] + res["dimensions"])
    assert res["flag_reason"] == (f"no flag: the run's items come from 2 groups, fewer than "
                                  f"the {bootstrap.MIN_GROUPS} a flag needs")
