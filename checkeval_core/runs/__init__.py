"""Evaluation runs: task + frozen checklist version + judge + method, as resumable jobs.

Public API (used by the pages and the CLI): :func:`create_run`, :func:`start_runs` (a batch:
judges × methods), :func:`execute_run`, :func:`start_background`, :func:`cancel_run`,
:func:`get_run`, :func:`list_runs`; methods and aggregations are in
:mod:`checkeval_core.runs.registry`.
"""

from checkeval_core.runs.jobs import (  # noqa: F401
    cancel_run,
    create_run,
    execute_run,
    get_run,
    list_runs,
    start_background,
)
from checkeval_core.runs.start import start_runs  # noqa: F401
