"""``checkeval run``'s batch modes: ``--batch-out DIR [--shards N]``, ``--resume R --batch-in
FILE…`` and ``--batch`` (the provider's Batch API). ``run_cmds.run_cmd`` reads the flags and
calls :func:`check_flags` first, :func:`check_specs` before a run is created, and
:func:`batch_runs` instead of executing the runs online."""

from __future__ import annotations

import json
from typing import Any

import typer

from checkeval_core.cli.app import fail


def check_flags(batch_out: str | None, shards: int, batch_in: bool, batch: bool,
                files: list[str] | None, resume: int | None, estimate: bool) -> str | None:
    """The batch mode asked for (``out``, ``in``, ``api``) or None; exit 2 on a bad mix."""
    modes = [m for m, on in (("out", batch_out is not None), ("in", batch_in),
                             ("api", batch)) if on]
    if len(modes) > 1:
        fail("give one of --batch-out, --batch-in and --batch")
    mode = modes[0] if modes else None
    if files and mode != "in":
        fail(f"unexpected argument {files[0]!r} (result files go after --batch-in)")
    if mode == "in" and (resume is None or not files):
        fail("--batch-in needs --resume RUN_ID and one or more result FILEs")
    if shards != 1 and mode != "out":
        fail("--shards goes with --batch-out")
    if mode == "out" and not 1 <= shards <= 10_000:
        fail("--shards must be between 1 and 10000")
    if mode and estimate:
        fail("--estimate shows the batch price beside the online one; give it without "
             f"--batch{'-out' if mode == 'out' else '-in' if mode == 'in' else ''}")
    return mode


def check_specs(db: Any, mode: str | None, judges: list[str], params: dict[str, Any],
                resume: int | None) -> str | None:
    """Refuse judges (or the resumed run) that cannot be batched, before anything is made.
    Returns the mode: a resumed run that was sent to the provider's Batch API (the Run page's
    worker, ``run --resume R``) goes on with it (``api``) — it polls, never submits twice."""
    from checkeval_core.runs.batch import check_batch_spec, check_batchable
    from checkeval_core.runs.jobs import get_run

    if resume is not None:
        run = get_run(db, resume)
        mode = mode or ("api" if run.get("batch") == "api" else None)
        if mode:
            check_batchable(run, api=mode == "api")
        return mode
    for j in judges if mode else []:
        check_batch_spec(j, params, api=mode == "api")
    return mode


def batch_runs(db: Any, run_ids: list[int], mode: str, batch_out: str | None, shards: int,
               files: list[str] | None, as_json: bool, quiet: bool) -> None:
    """Write batch files, store result files, or drive the provider's Batch API for each
    run; prints one JSON object per run (a list for several) with ``--json``."""
    from checkeval_core.judges.batch_format import BatchFileError
    from checkeval_core.runs.jobs import RunBusy
    from checkeval_core.safeio import InputError, read_bytes
    from checkeval_core.store import NotFound, db_path

    out: list[dict[str, Any]] = []
    ok = True
    for run_id in run_ids:
        try:
            if mode == "out":
                from checkeval_core.runs.batch import write_batch_files

                res = write_batch_files(db, run_id, batch_out or ".", shards)
                text = (f"run {run_id}: {res['requests']} request(s) in "
                        f"{len(res['files'])} file(s): " + " ".join(res["files"]))
            elif mode == "in":
                from pathlib import Path

                from checkeval_core.runs.batch import store_batch_results

                data = [(Path(f).name, read_bytes(f)) for f in files or []]
                res = store_batch_results(db_path(db), run_id, data)
                text = (f"run {run_id}: {res['stored']} answer(s) stored, {res['skipped']} "
                        f"already stored, {res['failed']} failed at the provider, "
                        f"{res['pending']} pending · {res['status']}")
                for e in res["errors"]:
                    text += f"\n  {e}"
            else:
                res = _api(db, run_id, quiet)
                text = f"run {run_id}: {res['status']}, {res['n_answers']} answers"
                ok = ok and res["status"] == "completed"
        except (BatchFileError, InputError, NotFound, RunBusy, ValueError) as e:
            fail(str(e))
        out.append(res)
        if not as_json:
            typer.echo(text)
    if as_json:
        typer.echo(json.dumps(out[0] if len(out) == 1 else out, ensure_ascii=False))
    if not ok:
        raise typer.Exit(1)


def _api(db: Any, run_id: int, quiet: bool) -> dict[str, Any]:
    """``--batch``: the run through the provider's Batch API, progress (the provider's
    counts) on stderr; exit 1 with a resume hint when it ends without completing."""
    from checkeval_core.runs.batch_api import execute_batch
    from checkeval_core.store import db_path

    typer.echo(f"run {run_id} started (batch)", err=True)

    def progress(view: dict[str, Any]) -> None:
        if not quiet:
            states = ", ".join(f"{b['id']} {b['status']}" for b in view["batches"])
            typer.echo(f"{states}: {view['completed']}/{view['total']} requests done, "
                       f"{view['failed']} failed", err=True)

    try:
        run = execute_batch(db_path(db), run_id, progress=progress)
    except ImportError as e:
        fail(str(e), code=1)
    except ValueError as e:
        fail(str(e))
    except Exception as e:  # noqa: BLE001 - the batch ids are kept: resuming polls them
        typer.echo(f"run {run_id} failed: {e}\nresume with: checkeval run --resume {run_id}",
                   err=True)
        raise typer.Exit(1) from None
    if run["status"] != "completed" and run.get("error"):
        typer.echo(f"run {run_id} {run['status']}: {run['error']}", err=True)
    return {"run": run_id, "status": run["status"], "n_answers": run["n_answers"]}
