"""``bench escalate --cold``: the cascades' second judge asked from a cold cache on held-out
documents, each part measured as it runs, with deterministic judges on the SummEval demo
subset (12 documents: 6 dev, 6 held out). No timing is asserted: only what was asked, of
whom, on which documents, and that every figure carries its interval."""

from __future__ import annotations

import json
import sqlite3

import pytest

from checkeval_core.judges.registry import Backend, register_backend
from tests.helpers import second_fake

CALLS: list[str] = []


# the question of every request the second judge executes
SecondFake = second_fake("fake-cold-2", lambda reqs: CALLS.extend(r.question for r in reqs))


@pytest.fixture()
def fake2():
    from checkeval_core.judges.spec import BACKENDS

    register_backend(Backend("fakecold", SecondFake, title="second fake, counted"))
    CALLS.clear()
    yield "fakecold"
    BACKENDS.pop("fakecold", None)


@pytest.fixture()
def src(tmp_path):
    from checkeval_core.config import data_dir

    out = tmp_path / "bench"
    (out / "checklists").mkdir(parents=True)
    rows = [json.loads(x) for x in (data_dir() / "summeval_demo.jsonl").read_text()
            .splitlines()]
    (out / "summeval.jsonl").write_text("".join(json.dumps(
        {"doc_id": r["group_id"], "system_id": r["system_id"], "source": r["source"],
         "references": [r["reference"]], "output": r["output"], "scores": r["scores"]}) + "\n"
        for r in rows))
    (out / "checklists" / "summeval.json").write_text(
        (data_dir() / "checklists" / "summeval.json").read_text())
    return out


def _held_groups(path, run_id):
    with sqlite3.connect(path) as c:
        return {g for (g,) in c.execute(
            "SELECT DISTINCT i.group_id FROM answer a JOIN item i ON i.id = a.item_id WHERE "
            "a.run_id = ?", [run_id])}


