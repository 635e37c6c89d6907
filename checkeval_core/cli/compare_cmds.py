"""CLI for comparing two runs item by item: ``checkeval compare --run A --run B``."""

from __future__ import annotations

import json

import typer

from checkeval_core.cli.app import app, fail
from checkeval_core.store import NotFound, open_db


@app.command("compare")
def compare_cmd(run: list[int] | None = typer.Option(None, "--run", help="RUN_ID, twice: the "
                                                     "baseline A first, then B"),
                aggregation: str | None = typer.Option(None, "--aggregation",
                                                       help="default: each run's own"),
                level: str = typer.Option("sample_level", "--level",
                                          help="sample_level | dataset_level | system_level"),
                coef: str = typer.Option("spearman", "--coef",
                                         help="spearman | kendall | pearson"),
                bootstrap: int = typer.Option(1000, "--bootstrap",
                                              help="paired resamples of groups for the Δ CI"),
                seed: int = typer.Option(0, "--seed"),
                split: str = typer.Option("all", "--split", help="dev | heldout | all: read "
                                          "the agreement and items on that part of the "
                                          "task's split"),
                top: int = typer.Option(10, "--top", help="rows of each table printed "
                                        "(the JSON has all)"),
                as_json: bool = typer.Option(False, "--json")) -> None:
    """Run B against baseline run A on their shared items: regressions first, flipped
    decisions, Δ agreement with humans with a paired bootstrap interval over groups.

    Compares run B with the baseline run A on the items both scored (runs of
    different tasks, no shared scored item or the same run twice: exit 2 with the
    reason). JSON: `n_common_items`, `n_groups`, `agreement` (`a`, `b`, `delta` =
    B − A, `ci` = paired bootstrap interval over groups, plus `level`, `coef`,
    `n_items`, `n_groups`, `n_systems`, `dimensions` — per dimension `a`, `b`,
    `delta`, its own paired `ci`, `n_items`, `n_groups` —, `reason` / `ci_reason`
    when undefined; beside every `delta` and `ci`: `mde`, the minimum detectable
    effect of the paired resamples, and `verdict`, one sentence — see *The
    statistics floor* in `docs/methods.md`), `items` (per item and dimension:
    `item_pk`, `item_id`, `group`, `system`, `dimension`, `score_a`, `score_b`,
    `delta`, `human`, `regression`; worst regression first, or largest |Δ| without
    human scores), `flipped` (per question: `question_id`, `dimension`,
    `question`, `n_both`, `yes_to_no`, `no_to_yes`, the first 20 `items`), plus
    `task`, `runs` (`a`, `b`), `scale_note`. The app's *Compare runs* page
    (`/compare?a=A&b=B`) shows the same and links every item to both traces
    (`/traces?runs=A,B&item=ID`). `--split dev|heldout` reads the agreement and
    the items on that part of the task's split only (a version chosen on dev is
    judged on held-out groups; a task without a split: exit 2) and adds `split`
    (`which`, `n_groups` of that part, `seed`, `heldout_share`, `by_system`);
    `flipped` still counts every shared item. The page opens on held-out when the
    task has a split.
    """
    from checkeval_core.analysis.compare import CompareError, compare_runs, summary_lines
    from checkeval_core.cli.app import clean_json
    from checkeval_core.runs.options import check_bootstrap, check_count, check_seed
    from checkeval_core.task_split import SplitError

    if not run or len(run) != 2:
        fail("give exactly two runs: --run A --run B (A = the baseline)")
    try:
        check_bootstrap(bootstrap)
        check_seed(seed)
        check_count(top, "--top", "rows", low=0)
    except ValueError as e:
        fail(str(e))
    db = open_db()
    try:
        res = compare_runs(db, run[0], run[1], aggregation, level=level, coef=coef,
                           n_boot=bootstrap, seed=seed, split=split)
    except (NotFound, CompareError, SplitError, ValueError) as e:
        fail(str(e))
    res = clean_json(res)
    if as_json:
        typer.echo(json.dumps(res))
        return
    for line in summary_lines(res):
        typer.echo(line)
    key = "regression" if res["has_human"] else "|Δ|"
    typer.echo(f"\nitems (worst {key} first):")
    typer.echo(f"{'item':<24} {'dimension':<16} {'A':>7} {'B':>7} {'Δ':>7} {'human':>6} "
               f"{'regr.':>6}")

    def num(x: float | None, fmt: str = ".3f") -> str:
        return "—" if x is None else format(x, fmt)

    for r in res["items"][:top]:
        typer.echo(f"{str(r['item_id'])[:24]:<24} {r['dimension'][:16]:<16} "
                   f"{num(r['score_a']):>7} {num(r['score_b']):>7} {num(r['delta'], '+.3f'):>7} "
                   f"{num(r['human'], '.2f'):>6} {num(r['regression'], '+.2f'):>6}")
    typer.echo(f"\nflipped decisions ({len(res['flipped'])} of {res['n_questions_shared']} "
               "shared questions changed on some item):")
    if not res["n_questions_shared"]:
        typer.echo("  (the runs share no checklist question answered Yes/No on the same item, "
                   "e.g. a Likert run or two versions without a common question)")
    for q in res["flipped"][:top]:
        typer.echo(f"  Yes→No {q['yes_to_no']:>3}  No→Yes {q['no_to_yes']:>3}  of "
                   f"{q['n_both']:>3}  [{q['dimension']}] {q['question'][:80]}")
