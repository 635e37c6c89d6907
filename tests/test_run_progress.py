"""The Run page's ETA and run table (pure functions)."""

from datetime import UTC

from checkeval_core.runs.progress import eta_seconds, run_eta, run_table


def test_eta_counts_down_while_an_item_is_judged():
    # 2 of 4 items done, the 2nd finished 100 s after the start: 50 s per item, 2 left
    assert eta_seconds(100, 0, 2, 4) == 100
    assert eta_seconds(100, 30, 2, 4) == 70  # 30 s into item 3: less, not more
    assert eta_seconds(100, 500, 2, 4) == 0  # slower than average: never negative
    assert eta_seconds(None, None, 0, 4) is None  # no rate yet
    assert eta_seconds(100, 0, 4, 4) == 0.0


def test_run_eta_from_a_run_row():
    from datetime import datetime

    row = {"started_at": "2026-01-01T00:00:00+00:00", "progress_at": "2026-01-01T00:01:40+00:00",
           "progress_done": 2, "progress_total": 4}
    now = datetime(2026, 1, 1, 0, 2, 0, tzinfo=UTC)
    assert run_eta(row, now) == 80


def test_run_table_labels():
    rows = run_table([{"id": 3, "judge_spec": "fake", "method": "rocketeval", "status": "done",
                       "progress_done": 1, "progress_total": 2, "tokens_in": 5, "params":
                       '{"include_definition": true}'}])
    assert rows[0]["run"] == 3 and rows[0]["items done"] == 1
    assert "progress_done" not in rows[0] and rows[0]["options"] == "include_definition=true"
