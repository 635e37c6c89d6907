"""Dev / held-out split of a task: deterministic, balanced, stable when groups are added,
stored with the task, read by analyses (``filter_items_by_split``, ``analyze --split``) and
by the CLI (``checkeval split``)."""

from __future__ import annotations

import json

import pytest

from checkeval_core import task_split as S
from tests.helpers import run_cli


def _task(db, name="t", groups=6, per=3, start=0, systems=("s1", "s2", "s3")):
    """``groups`` groups × ``per`` items (systems cycled), with a human score each."""
    from checkeval_core.datasets import import_file

    recs = []
    for g in range(start, start + groups):
        for k in range(per):
            recs.append({"id": f"g{g}-{k}", "group_id": f"g{g}", "system_id": systems[k % 3],
                         "source": f"doc {g}", "output": f"summary {g}.{k}",
                         "coherence": float((g * 7 + k * 3) % 5 + 1)})
    import_file(db, None, name, kind="summarization", filename="items.jsonl",
                data="\n".join(json.dumps(r) for r in recs).encode())


# -- pure assignment ---------------------------------------------------------------------------
def test_assign_is_deterministic_and_seeded():
    keys = [f"doc{i}" for i in range(20)]
    a = S.assign(keys, 0.5, seed=3)
    assert a == S.assign(list(reversed(keys)), 0.5, seed=3)  # order of the input is irrelevant
    assert S.assign(keys, 0.5, seed=4) != a  # another seed, another split
    # the order is the seeded hash's: recomputed independently here
    order = sorted(keys, key=lambda k: (S.key_position(k, 3), k))
    assert S.parts_of(a)["heldout"] == sorted(order[:10])


@pytest.mark.parametrize("n,share,heldout", [(12, 0.5, 6), (10, 0.25, 3), (3, 0.5, 2),
                                             (2, 0.1, 1), (2, 0.9, 1), (1, 0.5, 0)])
def test_assign_balances_by_count(n, share, heldout):
    a = S.assign([f"k{i}" for i in range(n)], share, seed=0)
    assert sum(v == "heldout" for v in a.values()) == heldout
    assert len(a) == n


def test_adding_groups_keeps_every_existing_assignment():
    first = S.assign([f"k{i}" for i in range(10)], 0.5, seed=1)
    grown = S.assign([f"k{i}" for i in range(15)], 0.5, seed=1, existing=first)
    assert {k: grown[k] for k in first} == first
    assert sum(v == "heldout" for v in grown.values()) == 8  # round(0.5 · 15), new keys fill it
    # existing keys not in the new key list are kept too (a split never forgets a group)
    assert S.assign(["k0"], 0.5, seed=1, existing=first) == first


def test_bad_share_and_which_rejected():
    for bad in (0, 1, -0.2, 1.5, float("nan")):
        with pytest.raises(S.SplitError, match="between 0 and 1"):
            S.assign(["a", "b"], bad)
    with pytest.raises(S.SplitError, match="dev, heldout or all"):
        S.check_which("test")


# -- stored with the task ------------------------------------------------------------------------
def test_set_twice_changes_nothing_and_new_groups_are_placed(db):
    _task(db, groups=6)
    assert S.get_split(db, "t")["defined"] is False  # default: no split
    s1 = S.set_split(db, "t", 0.5, seed=7)
    assert s1["changed"] and len(s1["dev"]) == 3 and len(s1["heldout"]) == 3
    assert s1["systems"] is None and s1["by_system"] is False  # no reference ratings
    s2 = S.set_split(db, "t", 0.5, seed=7)
    assert s2["changed"] is False and (s2["dev"], s2["heldout"]) == (s1["dev"], s1["heldout"])
    _task(db, groups=4, start=6)  # four more documents imported later
    s3 = S.get_split(db, "t")
    assert sorted(s3["unassigned"]) == ["g6", "g7", "g8", "g9"]
    s4 = S.set_split(db, "t", 0.5, seed=7)
    assert set(s1["dev"]) <= set(s4["dev"]) and set(s1["heldout"]) <= set(s4["heldout"])
    assert len(s4["heldout"]) == 5 and not s4["unassigned"]
    s5 = S.set_split(db, "t", 0.5, seed=8)  # another seed: a fresh split
    assert s5["changed"] and s5["seed"] == 8 and len(s5["heldout"]) == 5
    assert S.clear_split(db, "t") is True and S.get_split(db, "t")["defined"] is False
    assert S.clear_split(db, "t") is False  # pressing it twice is harmless


