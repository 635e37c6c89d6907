"""``checkeval bench grounded`` (issue 37 § 5) end to end with the fake judge on a SummEval-shaped
folder of 8 of the bundled demo's documents: three versions, the evidence rule as the only
reviewer, held-out Δ of the grown checklist against the seeds and the published checklist."""

from __future__ import annotations

import pytest

from checkeval_core.bench.grounded import RULE, bench_grounded
from checkeval_core.store import open_db
from tests.helpers import run_cli, summeval_bench_folder


@pytest.fixture
def summeval_folder(tmp_path):
    return summeval_bench_folder(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["checkeval", "rocketeval"])
def test_bench_grounded_with_the_fake_judge(summeval_folder, tmp_path, method):
    res = bench_grounded(summeval_folder, "fake", "fake", docs=8, items=8, n=1,
                         db_file=tmp_path / "b.db", n_boot=50, method=method)
    assert res["method"] == method
    v = res["versions"]
    assert v["seeds"] < v["grown"] < v["published"]
    g = res["generation"]
    assert g["added"] > 0 and g["kept"] + g["flagged"] <= g["added"]
    assert g["requests"] > 0 and g["from_cache"] == 0 and g["seconds"] >= 0
    assert set(g["by_strategy"]) == {"diversify", "elaborate", "contrastive"}
    db = open_db(res["db"])
    # every proposal decided by the rule, none by a person; the flagged ones rejected with it
    actors = {r[0] for r in db.execute("SELECT DISTINCT actor FROM review_event WHERE role = "
                                       "'analysis' AND action IN ('keep', 'reject')")}
    assert actors <= {RULE}
    assert not db.execute("SELECT 1 FROM question q JOIN task t ON t.id = q.task_id WHERE "
                          "t.name = ? AND q.status = 'proposed'", [res["task"]]).fetchone()
    # the versions run on the held-out documents only (nothing is reported on dev)
    held = set(res["heldout_docs"])
    run_groups = {r[0] for r in db.execute(
        "SELECT DISTINCT i.group_id FROM answer a JOIN item i ON i.id = a.item_id")}
    assert run_groups == held
    # every version run with the method asked for
    assert {r[0] for r in db.execute("SELECT DISTINCT method FROM run")} == {method}
    for key in ("grown_vs_seeds", "published_vs_seeds", "grown_vs_published"):
        rows_ = res["heldout"][key]
        assert rows_ and all(r["verdict"] or r["Δ on shared items (paired)"] for r in rows_)
        # 4 held-out documents: below the floor's minimum, no verdict is given
        assert any("too few groups" in r["verdict"] for r in rows_)
    bad = run_cli(["bench", "grounded", "--data", str(summeval_folder), "--docs", "0"],
                  db=tmp_path / "c.db")
    assert bad.exit_code == 2 and "--docs 0" in bad.stderr


def test_bench_grounded_refuses_an_unknown_method_before_anything(summeval_folder, tmp_path):
    out = run_cli(["bench", "grounded", "--data", str(summeval_folder), "--method", "nope",
                   "--db", str(tmp_path / "g.db")], db=tmp_path / "c.db")
    assert out.exit_code == 2 and "--method" in out.stderr and "nope" in out.stderr
    assert not (tmp_path / "g.db").exists()
    with pytest.raises(ValueError, match="--method"):
        bench_grounded(summeval_folder, "fake", "fake", docs=8, db_file=tmp_path / "h.db",
                       method="nope")
    assert not (tmp_path / "h.db").exists()
