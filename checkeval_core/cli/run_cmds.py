"""CLI for runs: ``run`` (new or ``--resume``) and ``bench scale``."""

from __future__ import annotations

import json
from typing import Any

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.store import NotFound, db_path, open_db


def _method_help() -> str:
    from checkeval_core.runs.registry import METHODS

    return "|".join(METHODS) + " (repeat for several)"


@app.command("run")
def run_cmd(task: str | None = typer.Option(None, "--task"),
            judge: list[str] = typer.Option(["embedded"], "--judge",
                                            help="judge spec (repeat for several)"),
            method: list[str] = typer.Option(["rocketeval"], "--method", help=_method_help()),
            checklist: str = typer.Option("latest", "--checklist", help="version N or latest"),
            limit: int | None = typer.Option(None, "--limit", help="first N items"),
            resume: int | None = typer.Option(None, "--resume", help="RUN_ID to resume"),
            param: list[str] | None = typer.Option(
                None, "--param", help="run option KEY=VALUE (repeat): include_definition, "
                                      "include_reference, aggregation, seal_units, ..."),
            escalate_to: str | None = typer.Option(
                None, "--escalate-to", help="a second judge asked whatever --judge is unsure "
                                            "of (see --target-agreement / --margin)"),
            target_agreement: float | None = typer.Option(
                None, "--target-agreement", help="fit the confidence threshold on dev groups "
                "so the first judge's kept answers agree with people at least this often"),
            margin: float | None = typer.Option(
                None, "--margin", help="a fixed confidence threshold instead: |p(Yes) − 0.5| "
                                       "(answers) or the score gap (pairs)"),
            delta: float = typer.Option(0.1, "--delta", help="the guarantee holds with "
                                        "probability 1 − delta"),
            abstain: bool = typer.Option(False, "--abstain", help="'not decidable' where even "
                                         "the second judge is unsure"),
            calibrate_judges: bool = typer.Option(
                False, "--calibrate-judges", help="fit each judge's p(Yes) to people's labels "
                "on dev answers (Platt): the first judge's confidence reads through its fit, "
                "and the scores mix the two judges' answers on one scale"),
            batch_out: str | None = typer.Option(None, "--batch-out", help="DIR: write the "
                                                 "pending requests as OpenAI batch files"),
            shards: int = typer.Option(1, "--shards", help="--batch-out: at least N files"),
            batch_in: bool = typer.Option(False, "--batch-in", help="store result FILEs"),
            batch: bool = typer.Option(False, "--batch", help="the provider's Batch API"),
            files: list[str] | None = typer.Argument(None, metavar="[FILE]..."),
            engine: str = typer.Option("local", "--engine", help="local | ray: the items "
                                       "answered by judge workers on a Ray cluster"),
            ray_address: str | None = typer.Option(None, "--ray-address", help="the Ray "
                                                   "cluster (default: start a local one)"),
            workers: int | None = typer.Option(None, "--workers", help="Ray workers, one judge "
                                               "each (default: one per CPU, per GPU for vllm:)"),
            escalate_by: str | None = typer.Option(
                None, "--escalate-by", help="answer (default) | item: all of an item's "
                "questions go to the second judge when the first is unsure of its score"),
            as_json: bool = typer.Option(False, "--json"),
            quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
            estimate: bool = typer.Option(
                False, "--estimate", help="only print what the run(s) would cost (calls, "
                                          "cached, tokens, seconds, usd); ask no judge, "
                                          "write nothing")) -> None:
    r"""Run an evaluation headless (or resume one); progress on stderr. Several --judge and
    --method start one run per judge × method (all or none), executed one after the other.

    Prints `run <ID> started` first on stderr, a progress bar on stderr, and with
    `--json` exactly `{"run": ID, "status": "completed"|"failed"|…, "n_answers":
    N}` on stdout. Several `--judge` and/or `--method` create one run per judge ×
    method (the Run page's batch, same core function), all or none: a bad spec,
    method or option refuses the whole batch (exit 2, nothing created); they are
    then executed one after the other, and `--json` prints a list of those
    objects. Exit 1 when the run fails: a run whose share of answers with a judge
    error (transport/HTTP failures, not unparsable answers) exceeds
    `max_error_share` (default 0.5; `--param max_error_share=0.2` or
    `$CHECKEVAL_MAX_ERROR_SHARE`) ends `failed` without scores. `--resume` re-asks
    the answers that had a judge error (errors are never cached) and keeps
    unparsable ones (they are answers).

    Ways of running: `--estimate` (the cost of the runs these options would start,
    or with `--resume RUN_ID` what that run still has to ask; asks no judge,
    writes nothing); `--batch-out DIR` (the runs' pending requests as OpenAI batch
    files, asking nothing — `--json`: `{"run", "files", "requests"}`; with
    `--resume RUN_ID` what that run still needs, a later pass); `--resume RUN_ID
    --batch-in FILE…` (store result files — `--json`: `{"run", "stored",
    "skipped", "failed", "pending", "status", "errors"}`); `--batch` (`openai:` /
    `openai-compat:` judges through the provider's Batch API: upload, create,
    poll, download, store); `--engine ray` (items answered by judge workers on a
    Ray cluster, `docs/scaling.md`).

    `--engine ray` needs the optional extra (`pip install -e '.\[scale]'`);
    without it, or with `--workers` < 1, more workers than the cluster has CPUs
    (GPUs for `vllm:`), a cluster that cannot be reached, or
    `--ray-address`/`--workers` without `--engine ray`, the command exits 2 before
    any run is created or judge asked. The engine is not stored on the run: a
    resume runs locally unless given `--engine ray` again (the answers are the
    same either way).

    `--estimate` checks every option as a real start does (exit 2 on a bad judge
    spec, method, option or a malformed `CHECKEVAL_PRICES`), then prints one line
    (calls, tokens, time, money, and notes saying where each figure comes from)
    or, with `--json`, exactly `{"calls", "cached", "prompt_tokens",
    "completion_tokens", "seconds", "usd"}` summed over every judge × method:
    `calls` the requests the judge would really receive (planned requests minus
    those whose deterministic request id is already in the response cache or
    repeats an earlier one), `cached` the others, `prompt_tokens` counted with the
    judge's own tokenizer after prefix reuse where the backend has one (the
    embedded judge), else characters / 4, `completion_tokens` 1 per Yes/No
    question and a generation's `max_tokens` (an upper bound), `seconds` from this
    machine's measured rate (`bench rate`; `null` when none was measured for that
    judge), `usd` from the judge's price (0 for a local judge; `null` for a remote
    one without a price). Formulas and sources: *Cost estimates* in
    `docs/judges.md`. Every run stores its estimate when it starts and what it
    really cost when it ends (the Run page shows both). With `--escalate-to B`,
    the figures add B's expected share: B's own estimate of the same requests (its
    cache, rate and price) times the share of each first judge's requests expected
    to reach it — one minus the coverage of the judge's latest escalating run, or,
    with `--margin`, the share of its latest run's answers below the margin (read
    through its stored calibration with `--calibrate-judges`); with no earlier run
    of the judge on the task, all of them (an upper bound, said in the notes). The
    Run page's cost box makes the same sum when *Escalate* names a second judge,
    and an escalating run's stored estimate and actuals hold the second judge's
    share under `parts` (`run.estimate` / `run.actual`). With a remote judge,
    `--estimate` adds `usd_batch` (the same tokens at the batch price) to its JSON
    and its line shows both prices.

    Batches (`docs/scaling.md`, *Batch files and the providers' Batch APIs*).
    `--batch-out DIR` creates the runs as a start does (or takes `--resume
    RUN_ID`), then writes every request each run still needs after the response
    cache to `DIR/run-<ID>-<k>-of-<n>.jsonl`, one OpenAI batch line a request:
    `custom_id` = the request's deterministic id (the cache key), `method` `POST`,
    `url` `/v1/chat/completions`, `body` = the model and exactly the arguments the
    online backend sends (`messages`, `max_tokens`, `temperature`, `seed`,
    `logprobs`, `top_logprobs`, `response_format`). `--shards N` gives at least N
    files (contiguous slices, so an item's requests stay together); a file holds
    at most 50,000 requests (OpenAI's limit). The run records its files (judge,
    path, request count); no request is sent.

    `--batch-in FILE…` reads result files in OpenAI's batch output format (vLLM's
    `run_batch` writes the same) and stores each answer as an online one (same
    cache entry, parser, verdict and p(Yes)); a result the provider could not give
    (an `error`, a status other than 200) stays pending, and a line of an answer
    already stored is skipped, so the same files can be given again. When nothing
    is pending the run completes (scores as online). A line whose `custom_id` is
    not one of the run's pending requests, whose model is not the judge's (a dated
    snapshot such as `gpt-4o-mini-2024-07-18` is the same model), that does not
    parse, or an id given twice (in a file or across files) refuses the call with
    the file and line (exit 2), and nothing is stored.

    `--batch` (`openai:` and `openai-compat:` judges with one address) uploads the
    pending requests (`files.create`), creates a batch (`batches.create`, 24 h
    window), polls it every `$CHECKEVAL_BATCH_POLL` seconds (default 30) printing
    the provider's counts on stderr, downloads the output (`files.content`) and
    stores it as `--batch-in` does; `--json` and the exit codes are a run's. The
    run records its batch ids: `checkeval run --resume RUN_ID` (and the Run page's
    Resume and worker) polls them instead of submitting again; a batch that
    expired, failed or was cancelled leaves its answers stored and the rest
    pending (the run ends `failed` naming the batch; resuming submits the rest).
    Judges without a batch mode (`embedded`, `vllm:`, a pool of servers) and runs
    escalating to a second judge are refused (exit 2, nothing created); so is a
    SEAL run whose facts and weights are not cached yet (its planning needs those
    answers first: run it online).

    Escalation, a second judge for what the first is unsure of (`--escalate-to`,
    `--target-agreement`, `--delta`, `--margin`, `--abstain`,
    `--calibrate-judges`, `--escalate-by`):

    - `--escalate-to B`: judge A (`--judge`) answers every question; each answer
      whose confidence is below the threshold is asked of B (through B's own
      request cache) and replaced by B's; the answer keeps A's verdict, p(Yes) and
      latency (`a_verdict`, `a_p_yes`, `a_latency_ms`) and records B's spec in
      `judge`. Confidence: `|p(Yes) − 0.5|` per answer (an answer without p(Yes)
      has 0 and always goes to B); on a task with human **pairwise votes**, per
      voted pair, the gap of the two items' mean p(Yes) (both items' answers go to
      B).

    - `--escalate-by item`: A's confidence in every answer of an item is A's
      confidence in the item's score — the mean of its answers' confidences — so
      an item below the threshold goes to B whole (all its questions, B reads its
      text once) and no question of any other item does. Thresholds, agreement and
      coverage stay per answer; on a task with pairwise votes (pair units) it
      changes nothing. The summary adds `"escalate_by": "item"` and
      `"n_items_escalated"`. Default `answer` (as before). `docs/methods.md`,
      *Escalation*.

    - The threshold: `--margin M` (fixed), or `--target-agreement T` fitted on the
      task's **dev** groups (a split is required: `checkeval split`) against human
      labels — checklist annotations (majority per item × question) where there
      are any, else the expert score of the question's dimension above / below the
      item's group median (at the median: no label), or pairwise votes (majority
      per pair) — by the fixed-sequence binomial test, so that A's kept answers
      agree with people at least T of the time with probability 1 − `--delta`
      (`docs/methods.md`). No labelled dev unit: the run fails with that message.
      No threshold passes: A keeps nothing, B answers everything (said in the
      summary).

    - `--abstain`: B's answers below B's own threshold (fitted the same way on the
      dev units B answered, δ halved per stage; or `--margin`) are "not
      decidable"; the summary gives the share decided.

    - `--calibrate-judges`: after B's pass, each judge's p(Yes) is fitted to the
      people's labels on the dev answers it gave (Platt scaling: A on every
      labelled dev answer, B on those escalated to it; ≥ 5 of each label, else
      that judge stays as it is and the summary says why), and the run's
      **scores** average the calibrated p(Yes) — an item answered partly by A and
      partly by B is then read on one scale. Each answer keeps its judge's own
      verdict and p(Yes). Needs a split and answer labels (refused on a task with
      pairwise votes). The fits are in `"escalation": {"calibration": {"a":
      {"slope", "intercept", "n", "n_yes"} | {"reason", …}, "b": …,
      "label_source"}}`. The same option reads A's **confidence** through A's
      calibration before anything is escalated: `q − 0.5` for a Yes answer, `0.5 −
      q` for a No (`q` the calibrated p(Yes); 0 where people more likely disagree
      with A's verdict) — with `--margin` fitted on every labelled dev answer,
      with `--target-agreement` on every other dev group, the threshold then
      fitted on the others (`docs/methods.md`). Stored in `"escalation":
      {"confidence_calibration": {"fit": {…}, "groups": \[dev groups fitted on],
      "label_source"}}`; the answer-level agreement, the curve and a resumed run
      use it.

    - Refused before anything is asked (exit 2, nothing written):
      `--target-agreement`, `--margin`, `--abstain`, `--calibrate-judges`,
      `--escalate-by` without `--escalate-to`; an `--escalate-by` other than
      `answer`/`item`; neither or both of `--target-agreement` and `--margin`; B
      equal to A; a method without Yes/No answers (`geval`); a target outside
      [0.5, 1); δ outside (0, 1); a negative margin; a target or
      `--calibrate-judges` on a task without a split; `--calibrate-judges` on a
      task with pairwise votes; an unknown judge spec. `--delta` is checked with
      `--margin` too (it is stored with every escalation). With the other options,
      before the first judge is asked anything, the second judge is checked as
      fully as the first: its spec (`@FILE` is read as for `--judge`), its key
      source and, for a judge that needs one (`openai:`), that a key is set, its
      address (`CHECKEVAL_JUDGE_HOSTS`), whether its backend or model is installed
      (`vllm:`, `embedded:quality`), a pool's `CHECKEVAL_POOL_ITEMS`; a target
      needs a dev group with people's labels, and a target with
      `--calibrate-judges` two (half calibrate the first judge's confidence, the
      other half fit the threshold).

    - **The second judge's errors count.** A failed request of B keeps A's answer
      (asked again on resume), so the run's answers do not show it: the share of
      B's requests that failed is compared with `max_error_share` (the rule of an
      ordinary run) and above it the run fails (exit 1), saying how many of B's
      requests failed and the first error. `"escalation"` holds `"b_errors":
      {"asked", "failed", "first"}`, and the text says how many failed.

    - Resume (`run --resume`) asks A only its missing answers and B only the
      escalated answers B has not given; the threshold is stored at the first pass
      and reused.

    - `--json` adds `"escalation"` to the run object: `{"threshold", "fitted",
      "fit": {"threshold", "target", "delta", "n_dev", "n_kept", "k_disagree",
      "coverage_dev", "steps": [{"threshold", "n", "k", "pvalue"}], "reason"},
      "b_threshold", "b_fit", "unit": "answer"|"pair", "label_source", "n_units",
      "coverage", "n_escalated", "decided", "heldout": {"n", "coverage",
      "decided", "agreement", "agreement_a", "missing_b"}, "b_requests", "b_spec",
      "b_errors", "b_progress": {"done", "total"}}` (`b_progress`: the second
      judge's requests sent of those planned, written as its pass goes — the Run
      page's "second judge …: k of N"; `threshold` null: none passed; an undefined
      number is `null`, never `NaN`). Without `--json` one paragraph says the
      same.
    """
    from checkeval_core.cli import run_batch as rb
    from checkeval_core.judges.registry import JudgeSpecError
    from checkeval_core.runs.jobs import execute_run, prepare_resume

    mode = rb.check_flags(batch_out, shards, batch_in, batch, files, resume, estimate)
    db = open_db()
    try:  # openai-compat:@servers.txt#model — a pool's URLs from a file (the CLI only)
        from checkeval_core.judges.pool import expand_pool_file

        judge = [expand_pool_file(j) for j in judge]
        from checkeval_core.runs.ray_engine import engine_for

        eng = engine_for(engine, ray_address, workers)  # Ray installed? before any judge call
        if mode and eng is not None:
            raise ValueError("--engine ray: not with --batch-out / --batch-in / --batch (batch "
                             "files go to the engine that reads them; see docs/scaling.md)")
    except (JudgeSpecError, ValueError) as e:
        fail(str(e))
    try:  # the second judge's pool file too, read now like the first's
        escalate_to = expand_pool_file(escalate_to) if escalate_to else escalate_to
    except JudgeSpecError as e:
        fail(f"--escalate-to: {e}")
    if estimate:
        try:
            from checkeval_core.runs.escalation.options import escalation_params

            esc = escalation_params(escalate_to, target_agreement, margin, delta, abstain,
                                    calibrate_judges, escalate_by)
        except (ValueError, JudgeSpecError) as e:
            fail(str(e))
        _estimate(db, task, judge, method, checklist, limit, resume, param, as_json, esc)
        return
    try:
        if resume is not None:
            run_ids = [resume]
            if (mode := rb.check_specs(db, mode, judge, {}, resume)) != "in":
                if eng is not None:
                    from checkeval_core.runs.jobs import get_run

                    eng.prepare([get_run(db, resume)["judge_spec"]])
                prepare_resume(db, resume)  # re-asks judge errors, keeps unparsable answers
        else:
            if not task:
                fail("give --task NAME (or --resume RUN_ID)")
            from checkeval_core.runs.escalation.options import escalation_params
            from checkeval_core.runs.options import parse_params
            from checkeval_core.runs.start import start_runs

            params = {**parse_params(param), **escalation_params(
                escalate_to, target_agreement, margin, delta, abstain, calibrate_judges,
                escalate_by)}
            rb.check_specs(db, mode, judge, params, None)
            if eng is not None:  # the cluster reached and big enough before any run exists
                eng.prepare(judge)
            run_ids = start_runs(db, task, judge, method, checklist=checklist, limit=limit,
                                 params=params, strict=True).started
    except (NotFound, ValueError, JudgeSpecError) as e:
        fail(str(e))
    if mode:  # batch files, or the provider's Batch API (cli/run_batch.py)
        return rb.batch_runs(db, run_ids, mode, batch_out, shards, files, as_json, quiet)
    try:
        out, ok = _execute_all(db, run_ids, quiet, as_json, execute_run, eng)
    finally:
        if eng is not None:
            eng.shutdown()
    if as_json:  # one run: its object, as before; several: a list of them
        typer.echo(json.dumps(clean_json(out[0] if len(out) == 1 else out), allow_nan=False))
    if not ok:
        raise typer.Exit(1)