def test_filter_items_by_split_partitions_by_group(db):
    from checkeval_core.tasks import items

    _task(db, groups=6)
    with pytest.raises(S.SplitError, match="no dev / held-out split"):
        S.filter_items_by_split(db, "t", items(db, "t"), "dev")
    s = S.set_split(db, "t", 0.5, seed=0)
    its = items(db, "t")
    dev = S.filter_items_by_split(db, "t", its, "dev")
    held = S.filter_items_by_split(db, "t", its, "heldout")
    assert {i["group_id"] for i in dev} == set(s["dev"])
    assert {i["group_id"] for i in held} == set(s["heldout"])
    assert len(dev) + len(held) == len(its) == 18
    assert S.filter_items_by_split(db, "t", its, "all") == its


def test_ranking_task_splits_systems_too(db):
    from tests.helpers import build_ranking_task

    build_ranking_task(db)  # 4 queries × 3 systems, with reference ratings
    s = S.set_split(db, "rank-demo", 0.5, seed=0)
    assert s["by_system"] is True
    assert sorted(s["systems"]["dev"] + s["systems"]["heldout"]) == ["sys-best", "sys-low",
                                                                     "sys-mid"]
    from checkeval_core.tasks import items

    held = S.filter_items_by_split(db, "rank-demo", items(db, "rank-demo"), "heldout")
    assert held and all(i["group_id"] in s["heldout"] and
                        i["system_id"] in s["systems"]["heldout"] for i in held)
    assert S.set_split(db, "rank-demo", 0.5, seed=0, by_system=False)["systems"] is None


# -- CLI ------------------------------------------------------------------------------------------
def cli(db_path, *args, input=None):
    return run_cli(list(args), db=db_path, input=input)


