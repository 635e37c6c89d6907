"""Reference runs: per checklist version × judge × method the figures use the run covering the
most items, or the one a person pinned. The demo as shipped, then a routine 3-item ``fake``
run of the newest version (the README's step 3): ``checkeval versions --json`` still reports
that version from the 192-item run on dev and held-out, and Versions, Compare runs and
Improve checklist open on the same runs as before."""

from __future__ import annotations

import json

import pytest

from checkeval_core.runs import create_run, execute_run, list_runs
from checkeval_core.runs.labels import run_label, run_labels
from checkeval_core.runs.selection import (
    comparability,
    default_pair,
    pin_reference,
    reference_runs,
    unpin_reference,
)
from tests.conftest import open_app_page
from tests.helpers import cli, demo_template, fake_demo_runs, restore

TASK = "summeval-demo"


@pytest.fixture
def shipped(db, monkeypatch):
    """The demo with its shipped runs (both embedded judges, versions 2 and 3, the split)."""
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "1")
    restore(demo_template(), db)
    return db


def _v3(rep: dict) -> dict:
    """The reference rows of version 3 × embedded × rocketeval, human scores, own aggregation."""
    out = {}
    for r in rep["rows"]:
        if (r["version"], r["judge"], r["method"], r["evidence"]) == (
                3, "embedded", "rocketeval", "human_scores") and r["primary"] \
                and r["reference"]:
            out[r["dimension"]] = r
    return out


def _opening(db) -> dict:
    """What Versions, Compare runs and Improve checklist open on."""
    vs = open_app_page("app_pages/versions.py")
    table = next(d.value for d in vs.dataframe if "statistic" in d.value.columns)
    cmp = open_app_page("app_pages/compare.py")
    im = open_app_page("app_pages/improve.py")
    return {"versions": sorted(table["run"].tolist()),
            "compare": (cmp.selectbox(key="cmp_a").value, cmp.selectbox(key="cmp_b").value),
            "improve": im.multiselect(key="im_runs").value}


def test_a_small_run_never_replaces_the_full_run(shipped, db_path):
    db = shipped
    before_cli = json.loads(cli(db_path, "versions", "--task", TASK, "--json",
                                "--bootstrap", "50").stdout)
    before = _v3(before_cli)
    assert before and {r["run_label"].endswith("192 items") for r in before.values()} == {True}
    full = next(iter(before.values()))["run"]
    pages_before = _opening(db)
    assert pages_before["compare"][1] == full and pages_before["improve"] == [full]

    small = create_run(db, TASK, "fake", "rocketeval", checklist=3, limit=3)
    execute_run(db_path, small)
    assert run_labels(db, [small])[small] == f"#{small} · v3 · fake · rocketeval · 3 items"

    after_cli = json.loads(cli(db_path, "versions", "--task", TASK, "--json",
                               "--bootstrap", "50").stdout)
    after = _v3(after_cli)
    assert set(after) == set(before)
    for dim, r in after.items():
        assert r["run"] == full
        for part in ("dev", "heldout"):
            assert r["parts"][part]["value"] == before[dim]["parts"][part]["value"]
            assert r["parts"][part]["n_items"] == before[dim]["parts"][part]["n_items"]
    refs = {(r["version"], r["judge"], r["method"]): r for r in after_cli["reference_runs"]}
    assert refs[(3, "embedded", "rocketeval")]["run"] == full
    assert refs[(3, "fake", "rocketeval")]["run"] == small  # its own series, not embedded's
    # the table of the CLI lists the full run for v3 embedded, never the small one in its place
    text = cli(db_path, "versions", "--task", TASK, "--bootstrap", "0").stdout
    assert f"#{full} · v3 · embedded · rocketeval · 192 items" in text

    pages_after = _opening(db)
    assert pages_after["compare"] == pages_before["compare"]
    assert pages_after["improve"] == pages_before["improve"]
    assert set(pages_before["versions"]) <= set(pages_after["versions"])
    assert not any(x.startswith(f"#{small} ") for x in pages_after["versions"]
                   if "embedded" in x)


