"""CLI for RocketEval's ranking setting: ``preferences import``/``export`` and ``ratings import``.

The analysis itself is ``checkeval analyze --run ID --rankings|--pairs`` (in
``analysis_cmds``), which calls :mod:`checkeval_core.analysis.rankings`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from checkeval_core.cli.app import app, clean_json, fail
from checkeval_core.stats.values import Figure, fmt, fmt_ci, pct
from checkeval_core.store import NotFound, open_db

pref_app = typer.Typer(no_args_is_help=True, help="Human pairwise preferences between answers.")
app.add_typer(pref_app, name="preferences")
ratings_app = typer.Typer(no_args_is_help=True,
                          help="Reference ratings of systems (e.g. Chatbot Arena Elo).")
app.add_typer(ratings_app, name="ratings")


@pref_app.command("import")
def preferences_import_cmd(
        file: Path = typer.Argument(..., help="CSV / JSONL / JSON"),
        task: str = typer.Option(..., "--task"),
        annotator: str = typer.Option("", "--annotator",
                                      help="annotator name for rows without one"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Import votes: item ids (group_id, item_a, item_b, winner a/b/tie) or self-contained
    pairs (input, output_1, output_2, label 1/2), which create the items.

    Reads `group_id,item_a,item_b,winner` or `input,output_1,output_2,label`.

    `--json` prints `{"task", "source", "shape", "n_preferences", "n_new",
    "n_already_stored", "n_items_created", "n_groups", "winners"}`: a vote whose
    `vote_id` the task already has is not stored again, so importing an export
    into the same database adds nothing (`docs/formats.md` § the vote id).
    """
    from checkeval_core.annotation.preferences import PreferenceError, import_preferences

    if not file.exists():
        fail(f"{file}: no such file")
    try:
        res = import_preferences(open_db(), task, path=file, annotator=annotator)
    except (PreferenceError, NotFound) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(res))
        return
    w = res["winners"]
    typer.echo(f"imported {res['n_preferences']} preferences ({w['a']} a, {w['b']} b, "
               f"{w['tie']} ties) over {res['n_groups']} queries into task {res['task']!r} "
               f"(source {res['source']!r}; {res['n_items_created']} items created)"
               + (f"; {res['n_already_stored']} of them already stored (same vote ids), "
                  f"{res['n_new']} new" if res.get("n_already_stored") else ""))


@pref_app.command("export")
def preferences_export_cmd(
        task: str = typer.Option(..., "--task"), out: Path = typer.Option(..., "--out"),
        fmt: str = typer.Option("csv", "--format", help="csv|jsonl"),
        source: str | None = typer.Option(None, "--source",
                                          help="only this source (app: votes given in the "
                                               "app; else the imported file's name)")) -> None:
    """Export pairwise votes (app votes and imported ones) with item ids, annotator, source,
    the answer shown as A and the time; the file imports back with `preferences import`.

    Writes the app's votes and imported ones in a shape that imports back: one row
    per stored vote — `vote_id, group_id, item_a, item_b, winner, annotator,
    source, shown_first, created_at` with item ids (`winner` is relative to
    `item_a`; `shown_first` is the item shown as A, empty for imported votes);
    `--source app` keeps only the votes given on the Pairwise votes page. CSV
    cells are formula-safe; the file is in the item-id shape that `preferences
    import` reads (into a database with the same items).
    """
    from checkeval_core.annotation.pairwise import EXPORT_COLUMNS, export_votes
    from checkeval_core.export import write_rows

    try:
        n = write_rows(export_votes(open_db(), task, source), fmt, out, columns=EXPORT_COLUMNS)
    except (NotFound, ValueError) as e:
        fail(str(e))
    typer.echo(f"wrote {n} votes to {out}")


@ratings_app.command("import")
def ratings_import_cmd(
        file: Path = typer.Argument(..., help="CSV / JSON / JSONL"),
        task: str = typer.Option(..., "--task"),
        field: str | None = typer.Option(None, "--field",
                                         help="numeric column to use as the rating (default "
                                              "rating, or arena_elo in models.json)"),
        source: str | None = typer.Option(None, "--source",
                                          help="name of this reference (default: arena_elo, "
                                               "the --field or the file name)"),
        as_json: bool = typer.Option(False, "--json")) -> None:
    """Import reference ratings per system (system_id, rating, optional lower/upper; or the
    models.json shape with arena_elo, arena_elo_lower, arena_elo_upper).

    Reads `system_id,rating[,lower,upper]` or a `models.json`. Ratings already stored under
    the same source are replaced, and the output says how many (`--json`: `replaced`); the
    Rankings page asks first.
    """
    from checkeval_core.annotation.preferences import PreferenceError, import_ratings

    if not file.exists():
        fail(f"{file}: no such file")
    try:
        res = import_ratings(open_db(), task, path=file, rating_field=field, source=source)
    except (PreferenceError, NotFound) as e:
        fail(str(e))
    if as_json:
        typer.echo(json.dumps(res))
        return
    typer.echo(f"imported {res['n_ratings']} ratings (source {res['source']!r}) into task "
               f"{res['task']!r}: {len(res['matched'])} systems of the task"
               + (f", {len(res['unmatched'])} not in the task" if res["unmatched"] else "")
               + (f"; replaced the {res['replaced']} ratings stored under that source"
                  if res["replaced"] else ""))


