"""Roles when people log in, and what each person did.

``team`` holds one row per grant or removal, only ever inserted: a person's role is their
latest row (``role`` empty: removed), and the rows before it are the history — who granted
what, when. ``audit_log`` holds one row per guarded write a logged-in person made: who, in
which role, the action, its target and when (``checkeval_core.team``).
"""

STATEMENTS = [
    """CREATE TABLE team (
        id INTEGER PRIMARY KEY,
        person TEXT NOT NULL,
        role TEXT NOT NULL DEFAULT '',
        granted_by TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX team_person ON team (person, id)",
    """CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        person TEXT NOT NULL,
        role TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX audit_log_person ON audit_log (person, id)",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