def test_pin_and_unpin_from_the_cli(db, db_path):
    big, _ = fake_demo_runs(db, 6)
    small = create_run(db, TASK, "fake", "rocketeval", limit=2)
    execute_run(db_path, small)
    key = ("fake", "rocketeval")

    def ref() -> int:
        return next(r["run"] for r in reference_runs(db, TASK)
                    if (r["judge"], r["method"]) == key)

    assert ref() == big  # the most items, though older
    r = cli(db_path, "runs", "--pin", str(small), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["run"] == small and ref() == small
    listing = json.loads(cli(db_path, "runs", "--task", TASK, "--json").stdout)
    row = {x["run"]: x for x in listing}
    assert row[small]["reference"] and row[small]["pinned"] and not row[big]["reference"]
    assert row[big]["label"] == f"#{big} · v1 · fake · rocketeval · 6 items"
    # Compare opens on the pinned run now (it is the key's reference)
    runs = [x for x in list_runs(db, TASK) if x["status"] == "completed"]
    assert small in default_pair(db, runs)
    assert cli(db_path, "runs", "--unpin", str(small)).returncode == 0
    assert ref() == big
    # bad input: a clear message, exit 2, nothing written
    bad = cli(db_path, "runs", "--pin", "999")
    assert bad.returncode == 2 and "999" in bad.stderr
    pending = create_run(db, TASK, "fake", "rocketeval", limit=1)
    bad = cli(db_path, "runs", "--pin", str(pending))
    assert bad.returncode == 2 and "pending" in bad.stderr
    assert db.execute("SELECT COUNT(*) FROM reference_run").fetchone()[0] == 0


def test_pin_survives_and_goes_with_its_run(db, db_path):
    big, _ = fake_demo_runs(db, 4)
    small = create_run(db, TASK, "fake", "rocketeval", limit=2)
    execute_run(db_path, small)
    other = create_run(db, TASK, "fake", "rocketeval", limit=3)
    execute_run(db_path, other)
    assert pin_reference(db, small)["replaced"] is None
    assert pin_reference(db, other)["replaced"] == small  # one pin per key
    assert unpin_reference(db, other) and not unpin_reference(db, other)
    db.execute("PRAGMA foreign_keys = ON")
    pin_reference(db, small)
    db.execute("DELETE FROM run WHERE id = ?", [small])
    assert db.execute("SELECT COUNT(*) FROM reference_run").fetchone()[0] == 0


def test_comparability_says_why(db, db_path):
    a, b = fake_demo_runs(db, 4)
    items = json.loads(db.execute("SELECT item_ids FROM run WHERE id = ?", [a]).fetchone()[0])
    late = create_run(db, TASK, "fake", "geval",
                      item_ids=[r[0] for r in db.execute(
                          "SELECT item_id FROM item WHERE task_id = (SELECT task_id FROM "
                          "run WHERE id = ?) AND id NOT IN (SELECT value FROM json_each(?)) "
                          "LIMIT 2", [a, json.dumps(items)])])
    execute_run(db_path, late)
    got = comparability(db, [a], [a, b, late])
    assert got[a] is None and got[b] is None
    assert "shares no item" in got[late]
    assert comparability(db, [], [late]) == {late: None}  # nothing selected yet


def test_one_label_everywhere(db, db_path):
    a, _ = fake_demo_runs(db, 3)
    row = next(r for r in list_runs(db, TASK) if r["id"] == a)
    want = f"#{a} · v1 · fake · rocketeval · 3 items"
    assert run_label(row) == want == run_labels(db, [a])[a]
    assert run_label({**row, "status": "running"}) == want + " · running"
    text = cli(db_path, "runs", "--task", TASK).stdout
    assert want in text
    assert f"== {want}" in cli(db_path, "analyze", "--run", a, "--bootstrap", "0").stdout


def test_versions_page_pins_and_unpins(db, db_path):
    big, _ = fake_demo_runs(db, 6)
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.task_split import set_split

    freeze(db, TASK)  # a second version: the page lists versions with their runs
    small = create_run(db, TASK, "fake", "rocketeval", checklist=1, limit=2)
    execute_run(db_path, small)
    set_split(db, TASK, 0.5, seed=0)
    at = open_app_page("app_pages/versions.py")
    refs = next(d.value for d in at.dataframe if "reference run" in d.value.columns)
    assert f"#{big} · v1 · fake · rocketeval · 6 items" in refs["reference run"].tolist()
    assert at.button(key="vs_unpin").disabled or at.selectbox(key="vs_pin_run").value != small
    at.selectbox(key="vs_pin_run").set_value(small).run()
    at.button(key="vs_pin").click().run()
    assert not at.exception, at.exception
    assert next(r["run"] for r in reference_runs(db, TASK)
                if (r["version"], r["method"]) == (1, "rocketeval")) == small
    table = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    assert any(x.startswith(f"#{small} ") for x in table["run"])  # the figures follow the pin
    at.button(key="vs_unpin").click().run()
    assert not at.exception, at.exception
    assert next(r["run"] for r in reference_runs(db, TASK)
                if (r["version"], r["method"]) == (1, "rocketeval")) == big


def test_versions_opens_on_what_the_change_touched_with_a_mean(shipped):
    from checkeval_core.analysis.versions import MEAN, touched_dimensions

    db = shipped
    touched = touched_dimensions(db, TASK, 2, 3)
    assert touched and "coherence" not in touched  # v2 → v3 pruned other dimensions
    at = open_app_page("app_pages/versions.py")
    sel = at.selectbox(key="vs_dim")
    assert sel.options[0] == MEAN and sel.value == touched[0]
    assert any("unchanged: coherence" in c.value.replace("\\", "") for c in at.caption)
    sel.set_value(MEAN).run()
    assert not at.exception, at.exception
    t = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    emb = t[t["run"].str.contains("· embedded · rocketeval · 192 items")]
    assert sorted(emb["version"]) == [2, 3]
    # an interval over documents where the part has enough of them, else the reason
    from checkeval_core.stats.bootstrap import MIN_GROUPS

    for _, r in emb.iterrows():
        assert r["groups"] > 1
        assert (r["95% CI"].startswith("[") if r["groups"] >= MIN_GROUPS
                else r["95% CI"].startswith("no interval: needs ≥"))
