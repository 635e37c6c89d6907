"""The Run page's engine: the run's worker process asks the judge itself (the default), or
hands the items to Ray workers — local ones or a cluster's. A run started either way is
``checkeval run --resume RUN`` in a worker process; with Ray it gets the options of
``runs.ray_engine.engine_args``, so it takes the same path as ``checkeval run --engine ray``.
Ray is an optional extra: found here, never imported (importing it takes seconds)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

import checkeval_core.runs as runs
from checkeval_core.runs.ray_engine import (
    INSTALL,
    MAX_WORKERS,
    EngineError,
    engine_args,
    local_cpus,
    ray_installed,
)
from checkeval_core.textsafe import md_escape

ENGINES = {"local": "This machine: the run's worker asks the judge (default)",
           "ray": "Ray workers: one judge each, here or on a cluster"}


def engine_choice() -> list[str] | None:
    """The engine widgets; returns the worker's ``checkeval run`` options (``[]``: the
    default engine), or None when the Ray options are wrong (the reason is shown)."""
    have = ray_installed()
    name = st.radio("Engine", list(ENGINES), format_func=ENGINES.get, key="run_engine",
                    horizontal=True, disabled=not have,
                    help="Ray spreads a run's items over workers (an item's questions go "
                         "together); answers are stored here as they arrive, so Cancel, "
                         "Resume and a killed worker behave as with the default engine. "
                         "See docs/scaling.md.")
    if not have:
        st.caption(f"Ray workers: Ray is not installed here. Install it with {INSTALL}, "
                   "then restart the app.")
        return []
    if name == "local":
        return []
    c1, c2 = st.columns(2)
    address = c1.text_input("Ray cluster address", key="run_ray_address",
                            placeholder="empty: start a local Ray on this machine",
                            help="A running cluster's address: host:6379, ray://host:10001 "
                                 "or auto. Empty: the run's worker starts a local Ray and "
                                 "stops it when the run ends.").strip()
    cpus = local_cpus()
    workers = int(c2.number_input(
        "Workers", 0, MAX_WORKERS, min(2, cpus), key="run_ray_workers",
        help="Each worker builds the judge once (one CPU each; one GPU each for a GPU judge "
             "such as vllm:). 0: one per CPU (GPU) of the cluster."))
    try:
        if not address and workers > cpus:
            raise EngineError(f"{workers} workers: a local Ray here has {cpus} CPUs (one per "
                              "worker); ask for fewer or give a cluster's address")
        args = engine_args("ray", address or None, workers or None)
    except EngineError as e:
        st.error(md_escape(str(e)))
        return None
    where = f"the Ray cluster at {address}" if address else "a local Ray (it takes 10–60 s " \
        "to start)"
    size = f"{workers} worker(s)" if workers else "one worker per CPU (per GPU for a GPU judge)"
    st.caption(f"Runs started or resumed below go to {where} with {size}. The time estimate "
               "above is for one process; n workers divide the judge's share of it by at "
               "most n.")
    return args


def launcher(args: list[str] | None) -> Callable[[str, int], Any]:
    """``launch(db file, run id)`` for :func:`checkeval_core.runs.start.start_runs` and
    *Resume*: a worker process with the chosen engine's options."""
    if not args:
        return lambda path, rid: runs.start_background(path, rid)
    return lambda path, rid: runs.start_background(path, rid, args)
