"""``checkeval bench scale`` on a tiny scratch database: its JSON keys (a contract: reports
and docs read them) and the Compare runs timing added beside the whole-task reference query."""

from __future__ import annotations

from checkeval_core.bench.scale import N_QUESTIONS, N_RUNS, bench_scale

KEYS = ["answers", "items", "runs", "questions", "fill_s", "item_trace_s", "dimension_scores_s",
        "item_disagreement_s", "task_disagreement_count_s", "max_rss_mb"]


def test_bench_scale_keys_and_compare_timing(tmp_path):
    out = bench_scale(N_RUNS * N_QUESTIONS * 32, str(tmp_path / "scale.db"))
    assert [k for k in out if k in KEYS] == KEYS  # the existing keys, in their order
    assert (out["answers"], out["items"]) == (N_RUNS * N_QUESTIONS * 32, 32)
    assert out["compare_runs_s"] > 0 and out["max_rss_mb"] > 0
    assert out["compare_over_task_disagreement"] == round(
        out["compare_runs_s"] / max(out["task_disagreement_count_s"], 1e-6), 2)


def test_bench_scale_times_the_analysis_view(tmp_path):
    out = bench_scale(N_RUNS * N_QUESTIONS * 112, str(tmp_path / "scale.db"))  # 7 documents
    assert [k for k in out if k.startswith("analysis_")] == [
        "analysis_first_chart_s", "analysis_full_s", "analysis_first_chart_over_task_disagreement",
        "analysis_full_over_task_disagreement"]
    assert out["analysis_first_chart_s"] > 0 and out["analysis_full_s"] > 0
    ref = max(out["task_disagreement_count_s"], 1e-6)
    assert out["analysis_full_over_task_disagreement"] == round(out["analysis_full_s"] / ref, 2)
    assert out["analysis_first_chart_over_task_disagreement"] == round(
        out["analysis_first_chart_s"] / ref, 2)
