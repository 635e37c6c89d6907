"""AppTests of the Rankings page's readability: a default pair that some question decides,
the system column wide enough, ρ/τ printed once, the accuracy with its support and interval."""

from __future__ import annotations

import json

import pytest

from tests.helpers import build_ranking_task
from tests.helpers import open_rankings_page as _open


def _item(db, item_id: str) -> int:
    return db.execute("SELECT id FROM item WHERE item_id = ?", [item_id]).fetchone()[0]


def test_default_pair_decides_something(db):
    rid = build_ranking_task(db)
    # on the first query, the two best answers now get the same Yes/No everywhere (their
    # scores still differ): the default pair must not be one that decides nothing
    best, mid = _item(db, "g1:sys-best"), _item(db, "g1:sys-mid")
    db.execute("UPDATE answer SET verdict = (SELECT b.verdict FROM answer b WHERE b.run_id = "
               "answer.run_id AND b.question_id = answer.question_id AND b.unit = answer.unit "
               "AND b.item_id = ?) WHERE run_id = ? AND item_id = ?", [best, rid, mid])
    at = _open()
    summary = next(c.value for c in at.caption if "checklist questions got different" in c.value)
    assert not summary.startswith("0 of"), summary
    qs = next(d.value for d in at.dataframe if "p(Yes) A" in d.value.columns)
    assert (qs["decided"] == "◆").sum() >= 1
    # the chosen pair is on the first query, best answer against the closest that differs
    assert at.selectbox(key="rk_query").value == "g1"
    assert (at.selectbox(key="rk_sys_a").value, at.selectbox(key="rk_sys_b").value) == (
        "sys-best", "sys-low")


@pytest.mark.usefixtures("few_groups_allowed")
def test_rho_tau_once_system_column_wide_accuracy_with_support(db):
    build_ranking_task(db)
    at = _open()
    lines = [m.value for m in at.markdown if "Spearman ρ" in m.value]
    assert len(lines) == 1 and "n = 3 systems" in lines[0]
    # the other aggregations are listed without repeating the selected one
    other = next(c.value for c in at.caption if c.value.startswith("Other aggregations"))
    assert f"{at.selectbox(key='rk_agg').value}:" not in other
    scatter = json.loads(at.get("plotly_chart")[0].proto.spec)
    title = (scatter["layout"].get("title") or {}).get("text") or ""
    assert "ρ" not in title and "Spearman" not in title
    cfg = json.loads(at.dataframe(key="rk_board").proto.columns)
    assert cfg["system"]["width"] >= 200
    text = " ".join(c.value for c in at.caption)
    assert "Accuracy over 3 decisive pairs (human tie votes left out) on 3 queries and 3 " \
           "systems; 95% CI [" in text
