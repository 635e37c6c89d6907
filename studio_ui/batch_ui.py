"""The Run page's batch section: start runs through the provider's Batch API or as batch files
(download them, run them with OpenAI's Batch API or vLLM's ``run_batch``, upload the results),
and follow a batched run's provider batches. The logic is ``checkeval_core.runs.batch`` (the
same functions as ``checkeval run --batch-out / --batch-in / --batch``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

import checkeval_core.runs as runs
from checkeval_core.config import cache_dir
from checkeval_core.runs.batch import (
    batch_files_of,
    batched_runs,
    start_batched,
    store_batch_results,
    write_batch_files,
)
from checkeval_core.store import db_path
from checkeval_core.textsafe import md_escape
from studio_ui.widgets import say_reused


def batch_section(db: Any, task: str, judges: list[str], methods: list[str], version: int,
                  limit: int, opts: dict[str, Any]) -> None:
    """An expander under the Start button (the same choices: task, version, judges, methods,
    items, options)."""
    with st.expander("Batch: the provider's Batch API, or batch files (OpenAI, vLLM "
                     "run_batch)"):
        st.caption("openai: and openai-compat: judges. The Batch API answers within 24 h at "
                   "its batch price (the cost line above shows both); batch files hold every "
                   "request still needed, to run with OpenAI's Batch API or `python -m "
                   "vllm.entrypoints.openai.run_batch -i in.jsonl -o out.jsonl --model M`, "
                   "then upload the results here.")
        c1, c2 = st.columns(2)
        api = c1.button("Start with the provider's Batch API", key="batch_start_api")
        files = c2.button("Start as batch files", key="batch_start_files")
        if api or files:
            res = start_batched(db, task, judges, methods, api=api,
                                out_dir=cache_dir() / "batches", checklist=version,
                                limit=limit, params=dict(opts))
            for e in res["errors"]:
                st.error(md_escape(e))
            say_reused(res["reused"])  # a second press: said, not started again
            for rid, _, _ in res["reused"]:
                st.session_state["batch_run"] = rid
            for rid in res["started"]:
                if api:
                    runs.start_background(db_path(db), rid)
                st.session_state["batch_run"] = rid
            if res["started"]:
                st.success(f"Started run(s) {', '.join(map(str, res['started']))} "
                           + ("through the Batch API" if api else "as batch files"))
        _runs(db, task)


def _runs(db: Any, task: str) -> None:
    found = {r["id"]: r for r in batched_runs(db, task)}
    if not found:
        return
    if st.session_state.get("batch_run") not in found:
        st.session_state.pop("batch_run", None)
    rid = st.selectbox("Batched run", list(found), key="batch_run",
                       format_func=lambda r: f"{found[r]['label']} · {found[r]['batch']}")
    run = found[rid]
    if run["batch"] == "files" and run["status"] != "completed":
        _files(db, rid)
        run = next(r for r in batched_runs(db, task) if r["id"] == rid)  # after a store
    rows = [{"file or batch": Path(b["file_name"]).name if b["mode"] == "files"
             else b["batch_id"], "requests": b["n_requests"], "status": b["status"],
             "provider's counts": b["counts"] if b["mode"] == "api" else ""}
            for b in run["batches"]]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(f"{run['n_answers']} answers stored · {run['status']}")


def _files(db: Any, rid: int) -> None:
    """A batch-files run: write what is pending, download it, upload and store results."""
    if st.button("Write the requests still pending", key="batch_rewrite"):
        try:
            out = write_batch_files(db, rid, cache_dir() / "batches" / f"run-{rid}")
        except ValueError as e:
            st.error(md_escape(str(e)))
        else:
            st.info(f"{out['requests']} request(s) in {len(out['files'])} file(s)")
    for b in batch_files_of(db, rid):
        p = Path(b["file_name"])
        if b["mode"] == "files" and b["status"] == "written" and p.is_file():
            st.download_button(f"Download {md_escape(p.name)}", p.read_bytes(), file_name=p.name,
                               mime="application/jsonl", key=f"batch_dl_{b['id']}")
    up = st.file_uploader("Result files (.jsonl, OpenAI's batch output format)",
                          type=["jsonl"], accept_multiple_files=True, key="batch_upload")
    if st.button("Store results", key="batch_store", disabled=not up):
        try:
            res = store_batch_results(db_path(db), rid, [(f.name, f.getvalue()) for f in up])
        except ValueError as e:  # a refused file: its name and line; nothing stored
            st.error(md_escape(str(e)))
        else:
            st.success(f"{res['stored']} answer(s) stored, {res['skipped']} already stored, "
                       f"{res['failed']} failed at the provider, {res['pending']} pending · "
                       f"run {res['status']}")
            for e in res["errors"]:
                st.caption(md_escape(e))