def test_cold_cascades_ask_b_for_real_on_heldout_only_and_resume(tmp_path, src, fake2):
    from checkeval_core.bench.escalate_cold import bench_escalate_cold, format_cold
    from checkeval_core.bench.quality import bench_quality

    bench = tmp_path / "bench.db"
    # both judges run in the bench database first: B's answers ARE in its cache there, so a
    # cold part that served them from a copied cache would make no call below
    bench_quality("summeval", src, ["fake", fake2], "rocketeval", docs=12, db_file=bench)
    CALLS.clear()
    cold = tmp_path / "cold"
    res = bench_escalate_cold(src, "fake", fake2, 12, ["a", "b", "answer", "item"],
                              ["answer", "item"], 0.1, db_file=bench, cold_dir=cold,
                              n_boot=50, curve_margins=(0.0, 0.5), calibrate=True)
    parts = res["parts"]
    n_items = res["n_items"]
    assert n_items == 96 and res["heldout_groups"] == 6 and res["dev_groups"] == 6
    # calibrating: part dev asked A about the dev items, and A's confidence was fitted there
    assert parts["a"]["n_items"] == 96 and "slope" in res["confidence_calibration"]
    assert "dev" not in parts and (cold / "dev.db").exists()
    # B alone executed every held-out request; the cascades executed B's escalated requests,
    # none served from a cache, and asked A nothing (its answers come from part a's cache)
    b_alone = sum(parts["b"]["executed"].values())
    assert b_alone > 0
    by = {r["name"]: r for r in res["rows"]}
    ans = by["cascade by answer, margin 0.1 (cold)"]
    item = by["cascade by item, margin 0.1 (cold)"]
    assert ans["a_executed"] == 0 and item["a_executed"] == 0
    assert 0 < ans["b_executed"] <= ans["n_escalated"]  # identical requests asked once
    assert 0 < item["b_executed"] <= b_alone
    assert len(CALLS) == b_alone + ans["b_executed"] + item["b_executed"]
    for name, r in (("answer", ans), ("item", item)):
        with sqlite3.connect(cold / f"{name}-0.1.db") as c:
            by_b = c.execute("SELECT COUNT(*), SUM(cached = 0) FROM answer WHERE run_id = ? AND "
                             "judge = ?", [r["run"], fake2]).fetchone()
        assert by_b[0] == r["n_escalated"] and by_b[1] == r["b_executed"]
    # by item: every answer of an escalated item went to B; by answer: only the unsure ones
    for name, r in (("item", item), ("answer", ans)):
        with sqlite3.connect(cold / f"{name}-0.1.db") as c:
            mixed = c.execute("SELECT COUNT(*) FROM (SELECT item_id FROM answer WHERE run_id = ?"
                              " AND question_id != 0 GROUP BY item_id HAVING COUNT(DISTINCT "
                              "judge) > 1)", [r["run"]]).fetchone()[0]
        assert (mixed == 0) if name == "item" else (mixed > 0)
    # every measured part ran on the held-out documents only
    held = _held_groups(cold / "a.db", parts["a"]["run"])
    assert len(held) == 6
    for p in ("b", "answer-0.1", "item-0.1"):
        assert _held_groups(cold / f"{p}.db", parts[p.split("-")[0]]["run"]) == held
    # per answer and per summary, with intervals over the 6 held-out documents
    for r in (by["A alone: fake"], by[f"B alone: {fake2}"], ans, item):
        assert r["n_groups"] == 6 and r["answer_ci"] is not None and r["rho_ci"] is not None
        assert r["answer_ci"][0] <= r["answer_agreement"] <= r["answer_ci"][1]
        assert r["n_summaries"] == 96
    assert by["A alone: fake"]["cpu_share"] + by[f"B alone: {fake2}"]["cpu_share"] == \
        pytest.approx(1.0)
    assert ans["cpu_per_item"] == pytest.approx(parts["a"]["cpu_s"] / 96 +
                                                parts["answer"]["second_cpu_s"] / n_items)
    # the curve from the caches: no request, margin 0 = A alone, margin 0.5 = B everywhere
    assert all(c["new_requests"] == 0 and c["cpu_per_item"] is None for c in res["curve"])
    zero = [c for c in res["curve"] if c["margin"] == 0.0]
    assert all(c["answer_agreement"] == pytest.approx(by["A alone: fake"]["answer_agreement"])
               for c in zero)
    half = [c for c in res["curve"] if c["margin"] == 0.5]
    assert all(c["answer_agreement"] == pytest.approx(
        by[f"B alone: {fake2}"]["answer_agreement"]) for c in half)
    assert "| cascade by item, margin 0.1 (cold) |" in format_cold(res)
    # everything complete: a second call reuses every part and asks nobody
    calls = len(CALLS)
    again = bench_escalate_cold(src, "fake", fake2, 12, ["a", "b", "answer", "item"],
                                ["answer", "item"], 0.1, db_file=bench, cold_dir=cold,
                                n_boot=50, curve_margins=(0.0, 0.5), calibrate=True)
    assert len(CALLS) == calls
    assert [r["answer_agreement"] for r in again["rows"]] == \
        [r["answer_agreement"] for r in res["rows"]]
    # a cascade at another margin in the same folder: only its own second-judge requests
    other = bench_escalate_cold(src, "fake", fake2, 12, ["item"], ["item"], 0.02,
                                db_file=bench, cold_dir=cold, n_boot=50, curve_margins=(),
                                calibrate=True)
    row = next(r for r in other["rows"] if r["name"].startswith("cascade by item, margin 0.02"))
    assert len(CALLS) == calls + row["b_executed"]
    assert other["parts"]["a"]["sessions"] == 1 and (cold / "item-0.02.db").exists()


