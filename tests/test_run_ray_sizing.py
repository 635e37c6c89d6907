"""How many Ray workers a judge gets, and of which kind, is asked of the judge registry: a
backend that declares ``gpu=True`` reserves one GPU per worker, any other one CPU — whatever
the backend is called (no Ray started: the cluster is a stand-in that reports its resources)."""

from __future__ import annotations

import pytest

from checkeval_core.judges.registry import BACKENDS, Backend, needs_gpu, register_backend
from checkeval_core.runs import ray_engine
from checkeval_core.runs.ray_engine import EngineError, RayEngine


class Cluster:
    """Stands in for the ``ray`` module: already joined, with these resources."""

    def __init__(self, **resources: float) -> None:
        self.resources = resources

    def is_initialized(self) -> bool:
        return True

    def cluster_resources(self) -> dict[str, float]:
        return dict(self.resources)


@pytest.fixture
def gpu_backend():
    """A GPU backend that is not called ``vllm``, declared for this test only."""
    register_backend(Backend("toygpu", "checkeval_core.judges.fake:FakeJudge", gpu=True))
    try:
        yield "toygpu"
    finally:
        BACKENDS.pop("toygpu", None)


def with_cluster(monkeypatch, **resources: float) -> None:
    monkeypatch.setattr(ray_engine, "import_ray", lambda: Cluster(**resources))


def test_the_registry_says_which_backends_need_a_gpu(gpu_backend):
    assert needs_gpu("vllm:Qwen/Qwen2.5-7B-Instruct") and needs_gpu(gpu_backend)
    for spec in ("fake", "embedded", "embedded:quality", "openai:gpt-4o-mini",
                 "openai-compat:http://localhost:8000/v1#m", "no-such-backend:x"):
        assert not needs_gpu(spec), spec


def test_a_declared_gpu_backend_gets_one_gpu_per_worker(monkeypatch, gpu_backend):
    with_cluster(monkeypatch, CPU=8, GPU=0)
    with pytest.raises(EngineError, match="has 0 GPUs"):
        RayEngine().prepare([gpu_backend])
    RayEngine().prepare(["fake"])  # a CPU judge fits the same cluster
    with_cluster(monkeypatch, CPU=8, GPU=2)
    RayEngine(workers=2).prepare([gpu_backend])
    with pytest.raises(EngineError, match="--workers 3: the Ray cluster has 2 GPUs"):
        RayEngine(workers=3).prepare([gpu_backend])


def test_a_cpu_backend_gets_one_cpu_per_worker(monkeypatch):
    with_cluster(monkeypatch, CPU=2, GPU=4)
    with pytest.raises(EngineError, match="--workers 3: the Ray cluster has 2 CPUs"):
        RayEngine(workers=3).prepare(["embedded"])
    RayEngine(workers=2).prepare(["fake"])
