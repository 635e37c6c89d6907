"""``checkeval bench quality`` plumbing with the fake judge on a small bundled-data subset."""

import json

import pytest

from tests.helpers import bench_folder_from_demo, run_cli


def _bench_folder(tmp_path):
    """A benchmark folder made from the bundled demo (the real one lives beside the repo)."""
    return bench_folder_from_demo(tmp_path)


def test_bench_quality_fake(tmp_path):
    src = _bench_folder(tmp_path)
    r = run_cli(["bench", "quality",
                 "--benchmark", "summeval", "--data", str(src), "--judge", "fake",
                 "--method", "checkeval", "--docs", "3", "--db", str(tmp_path / "b.db"),
                 "--json"])
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["docs"] == 3 and res["items"] == 48 and res["level"] == "sample_level"
    assert set(res["table"]) == {"coherence", "consistency", "fluency", "relevance", "AVG"}
    assert set(res["table"]["AVG"]) == {"spearman", "kendall"}
    assert res["n_answers"] == 48 * 15
    # every aggregation of the run, the learned ones out of sample, and the baselines
    assert {"share_yes", "mean_p_yes", "linear", "calibrated"} <= set(res["aggregations"])
    assert set(res["runs"][0]["aggregations"]["calibrated"]) == set(res["table"])
    assert set(res["baselines"]) == {"length"}  # the demo rows carry no reference list
    assert -1 <= res["baselines"]["length"]["AVG"]["spearman"] <= 1
    # a rerun reuses the finished run: same numbers, no new answers
    again = run_cli(r.args)
    res2 = json.loads(again.stdout)
    assert res2["runs"][0]["run"] == res["runs"][0]["run"]
    assert res2["table"] == res["table"]
    bad = run_cli(["bench", "quality",
                   "--benchmark", "nope", "--data", str(src), "--judge", "fake"])
    assert bad.returncode == 2 and "summeval or topical_chat" in bad.stderr


def test_format_table_shows_undefined_cells_as_dash():
    # a judge that answers Yes to everything has a constant share_yes: its correlation is
    # undefined (None in the JSON) and the text table must still print
    from checkeval_core.bench.quality import format_table

    cell = {"spearman": 0.5, "kendall": 0.25}
    res = {"benchmark": "summeval", "method": "rocketeval", "docs": 2, "items": 4,
           "questions": "seed", "level": "sample_level", "params": {},
           "table": {"fluency": cell, "AVG": cell},
           "runs": [{"judge": "embedded:quality", "run": 1, "n_answers": 4, "wall_s": 0,
                     "cpu_s": 0, "run_wall_s": 1,
                     "aggregations": {"share_yes": {"fluency": {"spearman": None,
                                                                "kendall": None},
                                                    "AVG": None},
                                      "mean_p_yes": {"fluency": cell, "AVG": cell}}}],
           "baselines": {}}
    text = format_table(res)
    share = next(x for x in text.splitlines() if "share_yes" in x)
    assert share.split()[-2:] == ["—", "—"]  # undefined: one dash, not one per coefficient
    assert "0.50/0.25" in next(x for x in text.splitlines() if "mean_p_yes" in x)


@pytest.mark.slow  # two full fake runs with bootstrap: 15-28 s on 2 cores
def test_bench_quality_member_with_its_own_options(tmp_path):
    """``--member "SPEC KEY=VALUE"``: another prompt layout of the same judge joins the
    ensemble as its own run."""
    src = _bench_folder(tmp_path)
    base = ["bench", "quality", "--benchmark",
            "summeval", "--data", str(src), "--judge", "fake", "--method", "rocketeval",
            "--docs", "3", "--db", str(tmp_path / "b.db")]
    r = run_cli([*base, "--member", "fake include_definition=true", "--json"])
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert [(x["judge"], x["variant"]) for x in res["runs"]] == \
        [("fake", {}), ("fake", {"include_definition": True})]
    assert res["runs"][0]["run"] != res["runs"][1]["run"]
    assert {"mean_p_yes", "stack", "stack_len"} <= set(res["ensemble"])
    from checkeval_core.runs.jobs import get_run
    from checkeval_core.store import open_db
    run2 = get_run(open_db(tmp_path / "b.db"), res["runs"][1]["run"])
    assert run2["params"]["include_definition"] is True
    text = run_cli([*base, "--member", "fake include_definition=true"]).stdout
    assert "fake [include_definition=true] mean_p_yes" in text
    bad = run_cli([*base, "--member", "fake colour=red"])
    assert bad.returncode == 2 and "'colour': unknown option" in bad.stderr


def test_bench_quality_skip_holds_out_the_first_documents(tmp_path):
    """``--skip N``: a confirmation set disjoint from the first N documents, in its own task."""
    from checkeval_core.bench.quality import BENCHMARKS, _load_rows

    src = _bench_folder(tmp_path)
    _, g1 = _load_rows(src, BENCHMARKS["summeval"], 3)
    later, g2 = _load_rows(src, BENCHMARKS["summeval"], 3, skip=3)
    assert len(g1) == len(g2) == 3 and not set(g1) & set(g2)
    assert {r["group_id"] for r in later} == set(g2) and len(later) == 48
    bench_db = tmp_path / "b.db"
    base = ["bench", "quality", "--benchmark",
            "summeval", "--data", str(src), "--judge", "fake", "--method", "rocketeval",
            "--docs", "3", "--db", str(bench_db)]
    # refused before the bench database is created
    bad = run_cli([*base, "--skip", "500"])
    assert bad.returncode == 2 and "no documents after the first 500" in bad.stderr
    assert not bench_db.exists()
    r = run_cli([*base, "--skip", "3", "--json"])
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["docs"] == 3 and res["skip"] == 3 and res["items"] == 48
    assert res["task"].endswith("-skip3")


def test_no_default_benchmark_folder(tmp_path):
    """The benchmarks are not shipped: without --data (or CHECKEVAL_BENCH_DATA) a bench
    command says what to give, before any judge call."""
    for bench in ("quality", "heldout"):
        r = run_cli(["bench", bench, "--benchmark", "summeval", "--judge", "fake",
                     "--db", str(tmp_path / "b.db")], env={"CHECKEVAL_BENCH_DATA": None})
        assert r.returncode == 2, r.stderr
        assert "--data" in r.stderr and "CHECKEVAL_BENCH_DATA" in r.stderr
