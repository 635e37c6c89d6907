"""CLI for checklists: import, preset, export, augment, filter, freeze, instance, versions, diff."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.stats.values import fmt, fmt_ci
from checkeval_core.store import NotFound, open_db

checklist_app = typer.Typer(no_args_is_help=True, help="Build, review and freeze checklists.")
app.add_typer(checklist_app, name="checklist")


@checklist_app.command("import")
def import_cmd(file: Path = typer.Argument(..., help="CheckEval YAML file/folder or JSON."),
               task: str = typer.Option(..., "--task")) -> None:
    """Import a checklist (questions become 'kept', each with its origin).

    Reads a CheckEval YAML file or folder, or our JSON (format below).
    """
    from checkeval_core.checklists.io import ChecklistError, import_checklist

    try:
        res = import_checklist(open_db(), task, file)
    except (ChecklistError, NotFound) as e:
        fail(str(e))
    per = ", ".join(f"{d} {n}" for d, n in res["dimensions"].items())
    typer.echo(f"imported {res['n_questions']} questions into {task!r} ({per})")


@checklist_app.command("preset")
def preset_cmd(name: str = typer.Argument(..., help="SummEval or Topical-Chat"),
               task: str = typer.Option(..., "--task")) -> None:
    """Add the CheckEval authors' seed questions of a preset (a seed already there is kept).

    `checklist preset SummEval|Topical-Chat` loads the CheckEval authors' seed
    questions.
    """
    from checkeval_core.checklists.io import ChecklistError
    from checkeval_core.checklists.seeds import add_preset_seeds

    try:
        res = add_preset_seeds(open_db(), task, name)
    except (ChecklistError, NotFound, ValueError) as e:
        fail(str(e))
    per = ", ".join(f"{d} {n}" for d, n in res["dimensions"].items())
    typer.echo(f"added {res['n_questions']} seed questions to {task!r} ({per})")


@checklist_app.command("export")
def export_cmd(task: str = typer.Option(..., "--task"),
               out: Path = typer.Option(..., "--out", help=".json, or a folder for YAML files"),
               version: str | None = typer.Option(None, "--version", help="N or latest")) -> None:
    """Export the working checklist or a frozen version (JSON; YAML files into a folder).

    `--out` writes our JSON to a `.json` file, CheckEval YAML files to a folder.
    """
    from checkeval_core.checklists.io import export_checklist, export_yaml_files
    from checkeval_core.safeio import safe_join

    db = open_db()
    try:
        if out.suffix.lower() == ".json":
            data = export_checklist(db, task, version)
            out.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
            n = sum(len(s["questions"]) for d in data["dimensions"] for s in d["sub_dimensions"])
            typer.echo(f"wrote {n} questions to {out}")
        else:
            if version is not None:
                fail("YAML export writes the working checklist; use a .json --out for a version")
            files = export_yaml_files(db, task)
            # file names come from dimension names: prove every path stays inside --out
            targets = {name: safe_join(out, name) for name in files}
            out.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                targets[name].write_text(text, encoding="utf-8")
            typer.echo(f"wrote {len(files)} YAML files to {out}")
    except (NotFound, ValueError, OSError) as e:
        fail(str(e))


@checklist_app.command("augment")
def augment_cmd(task: str = typer.Option(..., "--task"),
                dimension: str = typer.Option(..., "--dimension"),
                strategy: str = typer.Option(..., "--strategy", help="diversify | elaborate "
                                             "(from the seeds) | contrastive (from pairs of "
                                             "dev outputs people scored apart) | inductive "
                                             "(from people's notes)"),
                judge: str = typer.Option("embedded", "--judge"),
                n: int = typer.Option(4, "--n", help="questions asked per sub-dimension "
                                                      "(diversify), per seed (elaborate), "
                                                      "from the notes (inductive); pairs "
                                                      "(contrastive)"),
                mode: str | None = typer.Option(
                    None, "--mode", help="list (one prompt, a numbered list) or single (one "
                                         "question per generation; default for embedded)"),
                fresh: bool = typer.Option(False, "--fresh",
                                           help="ask afresh (new seeds) instead of the cache"),
                as_json: bool = typer.Option(False, "--json")) -> None:
    r"""Generate questions from the seeds or from people's examples (proposed, each with its
    provenance; review them before freezing).

    Prints each question it added (`+ #id \[sub-dimension] text`) and each it
    dropped as a copy of a question already there (`- \[sub-dimension] text
    (dropped: why: copy of)`; in `--json`, `dropped`: `[{"sub_dimension", "text",
    "copy_of", "why"}]`).

    `--mode single` (the default for `embedded*` judges) asks one question per
    generation under a grammar; `list` asks for a numbered list (the default for
    other judges). Asking again returns the cached answers and says so; `--fresh`
    asks anew. `--json` has `added` (`id`, `text`, `sub_dimension`, `parent_id`,
    `flags`, `usable`), `problems`, `flagged`, `mode`, `requests`, `from_cache`,
    `seed`.

    `--strategy contrastive` writes questions from the `--n` dev pairs of outputs
    on one source that people scored furthest apart on the dimension, `--strategy
    inductive` from people's notes about it (reviewers' rejection reasons, settled
    disagreement notes, annotators' skip reasons); both need the task's dev /
    held-out split (contrastive) or such notes (inductive), else exit 2 with the
    reason. Their `added` entries carry `provenance` (the pair: `group`,
    `better_item`, `worse_item`, `better_score`, `worse_score`; or the `notes`:
    `kind`, `where`, `text`), and `copies` lists every answer not added because it
    copied an existing question (`text`, `copied_id`, `copied_text`,
    `provenance`).
    """
    from checkeval_core.checklists.grounded import generate

    try:
        res = generate(open_db(), task, dimension, strategy, judge, n=n, mode=mode, fresh=fresh)
    except (NotFound, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False))
        return
    for q in res["added"]:
        typer.echo(f"+ #{q['id']} [{q['sub_dimension']}] {q['text']}"
                   + (f"  (flags: {', '.join(q['flags'])})" if q["flags"] else ""))
    for d in res["dropped"]:
        typer.echo(f"- [{d['sub_dimension']}] {d['text']}  (dropped: {d['why']}: "
                   f"{d['copy_of']})")
    for p in res["problems"]:
        typer.echo(f"! {p}", err=True)
    cache = (f"; {res['from_cache']} of {res['requests']} answers from the cache "
             "(--fresh asks anew)" if res["from_cache"] else "")
    drop = f", {len(res['dropped'])} dropped as copies" if res["dropped"] else ""
    typer.echo(f"{len(res['added'])} questions proposed, {res['flagged']} flagged{drop}{cache}")


@checklist_app.command("filter")
def filter_cmd(task: str = typer.Option(..., "--task"),
               dimension: str = typer.Option(..., "--dimension"),
               judge: str = typer.Option("embedded", "--judge"),
               mode: str | None = typer.Option(
                   None, "--mode", help="json (one prompt for the pool) or binary (Yes/No "
                                        "checks per question; default for embedded)"),
               scope: str = typer.Option("proposed", "--scope", help="proposed: the new "
                                         "proposals (kept questions are context for "
                                         "redundancy); all: every proposed and kept question"),
               estimate: bool = typer.Option(False, "--estimate", help="print what the filter "
                                             "would ask and cost, then stop (no judge call)"),
               as_json: bool = typer.Option(False, "--json")) -> None:
    """Filter a dimension's new proposals (alignment, consistency, redundancy); the cost is
    printed before the judge is asked.

    `--mode binary` (default for `embedded*`) decides each question by Yes/No
    checks; `--json` has `decisions` (`id`, `text`, `origin`, `outcome`, `keep`,
    `criterion`, `reason`, `p_yes`, `unsure`, `duplicate_of`), `problems`,
    `removed`, `flagged`, `unsure`, `mode`, and adds `scope`, `calls`, `seconds`
    and `plan`.

    A question a person wrote (origin `seed` or `edited`) is never demoted: a
    "remove" verdict on it is stored and reported as `flagged` (printed with `?`),
    its status unchanged, for the person to decide on Checklist review; `removed`
    counts only generated questions set to `filtered`. A question imported from a
    file (author other than the app's generator, no model — e.g. the CheckEval
    authors' published checklist) counts as human-written: flagged, never
    filtered. A decision whose p(Yes) lies in 0.40–0.60 is `unsure` ("the judge is
    unsure" in its reason): a small local judge gives such values for most
    questions. An `unsure` decision never changes a status (its verdict is stored
    as `unsure`, printed with `~`).

    `--scope proposed` (the default) decides only the dimension's new proposals —
    the kept questions are listed to the judge as context, so a proposal repeating
    one is removed for redundancy, but no kept question is decided on; `--scope
    all` re-checks every proposed and kept question.

    Before the first judge call the command prints on stderr what it will do and
    cost: the number of questions, the judge calls (binary: two per question plus
    one per lexically similar pair; json: one generation) and, when a filter with
    the same judge and mode was measured here, the time at that rate; `--estimate`
    prints only that (no judge call; `--json`: `{"scope", "mode", "n_questions",
    "n_context", "calls", "seconds", "rate", "line"}`). Each filter records its
    calls and duration (`filter_run`) and each status it changes in the review
    history.
    """
    from checkeval_core.checklists.filtering import filter_dimension, filter_plan, filter_summary

    db = open_db()
    try:
        plan = filter_plan(db, task, dimension, judge, mode=mode, scope=scope)
        if estimate:
            typer.echo(json.dumps(plan, ensure_ascii=False) if as_json else plan["line"])
            return
        typer.echo(plan["line"], err=True)  # before the first call (progress goes to stderr)
        res = filter_dimension(db, task, dimension, judge, mode=mode, scope=scope)
    except (NotFound, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps({**res, "plan": plan}, ensure_ascii=False))
        return
    for d in res["decisions"]:  # "-" filtered out; "?" a question a person wrote, flagged
        if not d["keep"]:  # only; "~" the judge is unsure: nothing changed
            mark = {"flagged": "?", "unsure": "~"}.get(d["outcome"], "-")
            typer.echo(f"{mark} #{d['id']} ({d['criterion']}) {d['text']} — {d['reason']}")
    for p in res["problems"]:
        typer.echo(f"! {p}", err=True)
    typer.echo(filter_summary(res))


@checklist_app.command("evidence")
def evidence_cmd(task: str = typer.Option(..., "--task"),
                 status: str = typer.Option("proposed", "--status",
                                            help="proposed | kept | all (proposed and kept)"),
                 judge: str = typer.Option("embedded", "--judge"),
                 items: int = typer.Option(24, "--items", help="dev items per dimension "
                                           "(stratified by group and people's score)"),
                 dimension: str | None = typer.Option(None, "--dimension",
                                                      help="one dimension only"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
    r"""Test questions before review: the judge answers each on a small stratified sample of dev
    items; per question its yes-rate, how well it separates people's high from low items (with
    an interval or the reason), redundancy with kept questions, cost per item and the dev-only
    flag. Stored for the Checklist review page; nothing is deleted.

    Answers the task's `--status` questions (default the proposals) on a
    stratified sample of `--items` dev items per dimension and stores the result
    for Checklist review; `--json` prints `{"task", "judge", "split": "dev",
    "items", "dimensions": {name: {"n_items", "n_groups", "n_scored"}},
    "requests", "from_cache", "questions": [...]}` where each question has
    `question_id`, `yes_rate`, `separation` (share of same-source pairs people
    scored differently that the answer orders as they did; ½ per tie),
    `separation_ci` (`\[lo, hi]`, nulls when there is none), `redundant_with`
    (`[{"question_id", "agreement", "n"}]`: kept questions answering alike on ≥ 90
    % of the items), `flag` (`never_varies` | `orders_no_pair` | `reversed` |
    null), `reason` (the flag's reason, else why separation has no value or
    interval, else null), and `text`, `dimension`, `status`, `n_answers`,
    `separation_reason`, `n_pairs`, `n_groups`, `cost` (`calls`, `prompt_tokens`,
    `completion_tokens`, `usd` per item).

    A task without a split, an unknown status or judge, or `--items` outside 4–400
    exits 2 before any judge call.
    """
    from checkeval_core.checklists.evidence import check_options, question_evidence
    from checkeval_core.judges.spec import JudgeSpecError, parse_spec

    db = open_db()
    try:
        check_options(status, items)
        parse_spec(judge)
        res = question_evidence(db, task, judge, status=status, n_items=items,
                                dimension=dimension)
    except (NotFound, JudgeSpecError, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(res), ensure_ascii=False))
        return
    from checkeval_core.checklists.evidence import evidence_text

    for q in res["questions"]:
        typer.echo(f"#{q['question_id']} {q['text']}\n    "
                   + evidence_text({**q, "judge": judge}))
    typer.echo(f"{len(res['questions'])} questions tested on dev items "
               f"({res['requests']} requests, {res['from_cache']} from the cache)")


@checklist_app.command("freeze")
def freeze_cmd(task: str = typer.Option(..., "--task"), note: str = typer.Option("", "--note"),
               instance: bool = typer.Option(False, "--instance",
                                             help="freeze the instance checklists"),
               origin: list[str] | None = typer.Option(
                   None, "--origin", help="only kept questions of this origin (repeat): seed, "
                                          "diversification, elaboration, edited, import…"),
               exclude: list[int] | None = typer.Option(
                   None, "--exclude", help="leave out this question id (repeat)"),
               as_json: bool = typer.Option(False, "--json")) -> None:
    """Freeze the kept questions (or a subset of them) as an immutable version.

    `--json`: `{"version", "hash", "n_questions"}`.
    """
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.store import task_id

    db = open_db()
    try:
        if exclude:  # an id of another task's question would be ignored without a word
            own = {r[0] for r in db.execute("SELECT id FROM question WHERE task_id = ?",
                                            [task_id(db, task)])}
            for qid in exclude:
                if qid not in own:
                    raise ValueError(f"--exclude {qid}: task {task!r} has no question #{qid}")
        v = freeze(db, task, note=note, kind="instance" if instance else "global",
                   origins=origin or None, exclude=exclude or None)
    except (NotFound, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps({"version": v["version"], "hash": v["hash"],
                               "n_questions": v["n_questions"]}))
    else:
        typer.echo(f"version {v['version']} ({v['n_questions']} questions, hash {v['hash'][:12]})"
                   + ("" if v["new"] else " — identical to an existing version"))


@checklist_app.command("versions")
def list_versions_cmd(task: str = typer.Option(..., "--task"),
                      as_json: bool = typer.Option(False, "--json")) -> None:
    """List frozen versions."""
    from checkeval_core.checklists.versions import list_versions

    try:
        vs = list_versions(open_db(), task)
    except NotFound as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(vs))
    for v in [] if as_json else vs:
        typer.echo(f"{v['version']}\t{v['kind']}\t{v['n_questions']}\t{v['hash'][:12]}\t{v['note']}")


@checklist_app.command("diff")
def diff_cmd(task: str = typer.Option(..., "--task"), a: str = typer.Argument(...),
             b: str = typer.Argument(...)) -> None:
    """Added / removed / edited questions between two versions."""
    from checkeval_core.checklists.versions import diff_versions

    try:
        d = diff_versions(open_db(), task, a, b)
    except NotFound as e:
        fail(str(e))
    for q in d["added"]:
        typer.echo(f"+ [{q['dimension']}] {q['text']}")
    for q in d["removed"]:
        typer.echo(f"- [{q['dimension']}] {q['text']}")
    for e in d["edited"]:
        typer.echo(f"~ [{e['dimension']}] {e['before']}  →  {e['after']}")


@checklist_app.command("instance")
def instance_cmd(task: str = typer.Option(..., "--task"),
                 judge: str = typer.Option("embedded", "--judge"),
                 limit: int | None = typer.Option(None, "--limit", help="first N queries"),
                 no_reference: bool = typer.Option(False, "--no-reference",
                                                   help="write from the query alone"),
                 fresh: bool = typer.Option(False, "--fresh", help="rewrite queries that "
                                            "already have questions (asked afresh, not from "
                                            "the cache)"),
                 mode: str | None = typer.Option(None, "--mode", help="list (one answer per "
                                                 "query) or single (one question per "
                                                 "generation); default: single for embedded "
                                                 "judges, else list"),
                 import_file: Path | None = typer.Option(None, "--import", help="import a "
                                                         "JSONL file instead of generating"),
                 fixed: bool = typer.Option(False, "--fixed", help="import RocketEval's "
                                            "six-question Fixed checklist for every query"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
    """Write (or import) one 5–10 question checklist per query (RocketEval).

    Writes one 5–10 question checklist per query (`group_id`), shared by every
    answer to it: `--mode single` (default for `embedded*`) asks one question per
    generation (8 generations, near-copies dropped), `list` the whole list in one
    answer; `--fresh` rewrites queries that have a list, asked afresh (sampled
    with a new seed). `--json` has `groups`, `items`, `questions`, `skipped`,
    `problems`, `mode`, `requests`, `from_cache`.
    """
    from checkeval_core.checklists import instance as I

    try:
        if fixed or import_file is not None:
            src = I.fixed_checklist_path() if fixed else import_file
            res = I.import_group_checklists(open_db(), task, path=src)
            res["problems"] = []
        else:
            res = I.generate_group_checklists(open_db(), task, judge, limit=limit,
                                              include_reference=not no_reference, fresh=fresh,
                                              mode=mode)
    except (NotFound, ValueError, ImportError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(res, ensure_ascii=False))
        return
    for p in res["problems"]:
        typer.echo(f"! {p}", err=True)
    typer.echo(f"{res['questions']} questions for {res['groups']} queries"
               + (f" ({res['skipped']} already had questions; --fresh rewrites them)"
                  if res.get("skipped") else ""))


@checklist_app.command("instance-import")
def instance_import_cmd(file: Path = typer.Argument(..., help="JSONL: {\"group_id\" | "
                                                    "\"instruction_id\", \"questions\": [...]}"),
                        task: str = typer.Option(..., "--task"),
                        as_json: bool = typer.Option(False, "--json")) -> None:
    """Import per-query checklists from JSONL (all or nothing; replaces a query's list).

    Reads JSONL lines `{"group_id"|"instruction_id", "questions": [...]}`.
    """
    from checkeval_core.checklists.instance import import_group_checklists

    try:
        res = import_group_checklists(open_db(), task, path=file)
    except (NotFound, ValueError) as e:
        fail(str(e))
    typer.echo(json.dumps(res, ensure_ascii=False) if as_json else
               f"{res['questions']} questions for {res['groups']} queries from {res['file']}"
               + (f" ({res['replaced']} older questions replaced)" if res["replaced"] else ""))


def _figure_line(name: str, f: dict) -> str:
    v = fmt
    ci = f["ci"]
    line = (f"  {name}: {v(f['before'])} → {v(f['after'])} (Δ {v(f['delta'])}) on "
            f"{f['n_items']} items / {f['n_groups']} groups / {f['n_systems']} systems")
    if f["ci_reason"]:
        return line + f"; {f['ci_reason']}"
    if f["reason"]:
        line += f" ({f['reason']})"
    return line + (f"; 95% CI before {fmt_ci(ci['before'], 3)}, after "
                   f"{fmt_ci(ci['after'], 3)}, Δ {fmt_ci(ci['delta'], 3)} (groups resampled)")


@checklist_app.command("propose")
def propose_cmd(run: list[int] = typer.Option(..., "--run", help="a completed run (repeat "
                                              "for several runs of one checklist version)"),
                evidence: str | None = typer.Option(
                    None, "--evidence", help="human_scores | reference_ratings | preferences "
                                             "(default: the first the task has)"),
                weights: bool = typer.Option(False, "--weights", help="fit non-negative ridge "
                                             "weights of the kept questions on dev items"),
                epsilon: float = typer.Option(0.005, "--epsilon", help="a question is dropped "
                                              "for lowering dev agreement only when dropping "
                                              "it raises it by more than this"),
                new_questions: int = typer.Option(0, "--new-questions", help="cost N new "
                                                  "questions from dev disagreements (written "
                                                  "only with --judge)"),
                judge: str | None = typer.Option(None, "--judge", help="judge spec that writes "
                                                 "the new questions"),
                to_review: bool = typer.Option(False, "--to-review", help="queue the proposal "
                                               "for review (nothing is applied)"),
                bootstrap: int = typer.Option(200, "--bootstrap", help="resamples for CIs"),
                tie_margin: float = typer.Option(0.1, "--tie-margin", help="preferences: "
                                                 "score gap below which two answers tie"),
                as_json: bool = typer.Option(False, "--json")) -> None:
    r"""Propose a revised checklist: questions chosen on the task's dev groups, agreement
    before → after on dev and held-out groups from the stored answers.

    Works from the stored answers of completed `checkeval` / `rocketeval` runs of
    one task and one frozen checklist version (several runs are averaged per item
    and question), and reports what it does — no judge call is needed for a subset
    of the questions. The task must have a split (`checkeval split --task NAME`;
    refused otherwise): questions are chosen on **dev** groups only and the
    **held-out** groups are read only to report. On a ranking task (reference
    ratings and a split by system) the parts are the dev / held-out *systems* on
    every query: questions are chosen on the dev systems' answers (labels: their
    ratings) and the held-out systems' ranking is reported (Spearman, Kendall
    beside it).

    Selection, in order, on dev answers: *mostly invalid* (> 50 % invalid), *never
    varies* (one verdict and p(Yes) spread < 0.05), *near-copy* (character
    similarity ≥ 0.75 to another question of the same dimension / query — the one
    whose own dev agreement is lower goes), then *lowers dev agreement*: greedy
    backward elimination, dropping the question whose removal raises dev agreement
    most while that raise exceeds `--epsilon`; every dimension (and query) keeps
    one question. `--weights` fits non-negative ridge weights per dimension on dev
    items (NNLS on within-group centred answers, penalty 0.1 × items; per-query
    lists get weights per query in the ranking setting, fitted on the dev systems'
    answers to that query — RocketEval's per-query predictor — and none on a split
    by query; from pairwise votes, NNLS of the vote ±1 on the two answers'
    difference per question over dev pairs). Agreement: human scores — Spearman at
    sample level, mean over dimensions; reference ratings — Spearman of system
    mean scores; preferences — pair accuracy (a judge tie, |Δ score| <
    `--tie-margin`, is a miss).

    `--json` prints `{"task", "version", "runs", "evidence", "setting", "kept":
    \[question], "dropped": [{"question", "reason", "rule"}], "weights":
    {"<question id>": w} | null, "weights_reason", "dev", "heldout", "rerun",
    "notes", "selection"}` where a question is `{"id", "text", "dimension"[,
    "group_id"]}` and `dev` / `heldout` are `{"before", "after", "delta",
    "n_items", "n_groups", "n_systems", "ci": {"before", "after", "delta"},
    "ci_reason", "reason", "statistic"}` (95 % percentile bootstrap over groups;
    `delta`'s interval is paired: the same resampled groups before and after;
    `kendall` too in the ranking setting; `mde` and `verdict` of `delta` as in
    `versions --diff`). When the answered dev items come from fewer than 6 groups
    nothing is dropped or weighted and `notes` says so (the small-sample rule,
    *The statistics floor* in `docs/methods.md`).

    `rerun` is what a run of the revised version with the same judge asks at most:
    `{"method", "judge_calls", "reused_answers", "note"}` — `rocketeval` asks one
    question per prompt, so kept questions cost nothing (the response cache
    answers them); `checkeval` asks a sub-dimension's questions in one prompt, so
    a sub-dimension that lost a question is asked again. `--new-questions N` adds
    `new_questions`: where N new questions would come from (the dev pairs of
    answers the kept questions order against the evidence, largest gap first) and
    what they cost — `generation_calls` and `judge_calls` per run of the revised
    version — before anything is asked; with `--judge SPEC` they are written
    (`questions`: `text`, `dimension`, `problem` when not a yes/no question or a
    near-copy). `--to-review` queues the proposal in one transaction and adds
    `review: {"queued", "added", "skipped"}`: dropped questions go back to
    `proposed` with their evidence as the reason, new ones are added as `proposed`
    (marked `proposal` in origins and flags); nothing is applied — keep or reject
    them on Checklist review (or `checklist freeze` after deciding), and a run of
    the new version asks the judge only for the questions it has not answered.
    Pressing twice queues nothing twice. Each queued question gets a line in its
    review history (role `analysis`, action `proposal_drop` or `proposal_new`, the
    reason shown on Checklist review); a second press adds none.
    """
    from checkeval_core.analysis.proposal import propose
    from checkeval_core.analysis.proposal.evidence import ProposalError
    from checkeval_core.checklists.review import to_review as queue
    from checkeval_core.runs.options import (
        check_bootstrap,
        check_count,
        check_epsilon,
        check_tie_margin,
    )

    try:
        check_bootstrap(bootstrap)
        check_tie_margin(tie_margin)
        check_epsilon(epsilon)
        check_count(new_questions, "--new-questions", "questions", low=0, top=1_000)
    except ValueError as e:
        fail(str(e))
    db = open_db()
    try:
        out = propose(db, run, evidence=evidence, weights=weights, epsilon=epsilon,
                      n_boot=bootstrap, new_questions=new_questions, judge=judge,
                      tie_margin=tie_margin)
        if to_review:
            out["review"] = queue(db, out)
    except (NotFound, ProposalError, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(out), ensure_ascii=False))
        return
    typer.echo(f"{out['task']} v{out['version']}, run(s) {', '.join(map(str, out['runs']))}: "
               f"{out['setting']}, evidence {out['evidence']}")
    typer.echo(f"kept {len(out['kept'])}, dropped {len(out['dropped'])}"
               + ("" if out["weights"] is not None else f" ({out['weights_reason']})"))
    for d in out["dropped"]:
        typer.echo(f"  - #{d['question']['id']} {d['question']['text']}: {d['reason']}")
    if out["weights"]:
        typer.echo("weights: " + ", ".join(f"#{k} {w:.3f}" for k, w in out["weights"].items()))
    typer.echo(out["dev"]["statistic"] + ", before → after:")
    typer.echo(_figure_line("dev", out["dev"]))
    typer.echo(_figure_line("held-out", out["heldout"]))
    for note in out["notes"]:
        typer.echo(f"note: {note}")
    rc = out["rerun"]
    typer.echo(f"a run of the revised version ({rc['method']}): at most {rc['judge_calls']} "
               f"judge call(s), {rc['reused_answers']} answer(s) reused ({rc['note']})")
    nq = out.get("new_questions")
    if nq:
        typer.echo(f"new questions: {nq['n']} from dev disagreements — "
                   f"{nq['generation_calls']} generation call(s), then {nq['judge_calls']} "
                   f"judge call(s) {nq['judge_calls_note']}"
                   + (f" ({nq['reason']})" if nq["reason"] else ""))
        for q in nq.get("questions", []):
            typer.echo(f"  + {q['text']}" + (f" — not queued: {q['problem']}"
                                             if q["problem"] else ""))
    if to_review:
        r = out["review"]
        typer.echo(f"review queue: {r['queued']} question(s) proposed for dropping, "
                   f"{len(r['added'])} new question(s) proposed — keep or reject them on the "
                   "Checklist review page, then freeze a version")
