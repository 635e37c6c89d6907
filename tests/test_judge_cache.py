"""The cache around every backend: a rerun asks only what is missing; errors not cached."""

from checkeval_core.judges.base import BinaryRequest, GenerateRequest
from checkeval_core.judges.cached import CachedJudge
from checkeval_core.judges.fake import FakeJudge


def reqs(n, marker=""):
    return [BinaryRequest("sys", (f"Text number {i} about cats{marker}.\n",), f"Question {i}?")
            for i in range(n)]


def test_rerun_hits_cache(db):
    inner = FakeJudge()
    j = CachedJudge(inner, db=db)
    first = j.binary(reqs(5))
    assert inner.calls == 5 and not any(r.cached for r in first)
    j2 = CachedJudge(FakeJudge(), db=db)
    second = j2.binary(reqs(7))
    assert j2.inner.calls == 2  # only the two new ones reached the backend
    assert [r.cached for r in second] == [True] * 5 + [False] * 2
    assert [r.p_yes for r in second[:5]] == [r.p_yes for r in first]
    assert j2.counters()["cache_hits"] == 5


def test_generate_cached_and_no_db_means_no_cache(db):
    inner = FakeJudge()
    j = CachedJudge(inner, db=db)
    g = [GenerateRequest.chat("s", "write")]
    assert j.generate(g)[0].text == j.generate(g)[0].text
    assert inner.calls == 1
    nocache = CachedJudge(FakeJudge(), db=None)
    nocache.binary(reqs(2))
    nocache.binary(reqs(2))
    assert nocache.inner.calls == 4


def test_an_answer_from_the_cache_keeps_the_time_it_took_when_asked(db):
    """``answer_ms`` sums what each answer cost the backend when it was asked: a rerun served
    from the cache reports the same time (a benchmark resumed after a kill), not the lookup."""
    class Slow(FakeJudge):
        def generate(self, requests):
            out = super().generate(requests)
            for r in out:
                r.latency_ms = 40.0
            return out

    g = [GenerateRequest.chat("s", f"write {i}") for i in range(3)]
    j = CachedJudge(Slow(), db=db)
    j.generate(g)
    assert abs(j.answer_ms - 120.0) < 1e-6
    again = CachedJudge(Slow(), db=db)
    again.generate(g)
    assert again.inner.calls == 0 and again.n_cache_hits == 3
    assert abs(again.answer_ms - 120.0) < 1e-6


def test_errors_are_not_cached(db):
    class Failing(FakeJudge):
        def binary(self, requests):
            out = super().binary(requests)
            for r in out:
                r.error, r.verdict = "boom", "invalid"
            return out

    inner = Failing()
    j = CachedJudge(inner, db=db)
    j.binary(reqs(2))
    j.binary(reqs(2))
    assert inner.calls == 4
    assert db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 0


def test_concurrent_responses_cached_as_they_arrive(db_path):
    """Request 1 hangs on the scripted server while 2..n come back: 2..n must be in
    ``llm_cache`` before request 1 returns (old code cached in request order: none)."""
    import threading
    import time

    from checkeval_core.judges.registry import get_judge
    from checkeval_core.store import open_db
    from tests.helpers import ScriptedServer

    server = ScriptedServer()
    server.block_marker = "Question 0?"
    n = 9
    errors: list[BaseException] = []

    def work():
        try:  # the judge's database writes happen on this (the calling) thread
            get_judge(server.spec, db=open_db(db_path), concurrency=4).binary(reqs(n))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    t = threading.Thread(target=work, daemon=True)
    try:
        d = open_db(db_path)
        t.start()
        assert server.blocked.wait(30)
        deadline = time.time() + 60
        count = 0
        while time.time() < deadline and count < n - 1:
            count = d.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]
            time.sleep(0.05)
        assert count == n - 1  # all but the pending one, while it is still pending
        assert t.is_alive()
    finally:
        server.release.set()
        t.join(30)
        server.close()
    assert not errors
    assert open_db(db_path).execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == n


def test_a_raising_request_keeps_the_responses_that_arrived(db):
    """One request raises (after the others came back): the others are cached, the error
    propagates, nothing is cached for the failed one."""
    import threading

    import pytest

    from checkeval_core.judges.base import Capabilities

    n = 6
    done = threading.Semaphore(0)

    class Remote(FakeJudge):
        def __init__(self, fail=True):
            super().__init__()
            self.fail = fail
            self.capabilities = Capabilities(max_concurrency=3, local=False, model="r")

        def binary(self, requests):
            (r,) = requests
            if r.question == "Question 0?" and self.fail:
                for _ in range(n - 1):  # wait until every other request has answered
                    assert done.acquire(timeout=30)
                raise RuntimeError("connection reset")
            out = super().binary(requests)
            if self.fail:
                done.release()
            return out

    j = CachedJudge(Remote(), db=db)
    with pytest.raises(RuntimeError, match="connection reset"):
        j.binary(reqs(n))
    assert db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == n - 1
    again = CachedJudge(Remote(fail=False), db=db)
    again.binary(reqs(n))
    assert again.inner.calls == 1  # only the one that failed


def test_a_batched_backend_gets_whole_batches(db):
    """A backend that declares ``batch_size`` is asked batches of that size (in its preferred
    order), each answer cached; old code asked a local backend one request at a time."""
    from checkeval_core.judges.base import Capabilities

    class Batched(FakeJudge):
        def __init__(self):
            super().__init__()
            self.capabilities = Capabilities(local=True, model="b", batch_size=4)
            self.sizes = []

        @staticmethod
        def order(requests):
            return list(range(len(requests)))[::-1]

        def binary(self, requests):
            self.sizes.append([r.question for r in requests])
            return super().binary(requests)

    inner = Batched()
    res = CachedJudge(inner, db=db).binary(reqs(10))
    assert [len(s) for s in inner.sizes] == [4, 4, 2]
    assert inner.sizes[0] == ["Question 9?", "Question 8?", "Question 7?", "Question 6?"]
    assert [r.p_yes for r in res] == [r.p_yes for r in FakeJudge().binary(reqs(10))]
    assert db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 10


def test_retry_waits_for_the_backends_hint_else_backs_off(db):
    from checkeval_core.judges.retry import RetryDecision

    class Busy(Exception):
        pass

    class Flaky(FakeJudge):
        def __init__(self, delays):
            super().__init__()
            self.delays = list(delays)

        def should_retry(self, exc):
            return RetryDecision("busy", delay=exc.args[0]) if isinstance(exc, Busy) else None

        def binary(self, requests):
            if self.delays:
                raise Busy(self.delays.pop(0))
            return super().binary(requests)

    waits = []
    j = CachedJudge(Flaky([2.5, None, 99.0]), db=db, sleep=waits.append, max_wait=30.0)
    assert not j.binary(reqs(1))[0].error
    assert waits[0] == 2.5 and 0 <= waits[1] <= 1.0 and waits[2] == 30.0  # hint, backoff, cap