def _execute_all(db: Any, run_ids: list[int], quiet: bool, as_json: bool, execute_run: Any,
                 eng: Any) -> tuple[list[dict[str, Any]], bool]:
    out, ok = [], True
    for run_id in run_ids:
        run = _execute(db, run_id, quiet, execute_run, eng)
        out.append({"run": run_id, "status": run["status"], "n_answers": run["n_answers"]})
        esc = run["params"].get("escalation")
        if esc:
            out[-1]["escalation"] = esc
        if not as_json:
            typer.echo(f"run {run_id}: {run['status']}, {run['n_answers']} answers")
            if esc:
                from checkeval_core.runs.escalation.cascade import summary_text

                typer.echo(summary_text(esc))
        if run["status"] != "completed":
            ok = False
            if run.get("error"):
                typer.echo(f"run {run_id} {run['status']}: {run['error']}", err=True)
    return out, ok


def _estimate(db: Any, task: str | None, judge: list[str], method: list[str], checklist: str,
              limit: int | None, resume: int | None, param: list[str] | None,
              as_json: bool, esc: dict[str, Any] | None = None) -> None:
    """``run --estimate``: the cost of the runs these options would start (or of the rest
    of run --resume N), checked like a real start; nothing asked, nothing written. With
    ``--escalate-to``, the second judge's expected share is added (its own notes say how
    much of each first judge's requests it is expected to answer)."""
    from checkeval_core.judges.prices import PriceError, price_table
    from checkeval_core.judges.registry import JudgeSpecError, spec_problems
    from checkeval_core.runs.estimate import estimate_batch, estimate_run
    from checkeval_core.runs.options import parse_params

    try:
        price_table()  # a malformed CHECKEVAL_PRICES is bad input, not a silent zero
        if resume is not None:
            est = estimate_run(db, resume)
        else:
            if not task:
                fail("give --task NAME (or --resume RUN_ID)")
            problems = spec_problems(judge)
            if problems:
                fail("; ".join(problems))
            est = estimate_batch(db, task, judge, method, checklist=checklist, limit=limit,
                                 params=parse_params(param))
            if esc:
                from checkeval_core.runs.escalation.estimate import second_judge_estimate
                from checkeval_core.runs.escalation.options import check_options

                params = {**parse_params(param), **esc}
                for j in judge:
                    for m in method:
                        check_options(db, task, j, params, m)
                est = est + second_judge_estimate(db, task, judge, method, checklist, limit,
                                                  params)
    except ImportError as e:
        fail(str(e), code=1)
    except (NotFound, ValueError, JudgeSpecError, PriceError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(est.to_json()), allow_nan=False))
        return
    typer.echo(est.text())
    for note in est.notes:
        typer.echo(f"  {note}")


