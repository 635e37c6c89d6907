"""Pages are thin: no SQL in them (the core answers every question a page asks)."""

from __future__ import annotations

import re
from pathlib import Path

PAGES = Path(__file__).resolve().parent.parent / "app_pages"


def test_no_page_runs_sql() -> None:
    offenders = []
    for p in sorted(PAGES.glob("*.py")):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"\.execute\(|\bSELECT\b|\bINSERT\b|\bUPDATE\b|\bDELETE FROM\b", line):
                offenders.append(f"{p.name}:{n}: {line.strip()}")
    assert not offenders, "SQL in pages:\n" + "\n".join(offenders)