def test_cli_split_json_show_clear(db, db_path):
    _task(db, groups=6)
    r = cli(db_path, "split", "--task", "t", "--heldout-share", "0.5", "--seed", "2", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert len(out["dev"]) == 3 and len(out["heldout"]) == 3
    assert set(out["dev"]) | set(out["heldout"]) == {f"g{i}" for i in range(6)}
    assert out == {**out, "seed": 2, "heldout_share": 0.5, "defined": True}
    shown = json.loads(cli(db_path, "split", "--task", "t", "--show", "--json").stdout)
    assert (shown["dev"], shown["heldout"]) == (out["dev"], out["heldout"])
    r = cli(db_path, "split", "--task", "t", "--clear", "--json")
    assert r.returncode == 2 and "--yes" in r.stderr  # never removed without consent
    r = cli(db_path, "split", "--task", "t", "--clear", input="n\n")
    assert r.returncode != 0 and json.loads(cli(db_path, "split", "--task", "t", "--show",
                                                "--json").stdout)["defined"]
    r = cli(db_path, "split", "--task", "t", "--clear", "--yes", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["defined"] is False
    r = cli(db_path, "split", "--task", "t", "--heldout-share", "1.2")
    assert r.returncode == 2 and "between 0 and 1" in r.stderr
    r = cli(db_path, "split", "--task", "nope")
    assert r.returncode == 2 and "no task named 'nope'" in r.stderr


def test_analyze_split_reads_one_part_and_says_which(db, db_path):
    from checkeval_core.analysis.report import analyze_runs
    from tests.helpers import fake_demo_runs

    rid = fake_demo_runs(db, 64)[1]  # 4 documents × 16 summaries
    r = cli(db_path, "analyze", "--run", str(rid), "--split", "dev", "--json")
    assert r.returncode == 2 and "no dev / held-out split" in r.stderr
    s = S.set_split(db, "summeval-demo", 0.5, seed=0)
    ran = {g for g in s["dev"] + s["heldout"]} & {
        r[0] for r in db.execute("SELECT DISTINCT i.group_id FROM score s JOIN item i ON "
                                 "i.id = s.item_id WHERE s.run_id = ?", [rid])}
    for which in ("dev", "heldout", "all"):
        r = cli(db_path, "analyze", "--run", str(rid), "--split", which, "--json",
                "--bootstrap", "20")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["split"]["which"] == which and out["split"]["defined"] is True
        n_docs = out["runs"][str(rid)]["dimensions"]["coherence"]["dataset_level"]["n"] // 16
        expect = len(ran & set(s[which])) if which != "all" else len(ran)
        assert n_docs == expect
    # the same numbers as the library on the filtered frame
    lib = analyze_runs(db, [rid], n_boot=0, split="dev")
    assert lib["split"]["n_groups"] == 6
    r = cli(db_path, "analyze", "--run", str(rid), "--split", "test")
    assert r.returncode == 2 and "dev, heldout or all" in r.stderr


def test_analyze_rankings_and_pairs_on_one_part(db, db_path):
    from tests.helpers import build_ranking_task

    rid = build_ranking_task(db)
    s = S.set_split(db, "rank-demo", 0.5, seed=0)
    r = cli(db_path, "analyze", "--run", str(rid), "--rankings", "--split", "heldout",
            "--json", "--bootstrap", "20")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["split"]["which"] == "heldout" and out["split"]["n_systems"] == len(
        s["systems"]["heldout"])
    assert {x["system"] for x in out["systems"]} == set(s["systems"]["heldout"])
    assert out["n_queries"] == len(s["heldout"])
    r = cli(db_path, "analyze", "--run", str(rid), "--pairs", "--split", "heldout", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["split"]["which"] == "heldout"
    # seed 0 holds out g1, g2 and sys-best, sys-mid: of the four votes only g2's
    # (sys-mid vs sys-best) has both answers in the held-out part
    assert (s["heldout"], s["systems"]["heldout"]) == (["g1", "g2"], ["sys-best", "sys-mid"])
    assert [(p["group_id"], p["system_a"], p["system_b"]) for p in out["pairs"]] == [
        ("g2", "sys-mid", "sys-best")]
    every = json.loads(cli(db_path, "analyze", "--run", str(rid), "--pairs", "--json").stdout)
    assert every["split"]["which"] == "all" and every["n_preferences"] == 4


def test_page_report_reads_every_entry_on_the_part(db):
    """The Analysis page's report: each run and the ensemble read the same part's items."""
    from checkeval_core.analysis.report import page_report
    from tests.helpers import fake_demo_runs

    runs = fake_demo_runs(db, 64)  # the first 4 documents × 16 summaries
    s = S.set_split(db, "summeval-demo", 0.5, seed=0)
    ran = [r[0] for r in db.execute("SELECT DISTINCT i.group_id FROM score s JOIN item i ON "
                                    "i.id = s.item_id WHERE s.run_id = ?", [runs[0]])]
    n_held = len(set(ran) & set(s["heldout"]))
    assert 0 < n_held < 4
    rep = page_report(db, "summeval-demo", runs, ensemble=True, n_boot=0, split="heldout")
    assert rep["split"]["which"] == "heldout" and len(rep["runs"]) == 3  # 2 runs + ensemble
    for entry in rep["runs"].values():
        assert entry["dimensions"]["coherence"]["dataset_level"]["n"] == 16 * n_held
        assert entry["dimensions"]["coherence"]["sample_level"]["n"] <= n_held
