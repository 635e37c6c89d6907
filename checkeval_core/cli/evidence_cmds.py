"""CLI for the evidence loop: ``split`` (a task's dev / held-out groups) and ``versions``
(agreement with humans per frozen checklist version, and the diff of two versions)."""

from __future__ import annotations

import json

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.stats.values import Figure, fmt
from checkeval_core.store import NotFound, open_db


@app.command("split")
def split_cmd(task: str = typer.Option(..., "--task"),
              heldout_share: float = typer.Option(0.5, "--heldout-share",
                                                  help="share of groups held out (0–1)"),
              seed: int = typer.Option(0, "--seed", help="seed of the group hash"),
              by_system: bool | None = typer.Option(
                  None, "--by-system/--no-by-system",
                  help="split systems too (default: when the task has reference ratings)"),
              show: bool = typer.Option(False, "--show", help="print the stored split; "
                                                              "change nothing"),
              clear: bool = typer.Option(False, "--clear", help="remove the split (figures "
                                         "then read all groups); runs, scores and annotations "
                                         "stay"),
              yes: bool = typer.Option(False, "--yes", help="with --clear: do not ask"),
              as_json: bool = typer.Option(False, "--json")) -> None:
    r"""Split a task's groups (documents / contexts / queries) into dev and held-out.

    Deterministic: a seeded hash orders the groups; the same seed and share applied again keep
    every stored assignment and place only groups added since.

    Puts each group (document, context, query) of the task in `dev` or `heldout`:
    the groups are ordered by a seeded SHA-256 hash and the first `round(share ·
    n)` are held out (at least one group on each side). Applying the same seed and
    share again keeps every stored assignment and places only groups imported
    since, so adding data never moves a group; another seed or share splits
    afresh. On a task with reference ratings of systems (a ranking task) the
    systems are split too (`--no-by-system` to split groups only); an item then
    belongs to a part when its group and its system both do. Default: no split. A
    task with one group is refused (held-out would be empty); `--seed` is 0 to
    2^32 − 1 (`-1` marks a split named group by group, which only `bench heldout`
    writes). `--json` prints `{"task", "defined", "seed", "heldout_share",
    "by_system", "dev": \[group ids], "heldout": \[group ids], "unassigned":
    \[groups imported after the split], "systems": {"dev", "heldout",
    "unassigned"} | null, "n_groups", "changed"}`. `--clear` removes only the
    split: runs, scores and annotations stay.

    `split --show` prints the stored split and changes nothing; `split --clear`
    asks first (`--json` needs `--yes`).
    """
    from checkeval_core.runs.options import check_seed
    from checkeval_core.task_split import SplitError, clear_split, get_split, set_split

    if show and clear:
        fail("give --show or --clear, not both")
    try:
        check_seed(seed)
    except ValueError as e:
        fail(str(e))
    db = open_db()
    try:
        if show:
            out = get_split(db, task)
        elif clear:
            cur = get_split(db, task)
            if cur["defined"] and not yes and not as_json:
                typer.confirm(f"Remove the dev / held-out split of {task!r} "
                              f"({len(cur['dev'])} dev, {len(cur['heldout'])} held-out "
                              "groups)?", abort=True)
            elif cur["defined"] and not yes:
                fail("--clear --json: add --yes to remove the split without asking")
            cleared = clear_split(db, task)
            out = {**get_split(db, task), "cleared": cleared}
        else:
            out = set_split(db, task, heldout_share, seed, by_system)
    except (NotFound, SplitError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(out))
        return
    if not out["defined"]:
        typer.echo(f"{task}: no split" + (" (removed)" if out.get("cleared") else "")
                   + f" — {out['n_groups']} group(s), every figure reads all of them")
        return
    typer.echo(f"{task}: " + ("named group by group" if out["explicit"] else
                              f"seed {out['seed']}")
               + f", held-out share {out['heldout_share']:.3g}"
               + (" (unchanged)" if out.get("changed") is False else ""))
    typer.echo(f"  dev groups ({len(out['dev'])}): {', '.join(out['dev'])}")
    typer.echo(f"  held-out groups ({len(out['heldout'])}): {', '.join(out['heldout'])}")
    if out["unassigned"]:
        typer.echo(f"  unassigned ({len(out['unassigned'])}, imported after the split — "
                   f"run split again to place them): {', '.join(out['unassigned'])}")
    if out["systems"]:
        for part in ("dev", "heldout"):
            typer.echo(f"  {part} systems ({len(out['systems'][part])}): "
                       f"{', '.join(out['systems'][part])}")


def _fmt(f: dict) -> str:
    fig = Figure.from_dict(f)
    if not fig.defined:
        return fig.text()
    return (f"{fig.text(3, ci_digits=2)} n={f['n_items']} items/{f['n_groups']} groups/"
            f"{f['n_systems']} systems")


