"""``checkeval analyze``'s modes as sub-commands (``analyze runs|ensemble|metric|rankings|pairs|
judges|calibrated``) beside the older flag form (``analyze --run 3 --rankings``): each old form
still works and its sub-command prints exactly the same, on real runs."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from checkeval_core.cli import app
from checkeval_core.runs.jobs import create_run, execute_run
from checkeval_core.store import db_path
from tests.helpers import build_ranking_task, small_run


def analyze(*args: str) -> tuple[int, str]:
    """Exit code and what was printed: standard output when it succeeds (notes go to stderr —
    importing a metric file a second time says there that it replaced the first), else both."""
    r = CliRunner().invoke(app, ["analyze", *args])
    return r.exit_code, r.stdout if r.exit_code == 0 else r.output


def same(old: list[str], new: list[str], key: str | None) -> None:
    """The old flag form succeeds, and the sub-command prints exactly what it prints."""
    code, before = analyze(*old)
    assert code == 0, before
    if key is not None:  # a JSON answer of the mode's own shape, not an empty one
        assert key in json.loads(before), before[:300]
    assert analyze(*new) == (0, before)


@pytest.fixture
def demo_runs(demo_db, tmp_path) -> dict[str, str]:
    """Two finished fake runs of the SummEval demo (split 6/6) and an external metric file of
    the Topical-Chat demo."""
    a = small_run(demo_db, limit=48)
    b = create_run(demo_db, "summeval-demo", "fake", "checkeval", limit=48)
    execute_run(db_path(demo_db), b)
    metric = tmp_path / "m.csv"
    metric.write_text("item_id,coherence\n" + "".join(f"tc-{i:03d},{i % 5}\n" for i in range(72)))
    return {"a": str(a), "b": str(b), "metric": str(metric)}


def test_every_run_mode_as_a_sub_command_prints_what_its_flags_print(demo_runs):
    a, b, metric = demo_runs["a"], demo_runs["b"], demo_runs["metric"]
    two = ["--run", a, "--run", b, "--bootstrap", "20"]
    same(["--run", a, "--bootstrap", "20", "--json"],
         ["runs", "--run", a, "--bootstrap", "20", "--json"], "runs")
    same([*two, "--shared-items"], ["runs", *two, "--shared-items"], None)  # the text form
    same([*two, "--ensemble", "--json"], ["ensemble", *two, "--json"], "ensemble")
    same(["--task", "topical-chat-demo", "--metric-file", metric, "--bootstrap", "0", "--json"],
         ["metric", "--task", "topical-chat-demo", "--metric-file", metric, "--bootstrap", "0",
          "--json"], "dimensions")
    same(["--task", "summeval-demo", "--across-judges", "--bootstrap", "20", "--json"],
         ["judges", "--task", "summeval-demo", "--bootstrap", "20", "--json"], "rows")
    same(["--run", a, "--calibrated", "--labelled", "3", "--json"],
         ["calibrated", "--run", a, "--labelled", "3", "--json"], "runs")
    same(["--run", a, "--calibrated", "--labelled", "3"],
         ["calibrated", "--run", a, "--labelled", "3"], None)


def test_rankings_and_pairs_as_sub_commands(db):
    rid = str(build_ranking_task(db))
    same(["--run", rid, "--rankings", "--bootstrap", "20", "--json"],
         ["rankings", "--run", rid, "--bootstrap", "20", "--json"], "systems")
    same(["--run", rid, "--pairs", "--tie-margin", "0.05", "--json"],
         ["pairs", "--run", rid, "--tie-margin", "0.05", "--json"], "n_pairs")
    same(["--run", rid, "--rankings", "--exclude-position-biased"],
         ["rankings", "--run", rid, "--exclude-position-biased"], None)


def test_a_sub_command_refuses_the_flag_form_before_it_and_missing_options(db):
    rid = str(build_ranking_task(db))
    code, out = analyze("--json", "rankings", "--run", rid)
    assert code == 2 and "analyze rankings: give --json after the sub-command" in out
    code, out = analyze("--run", rid, "--rankings", "pairs")
    assert code == 2 and "give --run, --rankings after the sub-command" in out
    code, out = analyze("metric", "--task", "rank-demo")
    assert code == 2 and "--metric-file" in out
    code, out = analyze("rankings", "--run", rid, "--run", rid)  # the mode's own rule
    assert code == 2 and "give exactly one --run RUN_ID" in out
    code, out = analyze()  # no flag, no sub-command: what the flag form always said
    assert code == 2 and "give --run RUN_ID (repeatable)" in out