def _execute(db: Any, run_id: int, quiet: bool, execute_run: Any,
             engine: Any = None) -> dict[str, Any]:
    """Execute one run with a progress bar on stderr; exit with a resume hint on a crash."""
    typer.echo(f"run {run_id} started", err=True)
    bar = {"last": -1}

    def progress(done: int, total: int) -> None:
        if quiet:
            return
        width = 30
        fill = int(width * done / max(total, 1))
        if fill != bar["last"] or done == total:
            typer.echo(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} items", err=True,
                       nl=done == total)
            bar["last"] = fill

    try:
        return execute_run(db_path(db), run_id, progress=progress, engine=engine)
    except ImportError as e:
        fail(str(e), code=1)
    except Exception as e:  # noqa: BLE001 - answers so far are kept; say how to resume
        typer.echo(f"run {run_id} failed: {e}\nresume with: checkeval run --resume {run_id}",
                   err=True)
        raise typer.Exit(1) from None


@app.command("runs")
def runs_cmd(task: str | None = typer.Option(None, "--task", help="only this task's runs"),
             pin: int | None = typer.Option(None, "--pin", help="RUN_ID: pin this completed "
                                            "run as the reference of its checklist version × "
                                            "judge × method"),
             unpin: int | None = typer.Option(None, "--unpin", help="RUN_ID: remove its pin "
                                              "(the run covering the most items is the "
                                              "reference again)"),
             as_json: bool = typer.Option(False, "--json")) -> None:
    """List runs, newest first: id, task, judge, method, status, progress, checklist version,
    options, the run's label and whether it is its version × judge × method's reference run.
    With --pin / --unpin: set or remove the reference run instead.

    `--json`: `[{"run", "task", "judge", "method", "status", "stopping", "done",
    "total", "n_errors", "checklist_version", "options", "error", "created_at",
    "n_items", "label", "reference", "pinned"}]`; `--pin RUN_ID --json` (this
    completed run becomes the reference of its version × judge × method): `{"run",
    "task", "version", "judge", "method", "replaced"}`; `--unpin RUN_ID --json`:
    `{"run", "unpinned"}`. `--pin` refuses (exit 2) an unknown run or one not
    completed, and nothing is written.
    """
    from checkeval_core.runs import list_runs
    from checkeval_core.runs.jobs import worker_alive
    from checkeval_core.runs.labels import run_label
    from checkeval_core.runs.options import options_text
    from checkeval_core.runs.progress import stopping
    from checkeval_core.runs.selection import pin_reference, reference_runs, unpin_reference

    db = open_db()
    if pin is not None and unpin is not None:
        fail("give --pin RUN_ID or --unpin RUN_ID, not both")
    if pin is not None or unpin is not None:
        try:
            if pin is not None:
                res = pin_reference(db, pin)
            else:
                res = {"run": unpin, "unpinned": unpin_reference(db, unpin)}
        except (NotFound, ValueError) as e:
            fail(f"--{'pin' if pin is not None else 'unpin'}: {e}")
        if as_json:
            typer.echo(json.dumps(res, ensure_ascii=False))
        elif pin is not None:
            typer.echo(f"run {res['run']} is the reference of v{res['version']} · "
                       f"{res['judge']} · {res['method']} ({res['task']})"
                       + (f"; run {res['replaced']} no longer" if res["replaced"] else ""))
        else:
            typer.echo(f"run {unpin}: " + ("unpinned" if res["unpinned"] else "was not pinned"))
        return
    if task is not None and not db.execute("SELECT 1 FROM task WHERE name = ?",
                                           [task]).fetchone():
        fail(f"--task {task!r}: no such task")
    runs = list_runs(db, task)
    for r in runs:  # a cancelled run whose worker still finishes its item reads "cancelling…"
        r["alive"] = worker_alive(r["pid"])
    refs: dict[int, dict[str, Any]] = {}
    for name in dict.fromkeys(r["task"] for r in runs):
        refs.update({x["run"]: x for x in reference_runs(db, name)})
    out = [{"run": r["id"], "task": r["task"], "judge": r["judge_spec"], "method": r["method"],
            "status": r["status"], "stopping": stopping(r), "done": r["progress_done"], "total": r["progress_total"],
            "n_errors": r["n_errors"], "checklist_version": r["checklist_version"],
            "options": options_text(r["params"]), "error": r["error"],
            "created_at": r["created_at"], "n_items": r["n_items"], "label": run_label(r),
            "reference": r["id"] in refs, "pinned": bool(refs.get(r["id"], {}).get("pinned"))}
           for r in runs]
    if as_json:
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    for r in out:
        mark = "pinned reference" if r["pinned"] else "reference" if r["reference"] else ""
        status = "cancelling…" if r["stopping"] else r["status"]
        typer.echo(f"{r['label']}\t{r['task']}\t{status}\t"
                   f"{r['done']}/{r['total']}\t{r['options']}\t{mark}".rstrip("\t"))