@app.command("versions")
def version_agreement_cmd(
        task: str = typer.Option(..., "--task"),
        split: str | None = typer.Option(None, "--split", help="dev | heldout | all "
                                         "(default: each part the task has)"),
        diff: tuple[int, int] | None = typer.Option(
            None, "--diff", help="two version numbers A B: questions added / removed / edited "
                                 "beside the change in agreement"),
        level: str = typer.Option("sample_level", "--level",
                                  help="sample_level | dataset_level | system_level"),
        coef: str = typer.Option("spearman", "--coef", help="spearman | kendall | pearson"),
        bootstrap: int = typer.Option(200, "--bootstrap", help="resamples for CIs"),
        tie_margin: float = typer.Option(0.1, "--tie-margin",
                                         help="preferences: score gap below which two answers "
                                              "tie"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Agreement with humans per frozen checklist version × judge × method × aggregation.

    Reads every completed run of a frozen checklist version against each kind of
    human evidence the task has — `human_scores` (correlation per dimension,
    default Spearman at sample level), `annotations` (share of Yes/No decisions
    equal to the annotators' majority), `preferences` (pair accuracy, a judge tie
    counts as a miss) and `reference_ratings` (rank correlation of the systems'
    mean scores) — per aggregation, on dev, held-out and all groups (only `all`
    without a split; `--split` reads one part). `--json` prints `{"task", "parts",
    "evidence", "split", "versions", "rows", "reason", "reference_runs"}`
    (`reference_runs`: per version × judge × method the run the figures use —
    `version`, `judge`, `method`, `run`, `n_items`, `pinned`, `why`, `others`);
    each row has `version`, `run`, `run_label`, `reference` (the row is of its
    key's reference run: the text output, the Versions page and `--diff` read only
    those), `judge`, `method`, `aggregation`, `evidence`, `dimension` (for human
    scores also `mean over dimensions`: at sample level each document's mean of
    its dimension correlations, documents resampled; at the other levels the mean
    of the dimensions' values, no interval; `n_dimensions` per part), `statistic`
    and `parts: {"<part>": {"value", "ci", "n_items", "n_groups", "n_systems",
    "reason", "ci_reason", "weak"}}` (intervals: 95 % percentile bootstrap over
    groups; `weak` = no interval). `--diff A B` adds `diff`: the questions `added`
    / `removed` / `edited` from version A to B, and `deltas` per judge · method ·
    aggregation run on both (`a`, `b`, `delta` = B − A; for human scores,
    annotations and preferences also `delta_common` on the items / decisions /
    pairs both runs judged, with `n_common_items`, `n_common_groups` and a paired
    group-bootstrap `ci`, else `ci_reason`; every delta row also has `mde` — the
    minimum detectable effect of the paired resamples, `null` without an interval
    — and `verdict`: "better on held-out", "worse on held-out", "no detectable
    change (could have detected ≥ x)", "too few groups (n = k < 6): no verdict", …
    — see *The statistics floor* in `docs/methods.md`).
    """
    from checkeval_core.analysis.versions import reference_rows, version_diff, versions_report
    from checkeval_core.runs.options import check_bootstrap, check_tie_margin
    from checkeval_core.task_split import SplitError

    try:
        check_bootstrap(bootstrap)
        check_tie_margin(tie_margin)
    except ValueError as e:
        fail(str(e))
    db = open_db()
    try:
        rep = versions_report(db, task, split, level=level, coef=coef, n_boot=bootstrap,
                              tie_margin=tie_margin)
        if diff:
            rep["diff"] = version_diff(db, task, diff[0], diff[1], report=rep, level=level,
                                       coef=coef, n_boot=bootstrap)
    except (NotFound, SplitError, ValueError) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(clean_json(rep)))
        return
    if rep["reason"]:
        typer.echo(f"{task}: {rep['reason']}")
    for r in reference_rows(rep):
        typer.echo(f"{r['run_label']} · {r['aggregation']} · {r['evidence']} · "
                   f"{r['dimension']} ({r['statistic']})")
        for part, f in r["parts"].items():
            typer.echo(f"    {part:>8}: {_fmt(f)}")
    if diff:
        d = rep["diff"]
        typer.echo(f"v{d['a']} → v{d['b']}: {d['n_added']} added, {d['n_removed']} removed, "
                   f"{d['n_edited']} edited")
        for x in d["deltas"]:
            delta = fmt(x["delta"], signed=True)
            typer.echo(f"  {x['series']} · {x['dimension']} · {x['part']}: Δ {delta}"
                       + (f" ({x['reason']})" if x["reason"] else ""))