def test_a_killed_cold_part_resumes_and_sums_its_sessions(tmp_path, src, fake2, monkeypatch):
    from checkeval_core.bench.escalate import bench_escalate
    from checkeval_core.bench.escalate_cold import bench_escalate_cold

    bench = tmp_path / "bench.db"
    bench_escalate("summeval", src, "fake", fake2, docs=12, db_file=bench, n_boot=20,
                   first_only=True)
    cold = tmp_path / "cold"
    kw = {"db_file": bench, "cold_dir": cold, "n_boot": 20, "docs_per_half": 3,
          "curve_margins": ()}
    first_a = bench_escalate_cold(src, "fake", fake2, 12, ["a"], ["answer"], 0.1, **kw)
    assert first_a["n_items"] == 48 and first_a["parts"]["a"]["n_items"] == 48  # 3 docs × 16
    assert first_a["heldout_groups"] == 3
    with pytest.raises(ValueError, match="started with"):  # another sample in the same folder
        bench_escalate_cold(src, "fake", fake2, 12, ["a"], ["answer"], 0.1,
                            **{**kw, "docs_per_half": 2})
    boom = {"n": 0}
    real = SecondFake.binary

    def dies(self, requests):
        boom["n"] += 1
        if boom["n"] == 5:
            raise KeyboardInterrupt  # the process killed mid-run
        return real(self, requests)

    monkeypatch.setattr(SecondFake, "binary", dies)
    with pytest.raises(KeyboardInterrupt):
        bench_escalate_cold(src, "fake", fake2, 12, ["answer"], ["answer"], 0.1, **kw)
    first = len(CALLS)
    assert first > 0
    monkeypatch.setattr(SecondFake, "binary", real)
    res = bench_escalate_cold(src, "fake", fake2, 12, ["answer"], ["answer"], 0.1, **kw)
    part = res["parts"]["answer"]
    assert part["sessions"] == 2
    row = next(r for r in res["rows"] if r["name"].startswith("cascade by answer"))
    # the resumed session asked only what was missing: together, once per request
    assert len(CALLS) == row["b_executed"] > first


@pytest.mark.parametrize("args,words", [
    (["--benchmark", "mtbench_pairs", "--cold"], "summeval only"),
    (["--benchmark", "summeval", "--cold", "--first-only"], "not with --first-only"),
    (["--benchmark", "summeval", "--cold", "--only", "c"], "--only 'c'"),
    (["--benchmark", "summeval", "--cold", "--escalate-by", "doc"], "--escalate-by 'doc'"),
    (["--benchmark", "summeval", "--cold", "--margin", "0.1", "--margin", "0.2"],
     "give one --margin"),
    (["--benchmark", "summeval", "--escalate-by", "item"], "only with --cold"),
    (["--benchmark", "summeval", "--cold", "--judge", "fake", "--escalate-to", "fake"],
     "must differ"),
])
def test_cold_refuses_bad_options_before_any_judge_call(tmp_path, src, args, words):
    from tests.helpers import run_cli

    db = tmp_path / "never.db"
    r = run_cli(["bench", "escalate", "--data", str(src), "--db", str(db),
                 "--cold-dir" if "--escalate-by" not in args or "--cold" in args else "--json",
                 *([str(tmp_path / "cold")] if "--escalate-by" not in args or "--cold" in args
                   else []), *args])
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr + r.stdout
    assert not db.exists() and not (tmp_path / "cold").exists()


