"""Pairwise votes given in the app: which of the two answers was shown first (as "A").

The app shows a pair in an order randomised per annotator and pair, and stores the vote in
the canonical order of the ``preference`` row (``item_a`` < ``item_b``). Keeping the shown
order lets an analysis check for a position bias of the annotators; imported preferences
leave it NULL (their files do not say).
"""

import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    db.execute("ALTER TABLE preference ADD COLUMN shown_first INTEGER REFERENCES item(id) "
               "ON DELETE SET NULL")
