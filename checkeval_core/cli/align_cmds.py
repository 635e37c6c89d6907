"""CLI for per-question agreement with people (``questions``) and the benchmark of the
human-calibrated estimate (``bench calibrate``)."""

from __future__ import annotations

import json

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.stats.values import fmt
from checkeval_core.store import NotFound


@app.command("questions")
def questions_cmd(run: int = typer.Option(..., "--run", help="RUN_ID"),
                  split: str = typer.Option("dev", "--split", help="dev | heldout | all (a "
                                            "task without a split reads all groups)"),
                  bootstrap: int = typer.Option(200, "--bootstrap", help="resamples of groups "
                                                "for the intervals"),
                  as_json: bool = typer.Option(False, "--json")) -> None:
    """Per question: agreement, κ, φ, false-positive / false-negative rates and the κ–φ gap
    against people's answers (each with its interval or reason), confusion, yes-rate, system pairs
    separated, leave-one-out effect on the version's agreement with people's totals.

    Compares a run's Yes/No answers with people's answers to the same questions
    (annotation jobs on the run's checklist version; the Align page draws the
    sample), per question on the chosen part of the task's split (default `dev`; a
    task without a split reads all groups and `split.which` says `all`). `--json`
    prints `{"run", "task", "version", "judge", "method", "split": {"which",
    "asked", "n_groups", …}, "headline": {"agreement", "ci", "n", "n_groups",
    "kappa", "ci_reason", "text"}, "human_answers": {"n_answers", "n_items",
    "jobs", "how_to_start"}, "loo": {"statistic", "evidence", "part", "value",
    "n_items", "n_groups", "n_systems", "reason"}, "questions": [...]}`; each
    question has `question_id`, `text`, `dimension`, `n` (decisions with a judge
    verdict and a people's majority), `agreement` and its `ci`, `kappa` and
    `kappa_ci`, `phi` (Matthews), `fpr` and `fnr` (the judge's false-positive and
    false-negative rates against people) and `kappa_phi_gap` (φ − κ), each with
    `_ci` and `_reason` (`phi_ci`, `phi_reason`, …), `confusion` (`{"yes/yes",
    "yes/no", "no/yes", "no/no"}`: judge / people), `reason` / `ci_reason` where a
    value or an interval is missing, `agreement_consensus` / `n_consensus` (items
    where ≥ 2 annotators all agreed), `agreement_split` / `n_split` (annotators
    disagreed, a majority decided), `disagreements` (up to 20 `{"item_pk",
    "item_id", "judge", "human"}`), `yes_rate`, `n_answers`, `saturated` (`"always
    yes"` ≥ 0.95, `"always no"` ≤ 0.05, else null), `separates` / `n_pairs`
    (system pairs whose Yes counts differ, Fisher p < 0.05), `loo_delta`,
    `loo_ci`, `loo_reason`. Without people's answers every agreement figure is
    null with its reason and `human_answers.how_to_start` says how to start a
    sample; yes-rate, separation and the leave-one-out effect (against the task's
    human scores, ratings or votes) are still there. `--split` other than dev /
    heldout / all, or an unknown run: exit 2.

    Needs a run of a method with one verdict per question (`checkeval`,
    `rocketeval`) that has answers: a G-Eval or SEAL run, or a pending one, is
    refused (exit 2).
    """
    from checkeval_core.analysis.align import question_agreement
    from checkeval_core.runs.options import check_bootstrap
    from checkeval_core.store import open_db
    from checkeval_core.task_split import WHICH

    if split not in WHICH:
        fail(f"--split {split!r}: use dev, heldout or all")
    try:
        check_bootstrap(bootstrap)
        _check_question_run(open_db(), run)
        out = clean_json(question_agreement(open_db(), run, split, n_boot=bootstrap))
    except (NotFound, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(out))
        return
    sp = out["split"]
    from checkeval_core.runs.labels import run_label

    label = run_label({"run": run, "version": out["version"], "judge": out["judge"],
                       "method": out["method"]})
    typer.echo(f"run {label} — {sp['which']} ({sp['n_groups']} groups): "
               f"{out['headline']['text']}")
    if out["human_answers"]["how_to_start"]:
        typer.echo(out["human_answers"]["how_to_start"])
    loo = out["loo"]
    typer.echo(f"leave-one-out on {loo['part']}: "
               + (f"{loo['statistic']} = {_n(loo['value'])}" if loo["statistic"]
                  else loo["reason"]))
    for q in out["questions"]:
        agree, kappa = _n(q["agreement"]), _n(q["kappa"])
        sat = f" ({q['saturated']})" if q["saturated"] else ""
        typer.echo(f"#{q['question_id']:<5} {q['dimension'] or '':>12} n={q['n']:<4} "
                   f"agree={agree} κ={kappa} φ={_n(q['phi'])} FPR={_n(q['fpr'])} "
                   f"FNR={_n(q['fnr'])} yes={_n(q['yes_rate'])}{sat} "
                   f"separates {q['separates']}/{q['n_pairs']} LOO Δ={_n(q['loo_delta'], 3)}  "
                   f"{q['text'][:60]}")


