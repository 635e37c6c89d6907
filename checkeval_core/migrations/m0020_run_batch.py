"""A run's batch files and provider batches (``runs/batch.py``, ``runs/batch_api.py``).

``run.batch`` says how a run is asked: ``''`` online (the default), ``'files'`` (its pending
requests were written as OpenAI batch files, ``checkeval run --batch-out``) or ``'api'`` (the
provider's Batch API: a worker that resumes the run polls its batches instead of asking online
or submitting again). One ``run_batch`` row per written file or submitted batch: the judge it
belongs to, the file's name and request count, and for a provider batch its ids (batch, input,
output and error file), status, the provider's request counts, and whether its results were
stored.
"""

import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    cols = {r[1] for r in db.execute("PRAGMA table_info(run)").fetchall()}
    if "batch" not in cols:
        db.execute("ALTER TABLE run ADD COLUMN batch TEXT NOT NULL DEFAULT ''")
    db.execute(
        "CREATE TABLE IF NOT EXISTS run_batch ("
        " id INTEGER PRIMARY KEY,"
        " run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,"
        " judge_spec TEXT NOT NULL,"
        " mode TEXT NOT NULL,"            # 'files' | 'api'
        " file_name TEXT NOT NULL DEFAULT '',"
        " n_requests INTEGER NOT NULL DEFAULT 0,"
        " batch_id TEXT NOT NULL DEFAULT '',"
        " input_file_id TEXT NOT NULL DEFAULT '',"
        " output_file_id TEXT NOT NULL DEFAULT '',"
        " error_file_id TEXT NOT NULL DEFAULT '',"
        " status TEXT NOT NULL DEFAULT '',"
        " counts TEXT NOT NULL DEFAULT '{}',"
        " stored INTEGER NOT NULL DEFAULT 0,"
        " created_at TEXT NOT NULL,"
        " updated_at TEXT NOT NULL)")
    db.execute("CREATE INDEX IF NOT EXISTS run_batch_run ON run_batch (run_id)")
