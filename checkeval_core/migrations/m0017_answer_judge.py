"""Which judge gave each answer, and the first judge's answer when a second one replaced it.

A run can escalate the answers its judge is unsure of to a second judge (``runs/escalate.py``):
``judge`` is the spec of the judge whose verdict the row holds (existing rows: the run's
judge), and ``a_verdict`` / ``a_p_yes`` / ``a_latency_ms`` keep the first judge's answer on a
row the second judge answered (NULL otherwise), so the coverage–agreement curve and the cost of
both judges can be read back from the run.
"""

STATEMENTS = [
    "ALTER TABLE answer ADD COLUMN judge TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE answer ADD COLUMN a_verdict TEXT",
    "ALTER TABLE answer ADD COLUMN a_p_yes REAL",
    "ALTER TABLE answer ADD COLUMN a_latency_ms REAL",
    "UPDATE answer SET judge = (SELECT judge_spec FROM run WHERE run.id = answer.run_id)",
]


def apply(db) -> None:
    have = set(db["answer"].columns_dict)
    for sql in STATEMENTS:
        # a column already there (a database written by code that had it) is kept as it is
        if sql.startswith("ALTER") and sql.split("COLUMN ")[1].split()[0] in have:
            continue
        db.execute(sql)