bundle_app = typer.Typer(no_args_is_help=True, help="Completed runs as portable JSON files.")
app.add_typer(bundle_app, name="bundle")


@bundle_app.command("export")
def bundle_export_cmd(run: int = typer.Option(..., "--run"),
                      out: str = typer.Option(..., "--out")) -> None:
    r"""Write a completed run (answers, units, metadata) to a JSON file.

    One portable file. It carries its checklist version (`checklist`: version,
    kind, note, questions as `\[dimension, sub_dimension, text(, group_id)]`).
    """
    from pathlib import Path

    from checkeval_core.runs.bundle import export_bundle

    try:
        b = export_bundle(open_db(), run)
    except (NotFound, ValueError) as e:
        fail(str(e))
    Path(out).write_text(json.dumps(b, ensure_ascii=False), encoding="utf-8")
    typer.echo(f"wrote run {run} ({len(b['answers'])} answers) to {out}")


@bundle_app.command("import")
def bundle_import_cmd(file: str = typer.Argument(...),
                      task: str | None = typer.Option(None, "--task")) -> None:
    """Load a run bundle as a completed run (the task needs the same frozen checklist).
    Atomic; the same content twice is imported once. Exit 2 with the row and field on a
    malformed bundle (nothing written).

    Import freezes the bundle's checklist version from the task's kept questions
    when the task lacks it (all must be there; the hash must match; else exit 2).
    """
    from pathlib import Path

    from checkeval_core.runs.bundle import import_bundle_info, read_bundle_file

    p = Path(file)
    if not p.is_file():
        fail(f"{file}: no such file")
    try:
        res = import_bundle_info(open_db(), read_bundle_file(p), name=p.name, task=task)
    except (NotFound, ValueError) as e:
        msg = str(e)
        fail(msg if msg.startswith(f"{p.name}:") else f"{p.name}: {msg}")
    if res["created"]:
        typer.echo(f"run {res['run']} imported from {p.name}")
    else:
        typer.echo(f"{p.name}: already imported as run {res['run']} (same content), not "
                   "imported again" + (" — its missing scores were recomputed"
                                       if res["repaired"] else ""))
