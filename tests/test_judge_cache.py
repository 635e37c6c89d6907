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
