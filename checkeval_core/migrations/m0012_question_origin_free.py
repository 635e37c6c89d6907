"""The ``question`` table without ``CHECK (origin IN (…))``: the code validates origins.

A question proposed from evidence (``origin = 'proposal'``) is a new kind of origin; the
list lives in :data:`checkeval_core.checklists.editing.ORIGINS`, which ``add_question``
checks. The table is rebuilt with foreign keys off (``REBUILDS_TABLES``), so answers,
annotations and review decisions that reference questions are kept.
"""

import re

import sqlite_utils

from checkeval_core.migrations._rebuild import drop_check

REBUILDS_TABLES = True

_ORIGIN_CHECK = re.compile(r"\s*CHECK\s*\(\s*origin\s+IN\s*\([^()]*\)\s*\)", re.IGNORECASE)


def apply(db: sqlite_utils.Database) -> None:
    drop_check(db, "question", _ORIGIN_CHECK)
