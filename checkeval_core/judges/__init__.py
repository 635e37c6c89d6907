"""Judges: one batch-in/batch-out protocol over several LLM backends.

Use :func:`checkeval_core.judges.registry.get_judge` with a spec string (``embedded``,
``openai:<model>``, ``openai-compat:<base_url>#<model>``, ``vllm:<model>``, ``fake``).
"""

from checkeval_core.judges.base import (  # noqa: F401
    BinaryRequest,
    BinaryResult,
    Capabilities,
    GenerateRequest,
    GenerateResult,
    Judge,
)
