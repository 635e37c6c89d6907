"""The pool benchmark's checks on a small run (its timings are recorded in
docs/benchmarks.md, never asserted): annotator processes pulling from one pool on one SQLite
file, some walking away from their item, leave every item with exactly k answers from k
different people, no answer lost, and every abandoned claim re-served."""

from checkeval_core.bench.pool_queue import bench_pool_queue


def test_many_processes_fill_the_pool_exactly(tmp_path):
    res = bench_pool_queue(annotators=4, items=12, questions=3, k=2, claim_seconds=1.0,
                           abandon=0.25, path=str(tmp_path))
    assert res["submitted"] == res["expected"] == 24
    assert res["items_complete"] == 12 and res["items_over_k"] == 0
    assert res["same_person_twice"] == 0 and res["lost_answers"] == 0
    assert res["answers_stored"] == 24 * 3
    assert res["abandoned_claims"] > 0  # seeded: some people walked away
    assert res["abandoned_reserved"] == res["abandoned_claims"]
    assert res["next_item_ms"]["n"] >= 24 and res["save_ms"]["n"] == 72
