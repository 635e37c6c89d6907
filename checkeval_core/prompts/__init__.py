"""Prompt templates: named constants, one module per area, each with a PROMPT_VERSION."""
