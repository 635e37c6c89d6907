"""A stable id per pairwise vote (``preference.vote_id``), unique within a task.

Votes used to be told apart by (pair, source, annotator), and the source of an import is its
file name: exporting the app's votes and importing the file into the same database stored
every vote a second time. Now each vote carries an id — the app draws one when a vote is
first given, an import reads it from the file's ``vote_id`` column or derives it from the file
name, the annotator and the pair in canonical order — and an import skips ids already stored.

The old ``UNIQUE (task_id, item_a, item_b, source, annotator)`` goes (the table is rebuilt,
``REBUILDS_TABLES``): two votes of one annotator on one pair are two rows when they have two
ids (the annotator was asked twice). The app's one-vote-per-pair-and-annotator rule stays as a
partial unique index on its own votes. Existing rows get their id here (backfill).
"""

import hashlib
import re

import sqlite_utils

from checkeval_core.migrations._rebuild import drop_check

REBUILDS_TABLES = True

_PAIR_UNIQUE = re.compile(r",\s*UNIQUE\s*\(\s*task_id\s*,\s*item_a\s*,\s*item_b\s*,\s*source\s*,"
                          r"\s*annotator\s*\)", re.IGNORECASE)


def derived_vote_id(source: str, annotator: str, item_a: str, item_b: str) -> str:
    """The id of a vote that came without one (kept here as it was when this migration landed;
    ``annotation.preferences.derived_vote_id`` is the same function for imports)."""
    lo, hi = sorted((str(item_a), str(item_b)))
    return "v" + hashlib.sha256(f"{source}\x1f{annotator}\x1f{lo}\x1f{hi}".encode()
                                ).hexdigest()[:20]


def apply(db: sqlite_utils.Database) -> None:
    db.execute("ALTER TABLE preference ADD COLUMN vote_id TEXT")
    taken: dict[tuple[int, str], int] = {}
    for pid, tid, source, annotator, a, b in db.execute(
            "SELECT p.id, p.task_id, p.source, p.annotator, ia.item_id, ib.item_id FROM "
            "preference p JOIN item ia ON ia.id = p.item_a JOIN item ib ON ib.id = p.item_b "
            "ORDER BY p.id").fetchall():
        vid = derived_vote_id(source, annotator, a, b)
        # the same pair stored twice by one file (both orders, or anonymous voters): the
        # k-th in import order gets -k, as an import derives it (annotation/preferences.py)
        k = taken[(tid, vid)] = taken.get((tid, vid), 0) + 1
        vid = vid if k == 1 else f"{vid}-{k}"
        db.execute("UPDATE preference SET vote_id = ? WHERE id = ?", [vid, pid])
    # a row whose items are gone is deleted with them (ON DELETE CASCADE); none is left NULL
    db.execute("UPDATE preference SET vote_id = 'legacy-' || id WHERE vote_id IS NULL")
    drop_check(db, "preference", _PAIR_UNIQUE)
    db.execute("CREATE UNIQUE INDEX preference_vote_id ON preference (task_id, vote_id)")
    db.execute("CREATE UNIQUE INDEX preference_app_vote ON preference (task_id, item_a, item_b, "
               "annotator) WHERE source = 'app'")
