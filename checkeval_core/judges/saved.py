"""Saved judge configurations (the ``judge`` table): spec, params, and where the key comes from.

Only the *name* of the environment variable holding a key is stored, never the key itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlite_utils

from checkeval_core.judges.keys import check_key_source
from checkeval_core.judges.registry import parse_spec
from checkeval_core.store import now_iso, rows
from checkeval_core.team import guarded

DEFAULT_SPEC = "embedded"


@guarded("judge.save")
def add_judge(db: sqlite_utils.Database, spec: str, label: str = "", key_env: str = "",
              params: dict[str, Any] | None = None,
              secrets: Mapping[str, Any] | None = None) -> int:
    """Save a judge (validating the spec); returns its id (existing id if already saved).
    A key source must be a variable the operator declared and approved for the judge's
    address (``keys.check_key_source``); an endpoint may always be saved without one."""
    spec = parse_spec(spec).spec
    key_env = check_key_source(spec, key_env, secrets)
    p = json.dumps(params or {}, sort_keys=True)
    if any(k.lower() in ("api_key", "key", "secret") for k in (params or {})):
        raise ValueError("keys are never stored: use an environment variable name instead")
    # saving again with a key source updates it (the same spec and params are one judge)
    db.execute("INSERT INTO judge (spec, params, label, key_env, created_at) "
               "VALUES (?, ?, ?, ?, ?) ON CONFLICT (spec, params) DO UPDATE SET "
               "key_env = CASE WHEN excluded.key_env != '' THEN excluded.key_env "
               "ELSE judge.key_env END, label = CASE WHEN excluded.label != '' "
               "THEN excluded.label ELSE judge.label END",
               [spec, p, label, key_env, now_iso()])
    return db.execute("SELECT id FROM judge WHERE spec = ? AND params = ?", [spec, p]).fetchone()[0]


def ensure_default(db: sqlite_utils.Database) -> None:
    """The embedded judge is always there."""
    if db.execute("SELECT 1 FROM judge WHERE spec = ? AND params = '{}'",
                  [DEFAULT_SPEC]).fetchone():
        return
    add_judge(db, DEFAULT_SPEC, label="Embedded Qwen2.5-Coder-0.5B (CPU, offline)")


def list_judges(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    ensure_default(db)
    out = rows(db, "SELECT id, spec, params, label, key_env, created_at FROM judge ORDER BY id")
    for r in out:
        r["params"] = json.loads(r["params"])
    return out


@guarded("judge.save")
def delete_judge(db: sqlite_utils.Database, judge_id: int) -> None:
    db.execute("DELETE FROM judge WHERE id = ? AND spec != ?", [judge_id, DEFAULT_SPEC])