def _check_question_run(db: object, run: int) -> None:
    """``questions`` reads one Yes/No verdict per question: a run of another method, or one
    with no answer yet, is refused naming why (ValueError / NotFound)."""
    from checkeval_core.runs.jobs import get_run
    from checkeval_core.runs.registry import method, per_question_methods

    r = get_run(db, run)
    if not method(r["method"]).per_question:
        raise ValueError(f"--run {run}: method {r['method']} gives no verdict per checklist "
                         f"question; use a run of {' or '.join(per_question_methods())}")
    if not r["n_answers"]:
        raise ValueError(f"--run {run} is {r['status']} and has no answer yet; run it first "
                         f"(checkeval run --resume {run})")


@app.command("reword")
def reword_cmd(run: int = typer.Option(..., "--run", help="RUN_ID"),
               question: int = typer.Option(..., "--question", help="QUESTION_ID"),
               judge: str = typer.Option("embedded", "--judge", help="writes the rewording "
                                         "and answers both wordings"),
               bootstrap: int = typer.Option(200, "--bootstrap"),
               as_json: bool = typer.Option(False, "--json")) -> None:
    """Propose a rewording of a question from its false positives and false negatives on dev
    items (people's answers vs the run's); both wordings answered by the judge on every item
    people labelled; agreement on dev, Δ on held-out with its verdict; queued for review as an
    edit (the old question stays).

    `--json` prints `{"question_id", "old_text", "new_text", "new_question",
    "created", "flags", "false_positives", "false_negatives" ([{"item_pk",
    "item_id", "output"}]), "dev": {"old", "new"} (each `{"value", "ci", "reason",
    "n_groups"}`), "heldout": {"old", "new", "delta", "ci", "ci_reason", "mde",
    "verdict", "n_groups", "n_items"}, "requests", "from_cache"}`. No split, no
    disagreement on dev or an unreadable answer: exit 2, nothing written.
    """
    from checkeval_core.analysis.reword import propose_rewording
    from checkeval_core.judges.spec import JudgeSpecError, parse_spec
    from checkeval_core.runs.options import check_bootstrap
    from checkeval_core.store import open_db

    try:
        check_bootstrap(bootstrap)
        parse_spec(judge)
        r = clean_json(propose_rewording(open_db(), run, question, judge, n_boot=bootstrap))
    except (NotFound, JudgeSpecError, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(r, ensure_ascii=False))
        return
    h = r["heldout"]
    typer.echo(f"#{r['new_question']} proposed for review: {r['new_text']}\n"
               f"dev agreement {_n(r['dev']['old']['value'])} → {_n(r['dev']['new']['value'])}; "
               f"held-out {_n(h['old'])} → {_n(h['new'])} ({h['n_items']} items, "
               f"{h['n_groups']} groups): {h['verdict']}")


def _n(x: float | None, digits: int = 2) -> str:
    return fmt(x, digits)
