"""Judge specs, lazy backends with actionable install messages, saved judges."""

import pytest

from checkeval_core.judges import registry
from checkeval_core.judges.registry import JudgeSpecError, load_backend, parse_spec
from checkeval_core.judges.saved import add_judge, list_judges


def test_parse_specs():
    assert parse_spec("embedded").backend == "embedded"
    assert parse_spec("embedded:quality").variant == "quality"
    s = parse_spec("openai-compat:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B")
    assert (s.base_url, s.model) == ("http://127.0.0.1:8000/v1", "Qwen/Qwen2.5-7B")
    assert parse_spec("openai:gpt-4o-mini").spec == "openai:gpt-4o-mini"
    assert parse_spec("vllm:/models/x").model == "/models/x"


@pytest.mark.parametrize("bad,msg", [
    ("gpt4", "unknown judge"), ("openai-compat:http://x", "openai-compat:<base_url>#<model>"),
    ("openai:", "openai:<model>"), ("embedded:huge", "embedded variants"),
    ("fake:x", "takes no argument"),
])
def test_bad_specs(bad, msg):
    with pytest.raises(JudgeSpecError, match=msg):
        parse_spec(bad)


def test_missing_dependency_says_what_to_install(monkeypatch):
    from dataclasses import replace

    monkeypatch.setitem(registry.BACKENDS, "vllm", replace(
        registry.BACKENDS["vllm"], factory="checkeval_core.judges.no_such_module:X"))
    with pytest.raises(ImportError, match=r"install it with: pip install -e '\.\[vllm\]'"):
        load_backend("vllm:some/model")


def test_vllm_module_does_not_import_vllm():
    import sys

    load_backend("vllm:some/model")  # constructing must not need vllm
    assert "vllm" not in sys.modules


def test_openai_needs_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        load_backend("openai:gpt-4o-mini")


def test_saved_judges_never_store_keys(db, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_KEY_HOSTS", "MY_KEY=http://h")
    assert [j["spec"] for j in list_judges(db)] == ["embedded"]
    add_judge(db, "openai-compat:http://h/v1#m", key_env="MY_KEY")
    with pytest.raises(ValueError, match="NAME of an environment variable"):
        add_judge(db, "openai:gpt-4o", key_env="sk-abc.def")
    with pytest.raises(ValueError, match="never stored"):
        add_judge(db, "openai:gpt-4o", params={"api_key": "sk-x"})
    assert len(list_judges(db)) == 2


def test_embedded_model_params_without_extra_buffers(monkeypatch):
    """llama.cpp's AMX buffers crash the process on AMX CPUs here: the embedded judge (and the
    llama.cpp server test) load the model without them there, and only while loading."""
    import llama_cpp.llama_cpp as lc

    from checkeval_core.judges.embedded import extra_buffers_safe, llama_model_defaults

    monkeypatch.setenv("CHECKEVAL_EMBEDDED_EXTRA_BUFFERS", "0")
    assert not extra_buffers_safe()
    with llama_model_defaults():
        assert lc.llama_model_default_params().use_extra_bufts is False
    assert lc.llama_model_default_params().use_extra_bufts is True
    monkeypatch.setenv("CHECKEVAL_EMBEDDED_EXTRA_BUFFERS", "1")
    with llama_model_defaults():
        assert lc.llama_model_default_params().use_extra_bufts is True


def test_a_spec_is_parsed_once_and_passed_on(monkeypatch):
    """``get_judge`` parses its spec once; the key resolver's address checks, the pool test
    and the backend's construction read the parsed :class:`JudgeSpec` (``.backend``,
    ``.urls``, ``.model``) instead of parsing the string again."""
    from checkeval_core.judges import keys, spec

    calls = []
    real = spec.parse_spec

    def counted(s):
        calls.append(s)
        return real(s)

    for module in (spec, keys, registry):
        monkeypatch.setattr(module, "parse_spec", counted, raising=False)
    registry.get_judge("fake")
    assert calls == ["fake"]

    pool = parse_spec("openai-compat:http://a:8000/v1,http://b:8001/v1#m")
    assert (pool.backend, pool.urls, pool.model, pool.is_pool) == (
        "openai-compat", ["http://a:8000/v1", "http://b:8001/v1"], "m", True)
    one = parse_spec("openai-compat:http://a:8000/v1#m")
    assert (one.urls, one.is_pool) == (["http://a:8000/v1"], False)
    calls.clear()
    assert keys.urls_of(pool) == ["http://a:8000/v1", "http://b:8001/v1"]
    assert keys.target_url(one) == "http://a:8000/v1"
    with pytest.raises(ValueError, match="is a pool: one address per endpoint"):
        keys.target_url(pool)
    assert keys.saved_key_env(None, pool) == "" and keys.needs_key(one)
    assert calls == []  # nothing parsed again
