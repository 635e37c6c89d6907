"""vLLM backend: the requests it builds, tested without vLLM installed."""

import math

from checkeval_core.judges.base import BinaryRequest, GenerateRequest
from checkeval_core.judges.vllm_backend import (
    binary_prompts,
    binary_sampling_kwargs,
    generate_sampling_kwargs,
    result_from_logprobs,
    yes_no_token_ids,
)


def test_yes_no_ids_keep_single_tokens_only():
    vocab = {"Yes": [10], "yes": [11], "YES": [12, 13], " Yes": [14], " yes": [11],
             "No": [20], "no": [21], "NO": [22], " No": [23], " no": [24, 25]}
    assert yes_no_token_ids(lambda w: vocab[w]) == [10, 11, 14, 20, 21, 22, 23]


def test_binary_sampling_params():
    kw = binary_sampling_kwargs([10, 20])
    assert kw == {"max_tokens": 1, "temperature": 0.0, "seed": 1234, "logprobs": 2,
                  "allowed_token_ids": [10, 20]}


def test_generate_sampling_params():
    kw = generate_sampling_kwargs(GenerateRequest.chat("s", "u", max_tokens=7, top_logprobs=5))
    assert kw["max_tokens"] == 7 and kw["logprobs"] == 5 and kw["temperature"] == 0.0


def test_prompts_use_chat_template_with_question_last():
    seen = []

    def template(msgs):
        seen.append(msgs)
        return "|".join(f"{m['role']}:{m['content']}" for m in msgs) + "|assistant:"

    r = BinaryRequest("sys", ("A\n", "B\n"), "Q?")
    assert binary_prompts([r], template) == ["system:sys|user:A\nB\nQ?\nAnswer Yes or No."
                                             "|assistant:"]


def test_result_from_logprobs():
    r = result_from_logprobs("Yes", {"Yes": math.log(0.6), "No": math.log(0.2)}, 30, 5.0)
    assert r.verdict == "yes" and abs(r.p_yes - 0.75) < 1e-9 and r.mode == "logprob"
    r2 = result_from_logprobs("Hmm", {"Hmm": -0.1}, 30, 5.0)
    assert r2.verdict == "invalid" and r2.p_yes is None and r2.yes_no_mass == 0.0


def test_the_wrapper_sends_vllm_whole_batches(monkeypatch, db):
    """vLLM declares batched generation, so one run's questions reach ``LLM.generate`` in one
    call (old code: one call per question); an engine failure becomes an error per request."""
    import sys
    import types

    from checkeval_core.judges.cached import CachedJudge
    from checkeval_core.judges.registry import load_backend

    class Tok:
        def encode(self, w, add_special_tokens=False):
            return [1] if w.strip().lower() == "yes" else [2] if w.strip().lower() == "no" \
                else [3, 4]

        def decode(self, ids):
            return {1: "Yes", 2: "No"}[ids[0]]

        def apply_chat_template(self, m, tokenize=False, add_generation_prompt=True):
            return m[-1]["content"]

    class LLM:
        calls: list[int] = []
        fail = False

        def get_tokenizer(self):
            return Tok()

        def generate(self, prompts, params):
            self.calls.append(len(prompts))
            if self.fail:
                raise RuntimeError("CUDA out of memory")
            lp = types.SimpleNamespace
            return [lp(prompt_token_ids=[0] * 5, outputs=[lp(text="Yes", logprobs=[
                {1: lp(logprob=math.log(0.75)), 2: lp(logprob=math.log(0.25))}])])
                for _ in prompts]

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(SamplingParams=dict))
    backend = load_backend("vllm:some/model")
    llm = LLM()
    monkeypatch.setattr(backend, "_llm", lambda: llm)
    judge = CachedJudge(backend, db=db)
    res = judge.binary([BinaryRequest("s", (f"text {i}\n",), "Q?") for i in range(12)])
    assert llm.calls == [12]
    assert all(r.verdict == "yes" and abs(r.p_yes - 0.75) < 1e-9 for r in res)
    llm.fail = True
    res = judge.binary([BinaryRequest("s", (f"other {i}\n",), "Q?") for i in range(3)])
    assert [r.error for r in res] == ["vllm: CUDA out of memory"] * 3
