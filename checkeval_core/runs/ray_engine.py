"""``checkeval run --engine ray``: a run's items answered by judge workers on a Ray cluster.

Ray is the scheduler; this module only says what a unit of work is and stores what comes
back. A **unit** is one item's pending requests (all its questions together, so the worker's
judge reuses the item's prefix). Each **worker** is a Ray actor that builds the run's judge
once — the embedded model on a CPU node, ``vllm:`` on a GPU node (one GPU per worker: a
backend that declares ``gpu`` in the judge registry), or a remote judge — and answers units with it (``judges/cached.py``'s retries, batching and
concurrency apply inside the worker; it has no database).

The **driver** (the process running ``execute_run``) stays the one writer: it looks each
request up in the response cache under the same deterministic id a local run uses (the
workers report their judge's spec, model and parameters, and must agree), sends only the
misses, and stores every unit's answers through the same parse/store path as a local run
(``runs/jobs.py``) the moment the unit returns. So a resumed run asks only what is missing,
*Cancel* stops after the units in flight, and a driver killed with ``kill -9`` loses at most
those units. A worker that dies is restarted by Ray and its units are re-run
(``max_restarts`` / ``max_task_retries``, :data:`MAX_RESTARTS`); the driver receives each
unit's answers once, so nothing is stored twice.

Ray is an optional extra (``pip install -e '.[scale]'``), imported only here and
only when the engine is asked for.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from checkeval_core.judges.base import Capabilities
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.registry import get_judge, needs_gpu

# a worker process imports this module to build its judge: importing the method registry
# registers the methods' answers of the fake judge there too
from checkeval_core.runs.registry import METHODS  # noqa: F401

ENGINES = ("local", "ray")
INSTALL = ("pip install -e '.[scale]' in the project folder "
           "(or: pip install 'ray[default]>=2.40')")
MAX_RESTARTS = 3  # a worker that dies is restarted this often, its units re-run as often
UNITS_PER_WORKER = 2  # one answered, one waiting: a worker never waits on the driver
MAX_WORKERS = 10_000
# the driver's settings a worker's judge reads (CHECKEVAL_TIMEOUT, CHECKEVAL_CONCURRENCY,
# CHECKEVAL_EMBEDDED_*, approved key hosts, ...) go with it; secrets and the database do not
_NOT_FORWARDED = ("SECRET", "TOKEN", "PASSWORD")


class EngineError(ValueError):
    """An engine that cannot be used as asked (bad option, Ray missing, cluster too small)."""


def import_ray() -> Any:
    try:
        import ray  # optional extra, seconds to import: only when --engine ray is asked for
    except ImportError:
        raise EngineError(f"--engine ray needs Ray, which is not installed: {INSTALL}") from None
    return ray


def init_ray(attempts: int = 3, **kw: Any) -> None:
    """``ray.init`` without the dashboard or worker logs on the driver's terminal; retried,
    since a local start on a loaded machine can miss Ray's fixed 30 s wait for its raylet."""
    ray = import_ray()
    for attempt in range(attempts):
        try:
            ray.init(include_dashboard=False, log_to_driver=False, logging_level="WARNING",
                     **kw)
            return
        except Exception:
            ray.shutdown()
            if attempt == attempts - 1:
                raise


def ray_installed() -> bool:
    """Whether Ray can be imported here — found, never imported (the Run page asks this on
    every rerun; importing Ray takes seconds)."""
    try:
        return importlib.util.find_spec("ray") is not None
    except ValueError:  # a module object without a spec in sys.modules
        return False


def check_engine(name: str | None, address: str | None = None,
                 workers: int | None = None) -> str:
    """The engine's name (``local`` or ``ray``) once the options are checked, without
    importing Ray; :class:`EngineError` names the option at fault."""
    name = (name or "local").strip().lower()
    if name not in ENGINES:
        raise EngineError(f"--engine {name!r}: choose one of {', '.join(ENGINES)}")
    if name == "local":
        if address is not None or workers is not None:
            raise EngineError("--ray-address and --workers go with --engine ray")
        return name
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise EngineError(f"--workers {workers}: give a whole number from 1 to {MAX_WORKERS}")
    if address is not None and (not address.strip() or any(c.isspace() for c in address)):
        raise EngineError(f"--ray-address {address!r}: give the cluster's address "
                          "(host:6379, ray://host:10001 or auto)")
    return name


def engine_for(name: str | None, address: str | None = None,
               workers: int | None = None) -> RayEngine | None:
    """The engine the options name (None: this process asks the judge), checked before any
    run is created or judge asked; :class:`EngineError` names the option at fault."""
    if check_engine(name, address, workers) == "local":
        return None
    import_ray()
    return RayEngine(address, workers)


