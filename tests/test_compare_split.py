"""Compare runs reads the split: ``checkeval compare --split dev|heldout|all`` and a control on
the page that opens on held-out groups when the task has a split; the Analysis table says why
``n documents`` is below ``groups``."""

from __future__ import annotations

import json

from checkeval_core.analysis.notes import correlation_table
from checkeval_core.task_split import set_split
from tests.conftest import open_app_page
from tests.helpers import cli, fake_demo_runs


def test_compare_reads_one_part_of_the_split(db, db_path):
    a, b = fake_demo_runs(db, 64)  # 4 documents × 16 summaries
    nosplit = cli(db_path, "compare", "--run", a, "--run", b, "--split", "heldout", "--json")
    assert nosplit.returncode == 2 and "no dev / held-out split" in nosplit.stderr
    sp = set_split(db, "summeval-demo", 0.5, seed=0)
    whole = json.loads(cli(db_path, "compare", "--run", a, "--run", b, "--json",
                           "--bootstrap", "50").stdout)
    held = json.loads(cli(db_path, "compare", "--run", a, "--run", b, "--json", "--split",
                          "heldout", "--bootstrap", "50").stdout)
    assert whole["n_groups"] == 4 and "split" not in whole  # all groups: as before
    ran = {i["group"] for i in whole["items"]}
    want = ran & set(sp["heldout"])
    assert 0 < len(want) < 4  # the demo's seed-0 split puts the runs' documents on both sides
    assert held["n_groups"] == held["agreement"]["n_groups"] == len(want)
    assert held["split"] == {**held["split"], "which": "heldout",
                             "n_groups": len(sp["heldout"])}
    assert {i["group"] for i in held["items"]} == want
    assert held["n_common_items"] == 16 * len(want)
    text = cli(db_path, "compare", "--run", a, "--run", b, "--split", "dev",
               "--bootstrap", "0").stdout
    assert f"read on the {len(sp['dev'])} dev groups of the task's split only" in text
    bad = cli(db_path, "compare", "--run", a, "--run", b, "--split", "test")
    assert bad.returncode == 2 and "--split" in bad.stderr


def test_compare_page_opens_on_held_out_groups(db, db_path):
    a, b = fake_demo_runs(db, 64)
    at = open_app_page("app_pages/compare.py")
    assert at.radio(key="cmp_split_1").options == ["all groups"]  # no split: nothing else
    sp = set_split(db, "summeval-demo", 0.5, seed=0)
    at = open_app_page("app_pages/compare.py")
    r = at.radio(key="cmp_split_3")
    assert r.value == "heldout" and r.options == ["held-out groups", "dev groups", "all groups"]
    assert any(f"read on the {len(sp['heldout'])} held-out groups" in c.value.replace("\\", "")
               for c in at.caption)
    r.set_value("all").run()
    assert not at.exception, at.exception
    assert not any("groups of the task" in c.value.replace("\\", "") for c in at.caption)


def test_fewer_documents_than_groups_is_explained():
    per_run = {"1": {"label": "#1", "dimensions": {"coherence": {
        "sample_level": {"spearman": 0.5, "n": 9, "ci": {"spearman": [0.1, 0.8]},
                         "skipped": 1, "reasons": {}},
        "support": {"n_items": 40, "n_groups": 10, "n_systems": 4}}},
        "average": {"sample_level": {"spearman": 0.5, "n": 1, "reasons": {}}},
        "support": {"n_items": 40, "n_groups": 10, "n_systems": 4}}}
    row = correlation_table(per_run, "sample_level", "spearman")[0]
    assert row["n documents"] == 9 and row["groups"] == 10
    assert row["note"].startswith("n documents 9 of 10 groups: the other 1 have a correlation "
                                  "that is undefined")