def test_target_says_when_there_is_no_interval_to_be_inside():
    from checkeval_core.bench.escalate_cold import _target

    def row(name, ans, ci, rho, rci, share):
        return {"name": name, "answer_agreement": ans, "answer_ci": ci, "rho": rho,
                "rho_ci": rci, "cpu_share": share}

    rows = [row("A alone: a", 0.5, [0.4, 0.6], 0.1, [0.0, 0.2], 0.3),
            row("B alone: b", 0.4, [0.3, 0.5], 0.3, [0.2, 0.4], 0.7),
            row("cascade by item, margin 0.1 (cold)", 0.45, [0.4, 0.5], 0.25, [0.2, 0.3], 0.45),
            row("cascade by answer, margin 0.1 (cold)", 0.55, [0.5, 0.6], 0.1, [0, 0.2], 0.45)]
    got = _target({"rows": rows})
    item, ans = got["cascade by item, margin 0.1 (cold)"], got["cascade by answer, margin 0.1 (cold)"]
    assert item["answer_agreement"]["better_judge"] == "A alone: a"
    assert item["rho"]["better_judge"] == "B alone: b" and item["met"] is True
    assert ans["rho"]["inside_its_interval"] is False and ans["met"] is False
    one_doc = [{**r, "answer_ci": None, "rho_ci": None} for r in rows]
    got = _target({"rows": one_doc})["cascade by item, margin 0.1 (cold)"]
    assert got["met"] is None and got["rho"]["inside_its_interval"] is None
    assert "no interval" in got["rho"]["reason"]
    dear = _target({"rows": [*one_doc[:2], {**one_doc[2], "cpu_share": 0.8}]})
    assert dear["cascade by item, margin 0.1 (cold)"]["met"] is False


KILLED_PART = '''
import os, signal, sys, time
sys.path.insert(0, {root!r})
from checkeval_core.bench import escalate_cold
from checkeval_core.judges.registry import Backend, register_backend
from tests.helpers import second_fake

calls = []

def record(reqs):
    calls.extend(reqs)
    time.sleep(0.05)  # long enough for checkpoints between requests
    if len(calls) >= 40:  # mid-run, no Python left to save anything: the machine stops
        os.kill(os.getpid(), signal.SIGKILL)

register_backend(Backend("fakecold", second_fake("fake-cold-2", record), title="dies"))
escalate_cold.CHECKPOINT_S = 0.02
escalate_cold.bench_escalate_cold({src!r}, "fake", "fakecold", 12, ["b"], ["answer"], 0.1,
                                  db_file={bench!r}, cold_dir={cold!r}, n_boot=20,
                                  docs_per_half=3, curve_margins=())
'''


def test_a_part_killed_without_notice_keeps_its_session_to_the_last_checkpoint(
        tmp_path, src, fake2):
    """The machine stopping kills a long part with no Python left to save its figures (the
    16-document parts lost every session's CPU this way): the checkpoint saved while it ran
    stays, and the resumed part sums it with its own session."""
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from checkeval_core.bench.escalate import bench_escalate
    from checkeval_core.bench.escalate_cold import bench_escalate_cold

    bench, cold = tmp_path / "bench.db", tmp_path / "cold"
    bench_escalate("summeval", src, "fake", fake2, docs=12, db_file=bench, n_boot=20,
                   first_only=True)
    script = KILLED_PART.format(root=str(Path(__file__).resolve().parents[1]), src=str(src),
                                bench=str(bench), cold=str(cold))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    first = json.loads((cold / "b.json").read_text())["sessions"]
    assert len(first) == 1 and first[0]["status"] == "checkpoint"
    killed_b = first[0]["executed"].get("fake-cold-2", 0)
    assert 0 < killed_b <= 40 and first[0]["cpu_s"] > 0
    with sqlite3.connect(cold / "b.db") as c:
        stored = c.execute("SELECT COUNT(*) FROM llm_cache WHERE model = 'fake-cold-2'"
                           ).fetchone()[0]
    assert killed_b <= stored <= 40  # at most the requests after the last checkpoint uncounted
    res = bench_escalate_cold(src, "fake", fake2, 12, ["b"], ["answer"], 0.1, db_file=bench,
                              cold_dir=cold, n_boot=20, docs_per_half=3, curve_margins=())
    part = res["parts"]["b"]
    assert part["sessions"] == 2
    assert part["executed"]["fake-cold-2"] == killed_b + len(CALLS)
    with sqlite3.connect(cold / "b.db") as c:  # the resumed session asked only what was missing
        total = c.execute("SELECT COUNT(*) FROM llm_cache WHERE model = 'fake-cold-2'"
                          ).fetchone()[0]
    assert total == stored + len(CALLS)
