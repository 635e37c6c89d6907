"""Checklist filtering results on each question (LLM verdict, failed criterion, reason,
the question it duplicates) — a proposal that humans review."""

STATEMENTS = [
    "ALTER TABLE question ADD COLUMN filter_verdict TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE question ADD COLUMN filter_criterion TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE question ADD COLUMN filter_reason TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE question ADD COLUMN duplicate_of_id INTEGER",
    "ALTER TABLE question ADD COLUMN filter_model TEXT NOT NULL DEFAULT ''",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