def _num(x: object, spec: str = ".3f") -> str:
    return fmt(x, int(spec[1:-1]))


def analyze_rankings(run: list[int] | None, aggregation: str | None, rankings: bool,
                     pairs: bool, tie_margin: float | None, reference: str | None,
                     bootstrap: int, as_json: bool, split: str = "all",
                     drop_biased: bool = False) -> None:
    """``checkeval analyze --run ID --rankings|--pairs [--json]`` (called by ``analyze``)."""
    from checkeval_core.analysis.rankings import biased_annotators, pairs_report, rankings_report

    if not run or len(run) != 1:
        fail("--rankings / --pairs analyse one run: give exactly one --run RUN_ID")
    db = open_db()
    try:
        from checkeval_core.analysis.health import runs_health

        source = "given"
        if tie_margin is None:  # --tie-margin auto: the margin derived from the score spread
            tie_margin, source = runs_health(db, run, aggregation)[str(run[0])]["ties"][
                "derived_margin"], "derived"
            if math.isnan(tie_margin):
                raise ValueError(f"run {run[0]}: no tie margin can be derived (fewer than 2 "
                                 "scored items); give --tie-margin NUMBER")
        drop = biased_annotators(pairs_report(db, run[0], aggregation, tie_margin=tie_margin,
                                              split=split)["position_bias"]) \
            if drop_biased else []
        rep = rankings_report(db, run[0], aggregation, tie_margin=tie_margin, n_boot=bootstrap,
                              reference_source=reference, split=split,
                              exclude_annotators=drop) if rankings else None
        prs = pairs_report(db, run[0], aggregation, tie_margin=tie_margin,
                           split=split, exclude_annotators=drop) if pairs else None
        health = runs_health(db, run, aggregation, tie_margin)
    except (NotFound, ValueError) as e:
        fail(str(e))
    if rep is not None and prs is not None:
        out = {**rep, "instance": prs}
    else:
        out = rep if rep is not None else prs
    out = {**out, "tie_margin_source": source, "health": health}
    out = clean_json(out)
    if as_json:
        typer.echo(json.dumps(out))
        return
    if rep is not None:
        r = out
        typer.echo(f"== run {r['run']} {r['judge']} {r['method']} · {r['aggregation']} · "
                   f"{r['n_systems']} systems × {r['n_queries']} queries · reference "
                   f"{r['reference_source'] or '—'}")
        typer.echo(f"{'rank':>4}  {'system':<40} {'score':>6}  {'95% CI':<15} {'ref':>8} "
                   f"{'elo':>7}")
        for s in r["systems"]:
            ci = fmt_ci(s["ci"], 3)
            typer.echo(f"{s['rank'] or '—':>4}  {s['system'][:40]:<40} {_num(s['score']):>6}  "
                       f"{ci:<15} {_num(s['reference'], '.1f'):>8} {_num(s['elo'], '.0f'):>7}")
        for c in ("spearman", "kendall"):
            v = r[c]
            typer.echo(f"{c:>8}: {_num(v['value'])} {fmt_ci(v['ci'], 3)} "
                       f"n={v['n']}" + (f"  ({v['reason']})" if v["reason"] else ""))
    if prs is not None:
        p = out if rep is None else out["instance"]
        typer.echo(f"pairs: n={p['n_pairs']} accuracy={_num(p['accuracy'])} "
                   f"tie_rate={_num(p['tie_rate'])} three_way={_num(p['three_way'])}"
                   + "".join(f"  ({k}: {v})" for k, v in p["reasons"].items()))
        pb = p["position_bias"]["overall"]
        if pb["n_votes"]:
            typer.echo("position bias: " + (
                f"left answer chosen in {pb['n_left']} of {pb['n_decisive']} non-tie votes "
                f"({pct(pb['share'])}, "
                f"{Figure(pb['share'], pb['ci']).ci_text(0, percent=True, label='95% CI ')})"
                if pb["reason"] is None else f"undefined ({pb['reason']})"))
        for w in p["position_bias"]["warnings"]:
            typer.echo(f"position bias: {w}")
        if (p.get("repeated_votes") or {}).get("note"):
            typer.echo(f"repeated votes: {p['repeated_votes']['note']}")
    typer.echo(f"tie margin: {tie_margin:g} ({source})")
    for w in out["health"][str(run[0])]["warnings"]:
        typer.echo(f"health: {w['message']}")
