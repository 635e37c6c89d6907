"""The ``run`` table without ``CHECK (method IN (…))``: the method registry validates names.

A method added to :mod:`checkeval_core.runs.registry` must be storable without a schema
change; ``create_run`` and bundle import refuse unknown names with the available ones. The
table is rebuilt by :func:`checkeval_core.migrations._rebuild.drop_check` with foreign keys
off (``REBUILDS_TABLES``), so the answers, scores and units that reference runs are kept.
"""

import re

import sqlite_utils

from checkeval_core.migrations._rebuild import drop_check

REBUILDS_TABLES = True

_METHOD_CHECK = re.compile(r"\s*CHECK\s*\(\s*method\s+IN\s*\([^()]*\)\s*\)", re.IGNORECASE)


def apply(db: sqlite_utils.Database) -> None:
    drop_check(db, "run", _METHOD_CHECK)
