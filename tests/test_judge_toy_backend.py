"""A new backend is one declaration plus its class: a toy backend registered here, in the
test suite only, works through ``parse_spec``, the key resolver, the one wrapper (retries on
a failure the backend classifies, the cache on the second ask) and the Judges page's form."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.judges.base import (
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
)
from checkeval_core.judges.registry import get_judge
from checkeval_core.judges.retry import RetryDecision
from checkeval_core.judges.spec import (
    BACKENDS,
    Backend,
    JudgeSpecError,
    SpecField,
    parse_spec,
    register_backend,
    spec_forms,
)

APP = str(Path(__file__).resolve().parent.parent / "app.py")


class ToyBusy(Exception):
    """The toy service's "try again later"."""


class ToyJudge:
    """Answers "yes" when the question mentions its flavour; fails with :class:`ToyBusy`
    while ``FAILURES`` holds entries."""

    FAILURES: list[str] = []
    CALLS: list[dict] = []

    def __init__(self, parsed, api_key: str | None = None, **params) -> None:
        self.spec = parsed.spec
        self.host, self.flavour, self.api_key = parsed.host, parsed.flavour, api_key
        self.params = params
        self.capabilities = Capabilities(local=False, max_concurrency=1, model="toy-1")

    def should_retry(self, exc: BaseException) -> RetryDecision | None:
        return RetryDecision(f"toy busy: {exc}", delay=0.0) if isinstance(exc, ToyBusy) \
            else None

    def binary(self, requests: Sequence[BinaryRequest]) -> list[BinaryResult]:
        self.CALLS.append({"n": len(requests), "key": self.api_key, "host": self.host})
        if self.FAILURES:
            raise ToyBusy(self.FAILURES.pop(0))
        flavour = self.flavour or "plain"
        return [BinaryResult(verdict="yes" if flavour in r.question else "no", raw="ok",
                             mode="text", tokens_in=3, tokens_out=1) for r in requests]

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResult]:
        return [GenerateResult(text=f"toy from {self.host}") for _ in requests]


TOY = Backend("toy", ToyJudge, title="toy — a backend declared by the test suite",
              fields=(SpecField("host", "Host", default="toy.local"),
                      SpecField("flavour", "Flavour", optional=True)),
              key_envs=("TOY_KEY",), url_field="host", example="toy:toy.local#sweet")


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setenv("TOY_KEY", "toy-secret")
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", "TOY_KEY=box.lan")  # the operator's approval
    ToyJudge.FAILURES.clear()
    ToyJudge.CALLS.clear()
    register_backend(TOY)  # the one declaration
    yield TOY
    BACKENDS.pop("toy", None)


def test_spec_grammar_comes_from_the_declaration(toy):
    p = parse_spec("toy:box.lan#sweet")
    assert (p.backend, p.host, p.flavour) == ("toy", "box.lan", "sweet")
    assert p.spec == "toy:box.lan#sweet"
    assert parse_spec("toy:box.lan").spec == "toy:box.lan"  # optional flavour left out
    assert "toy:<host>#<flavour>" in spec_forms()
    with pytest.raises(JudgeSpecError, match=r"write toy:<host>#<flavour>, e\.g\. toy:toy"):
        parse_spec("toy:")
    BACKENDS.pop("toy")
    with pytest.raises(JudgeSpecError, match="unknown judge"):
        parse_spec("toy:box.lan")


def test_wrapper_retries_classified_errors_and_caches(toy, db):
    ToyJudge.FAILURES[:] = ["queue full", "queue full"]
    req = BinaryRequest("sys", ("A sweet text.\n",), "Is it sweet?")
    judge = get_judge("toy:box.lan#sweet", db=db)
    first = judge.binary([req])[0]
    assert first.verdict == "yes" and not first.error and not first.cached
    assert len(ToyJudge.CALLS) == 3 and judge.counters()["retries"] == 2
    # the key comes from the variable the declaration names
    assert {c["key"] for c in ToyJudge.CALLS} == {"toy-secret"}
    again = get_judge("toy:box.lan#sweet", db=db).binary([req])[0]
    assert again.cached and again.verdict == "yes"
    assert len(ToyJudge.CALLS) == 3  # the second ask never reached the backend
    # a failure that outlasts the attempts is an error result, and is not cached
    ToyJudge.FAILURES[:] = ["down"] * 5
    other = BinaryRequest("sys", ("Another text.\n",), "Is it sweet?")
    failed = get_judge("toy:box.lan#sweet", db=db, attempts=2).binary([other])[0]
    assert failed.verdict == "invalid" and failed.error == "toy busy: down"
    assert db.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 1


def test_an_unclassified_error_is_not_retried(toy):
    class Broken(ToyJudge):
        def binary(self, requests):
            self.CALLS.append({})
            raise RuntimeError("bug in the backend")

    register_backend(Backend("toy", Broken, fields=TOY.fields))
    with pytest.raises(RuntimeError, match="bug in the backend"):
        get_judge("toy:box", cache=False).binary([BinaryRequest("s", ("t",), "q?")])
    assert len(ToyJudge.CALLS) == 1


def test_judges_page_renders_the_declared_form(toy, db):
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/judges.py").run()
    at.selectbox(key="add_backend").select("toy").run()
    assert not at.exception
    assert at.text_input(key="add_host").value == "toy.local"  # the declared default
    at.text_input(key="add_host").input("box.lan").run()
    at.text_input(key="add_flavour").input("sweet").run()
    # the key sources offered: those the operator approved for box.lan
    assert at.selectbox(key="add_key_env").options[1:] == ["TOY_KEY"]
    assert at.code[0].value == "toy:box.lan#sweet"
    at.button(key="add_save").click().run()
    assert any("Saved judge 2: toy:box.lan#sweet" in s.value for s in at.success)
    at.selectbox(key="test_spec").select("toy:box.lan#sweet").run()
    at.text_input(key="test_question").input("Is the summary sweet?").run()
    at.button(key="test_run").click().run()
    assert not at.exception and not at.error
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Verdict"] == "yes" and tiles["p(Yes)"] == "n/a (text mode)"
    assert ToyJudge.CALLS[-1] == {"n": 1, "key": "toy-secret", "host": "box.lan"}


def test_a_small_model_is_a_declared_capability_not_a_name(toy):
    """Checklist generation and the filter pick their modes from ``Backend.small_model``: a
    new small local backend gets the small-model modes without code that knows its name."""
    from dataclasses import replace

    from checkeval_core.checklists import augment, filtering

    assert (augment.default_mode("toy:box"), filtering.default_mode("toy:box")) == \
        ("list", "json")
    register_backend(replace(TOY, small_model=True))
    assert (augment.default_mode("toy:box"), filtering.default_mode("toy:box")) == \
        ("single", "binary")
    assert (augment.default_mode("embedded"), filtering.default_mode("embedded")) == \
        ("single", "binary")