def engine_args(name: str | None, address: str | None = None,
                workers: int | None = None) -> list[str]:
    """The ``checkeval run`` options that give a worker process this engine (``[]`` for the
    local one), checked like :func:`engine_for` (Ray must be installed; not imported). The
    Run page launches ``checkeval run --resume RUN`` with them: the same path as
    ``checkeval run --engine ray``."""
    if check_engine(name, address, workers) == "local":
        return []
    if not ray_installed():
        raise EngineError(f"--engine ray needs Ray, which is not installed: {INSTALL}")
    return ["--engine", "ray", *(["--ray-address", address.strip()] if address else []),
            *(["--workers", str(workers)] if workers else [])]


def local_cpus() -> int:
    """The CPUs a local Ray started here counts (one worker each)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The ``CHECKEVAL_*`` settings a worker gets from the driver (never keys, secrets or the
    database path). The embedded judge gets one thread per worker unless the driver says
    otherwise (each worker reserves one CPU)."""
    env = dict(os.environ if environ is None else environ)
    out = {k: v for k, v in env.items() if k.startswith("CHECKEVAL_") and k != "CHECKEVAL_DB"
           and not any(s in k for s in _NOT_FORWARDED)
           and (k == "CHECKEVAL_KEY_HOSTS" or "_KEY" not in k)}
    out.setdefault("CHECKEVAL_EMBEDDED_THREADS", "1")
    return out


class JudgeWorker:
    """A Ray actor's body: the run's judge, built once per worker process."""

    def __init__(self, spec: str, env: dict[str, str]) -> None:
        os.environ.update(env)  # before the backend's module reads its settings
        self.judge = get_judge(spec)  # no database: the driver caches and stores

    def describe(self) -> dict[str, Any]:
        """What the request ids are made of, and the worker's process id."""
        j = self.judge
        return {"spec": j.spec, "model": j.capabilities.model, "params": j.params,
                "capabilities": j.capabilities.to_dict(), "pid": os.getpid()}

    def answer(self, unit: list[tuple[str, list[Any]]]) -> list[list[Any]]:
        """One unit: for each (kind, requests), the judge's results in order."""
        return [(self.judge.binary if kind == "binary" else self.judge.generate)(reqs)
                for kind, reqs in unit]


class _Workers:
    """The driver's view of the workers' judge as a raw backend (spec, model, params: the
    same request ids as the local judge); a synchronous call — a SEAL run's weights and facts,
    asked while planning — goes to the first worker."""

    def __init__(self, engine: RayEngine, info: dict[str, Any]) -> None:
        self._engine = engine
        self.spec = info["spec"]
        self.params = info["params"]
        # whole lists to one worker call (its own judge batches and orders them)
        self.capabilities = replace(Capabilities(**info["capabilities"]), batch_size=1 << 20,
                                    items_at_once=1)

    def binary(self, requests: Sequence[Any]) -> list[Any]:
        return self._engine.call("binary", list(requests))

    def generate(self, requests: Sequence[Any]) -> list[Any]:
        return self._engine.call("generate", list(requests))


class RayEngine:
    """Workers on a Ray cluster, for one run at a time; runs of the same judge one after the
    other keep the workers (and their loaded model). :meth:`shutdown` when done."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self.workers = workers
        self.actors: list[Any] = []
        self.pids: list[int] = []  # the workers' processes as they started (tests kill one)
        self._started = False  # this engine started Ray (and shuts it down)
        self.ready_at: float | None = None  # when the last run's workers had built their judge
        self._spec = ""
        self._info: dict[str, Any] = {}

    # -- the cluster ---------------------------------------------------------------------
    def connect(self) -> None:
        """Join the cluster at ``address`` (or start a local one); nothing runs yet."""
        ray = import_ray()
        if ray.is_initialized():
            return
        try:
            init_ray(address=self.address)
        except Exception as e:  # noqa: BLE001 - any failure to reach it is said the same way
            where = f"at {self.address}" if self.address else "(a local one)"
            raise EngineError(f"--ray-address: cannot start or join the Ray cluster {where}: "
                              f"{type(e).__name__}: {e}") from None
        self._started = True

    def _size(self, gpu: bool) -> int:
        have = int(import_ray().cluster_resources().get("GPU" if gpu else "CPU", 0))
        n = self.workers or max(1, have)
        if n > have:
            raise EngineError(f"--workers {n}: the Ray cluster has {have} "
                              f"{'GPU' if gpu else 'CPU'}s (one per worker); start more "
                              "nodes or ask for fewer workers")
        return n

    def prepare(self, specs: Sequence[str]) -> None:
        """Join the cluster and check it has room for the workers of each judge in
        ``specs`` — before any run is created or judge asked."""
        self.connect()
        for spec in specs:
            self._size(needs_gpu(spec))

    def judge(self, spec: str, db: Any) -> CachedJudge:
        """Start the workers for ``spec`` (each builds its judge) and return the driver's
        judge: the response cache in ``db`` around the workers."""
        ray = import_ray()
        self.connect()
        if self.actors and self._spec != spec:  # another judge: other workers
            self.release()
        if not self.actors:  # the workers of the previous run of this judge are kept
            gpu = needs_gpu(spec)
            n = self._size(gpu)
            cls = ray.remote(max_restarts=MAX_RESTARTS,
                             max_task_retries=MAX_RESTARTS)(JudgeWorker)
            opts = {"num_cpus": 1, "num_gpus": 1 if gpu else 0}
            env = worker_env()
            self.actors = [cls.options(**opts).remote(spec, env) for _ in range(n)]
            self._spec = spec
            infos = ray.get([a.describe.remote() for a in self.actors])  # a build failure
            ids = {(i["spec"], i["model"], repr(sorted(i["params"].items()))) for i in infos}
            if len(ids) > 1:
                self.release()
                raise EngineError(f"the Ray workers do not build the same judge for {spec!r}: "
                                  + "; ".join(sorted(f"{s} model {m}" for s, m, _ in ids)))
            self.pids = [i["pid"] for i in infos]
            self._info = infos[0]
        self.ready_at = time.perf_counter()
        return CachedJudge(_Workers(self, self._info), db=db)

    def call(self, kind: str, requests: list[Any]) -> list[Any]:
        return import_ray().get(self.actors[0].answer.remote([(kind, requests)]))[0]

    def release(self) -> None:
        """Stop the workers (the cluster stays)."""
        if self.actors:
            ray = import_ray()
            for a in self.actors:
                ray.kill(a)
        self.actors = []

    def shutdown(self) -> None:
        """Leave the cluster; a local one this engine started stops."""
        self.release()
        if self._started:
            import_ray().shutdown()
            self._started = False

    # -- a run's items -------------------------------------------------------------------
    def drive(self, judge: CachedJudge, its: list[dict[str, Any]],
              todo: Callable[[dict[str, Any]], list[Any]],
              save: Callable[[list[Any], list[Any]], None], cancelled: Callable[[], bool],
              item_done: Callable[[int], None]) -> bool:
        """Answer ``its`` on the workers: per item, ``todo(item)`` (its work not stored yet)
        is split into cache hits and misses; the misses go to the least loaded worker as one
        unit; each unit's answers are cached and ``save``-d when it returns (any order),
        then ``item_done(n)``. Stops submitting once ``cancelled()``; the units in flight
        are still stored. Returns False when cancelled; re-raises a unit's failure (after
        Ray's retries) once the other units in flight are stored."""
        ray = import_ray()
        queue = deque(its)
        inflight: dict[Any, tuple[list[Any], int]] = {}
        load = [0] * len(self.actors)
        done, stop, failure = 0, False, None
        while queue or inflight:
            while queue and not stop and failure is None and \
                    len(inflight) < UNITS_PER_WORKER * len(self.actors):
                if cancelled():
                    stop = True
                    break
                work = todo(queue.popleft())
                parts, unit = [], []
                for kind in ("binary", "generate"):
                    batch = [w for w in work if w.kind == kind]
                    if batch:
                        keys, results, misses = judge.split_cached(
                            kind, [w.request for w in batch])
                        parts.append((kind, batch, keys, results, misses))
                        if misses:
                            unit.append((kind, [batch[i].request for i in misses]))
                if not unit:  # everything cached: stored without a worker
                    for _, batch, _, results, _ in parts:
                        save(batch, results)
                    done += 1
                    item_done(done)
                    continue
                a = min(range(len(load)), key=lambda k: (load[k], k))
                load[a] += 1
                inflight[self.actors[a].answer.remote(unit)] = (parts, a)
            if not inflight:
                break
            ready, _ = ray.wait(list(inflight), num_returns=1)
            parts, a = inflight.pop(ready[0])
            load[a] -= 1
            try:
                answers = iter(ray.get(ready[0]))
            except Exception as e:  # noqa: BLE001 - re-raised once the others are stored
                failure = failure or e
                continue
            for kind, batch, keys, results, misses in parts:
                if misses:
                    for i, res in zip(misses, next(answers)):
                        results[i] = res
                        judge.record(kind, keys[i], res)
                save(batch, results)
            done += 1
            item_done(done)
        if failure is not None:
            raise failure
        return not stop
