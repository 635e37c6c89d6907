"""Helpers shared by several test modules: builders of small tasks, a scripted
OpenAI-compatible server, the in-process CLI and the session-wide demo database.

Test modules import from here (fixtures live in ``tests/conftest.py``), never from one
another, so that a test file can be read, run or deleted on its own.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import random
import shutil
import sqlite3
import tempfile
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.testing.v1 import AppTest

from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.config import data_dir
from checkeval_core.datasets import import_file
from checkeval_core.judges.base import BinaryResult, Capabilities
from checkeval_core.judges.batch_format import chat_completion
from checkeval_core.judges.fake import FakeJudge, stable_unit
from checkeval_core.runs import create_run, execute_run, get_run
from checkeval_core.runs.batch import offline_judge, plan_run
from checkeval_core.runs.score_read import run_scores
from checkeval_core.store import db_path, now_iso

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "app.py")
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The full benchmark folder beside the repository when there is one (never a product default).
SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


def bench_source() -> Path:
    """The full benchmarks when they are beside the repository, else the small fixtures."""
    return SHARED_BENCH if (SHARED_BENCH / "alpacaeval").exists() else FIXTURES / "benchmarks"


# -- the command line, in process ---------------------------------------------------------------
@dataclass
class CliResult:
    """What a finished ``checkeval`` command left: the shape of ``subprocess.CompletedProcess``
    (``returncode``, ``stdout``, ``stderr``, ``args``) so a test reads it either way."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    exception: BaseException | None = field(default=None, repr=False)

    @property
    def exit_code(self) -> int:
        return self.returncode

    def check_returncode(self) -> None:
        if self.returncode:
            raise AssertionError(f"checkeval {' '.join(self.args)} exited {self.returncode}:\n"
                                 f"{self.stderr}")


def run_cli(args: list[str], db: str | Path | None = None,
            env: dict[str, str | None] | None = None, input: str | None = None,
            check: bool = False) -> CliResult:
    """Run ``checkeval ARGS`` in this process with typer's ``CliRunner`` (no interpreter to
    start, nothing to re-import: a fraction of a subprocess's cost). ``db`` is passed as
    ``--db`` before the arguments; a ``--db`` after the subcommand is hoisted the way the
    console script does.
    ``env`` sets (or, with ``None``, unsets) variables for the call only; the ``--db``
    callback's write to ``CHECKEVAL_DB`` is undone afterwards too. An unexpected exception
    leaves exit code 1 and its traceback on stderr, as a real process would.

    Use a subprocess instead when the test needs a real process: killing it, a background
    worker, or the console-script entry point itself."""
    from typer.testing import CliRunner

    from checkeval_core.cli import app, hoist_db

    argv = [str(a) for a in args]
    if db is not None:
        argv = ["--db", str(db), *argv]
    argv = hoist_db(argv)
    env = {"CHECKEVAL_DB": os.environ.get("CHECKEVAL_DB"), **(env or {})}
    r = CliRunner().invoke(app, argv, env=env, input=input, prog_name="checkeval")
    stderr = r.stderr
    exc = r.exception
    if exc is not None and not isinstance(exc, SystemExit):
        stderr += "".join(traceback.format_exception(exc))
    res = CliResult(argv, r.exit_code, r.stdout, stderr, exc)
    if check:
        res.check_returncode()
    return res


def cli(db_path, *args, env: dict[str, str | None] | None = None, input: str | None = None,
        timeout: float | None = None) -> CliResult:
    """``checkeval --db DB_PATH ARGS`` in process (``timeout`` is accepted for the callers that
    used to run a subprocess; an in-process command cannot be timed out)."""
    return run_cli(list(args), db=db_path, env=env, input=input)


# -- the demo database, built once per session ----------------------------------------------------
# Loading the demo costs little, but the demo plus two finished fake runs costs seconds per test:
# each distinct database is built once per test process into a template file and restored into
# the test's own (empty) database with SQLite's backup API, which replaces its whole content.
_TEMPLATES: dict[tuple, Path] = {}
_RESULTS: dict[Path, object] = {}  # what the builder returned, per template
_TEMPLATE_DIR: Path | None = None
DEMO_ENV = ("CHECKEVAL_DEMO_RUNS", "CHECKEVAL_DEMO_INSTRUCTION")


def _template(key: tuple, build) -> Path:
    """The template file for ``key`` (which includes the demo variables), built on first use by
    ``build(db)`` on a fresh database."""
    global _TEMPLATE_DIR
    from checkeval_core.store import open_db

    key = (*key, *(os.environ.get(k) for k in DEMO_ENV))
    if key not in _TEMPLATES:
        if _TEMPLATE_DIR is None:
            _TEMPLATE_DIR = Path(tempfile.mkdtemp(prefix="checkeval-test-templates-"))
            atexit.register(shutil.rmtree, _TEMPLATE_DIR, True)
        path = _TEMPLATE_DIR / f"t{len(_TEMPLATES)}.db"
        d = open_db(path)
        result = build(d)
        d.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        d.close()
        _TEMPLATES[key] = path
        _RESULTS[path] = result
    return _TEMPLATES[key]


def restore(template: Path, db) -> None:
    """Replace the content of the open, empty database ``db`` with ``template``."""
    n = db.execute("SELECT COUNT(*) FROM task").fetchone()[0]
    assert n == 0, "restore() replaces a database's content: only into an empty one"
    src = sqlite3.connect(template)
    try:
        src.backup(db.conn)
    finally:
        src.close()


def demo_template() -> Path:
    """A closed database file holding ``load_demo`` on a fresh database (with this process's
    ``CHECKEVAL_DEMO_*`` settings)."""
    from checkeval_core.demo import load_demo

    return _template(("demo",), load_demo)


def load_demo_copy(db) -> None:
    """``load_demo(db)`` on an empty database, copied from the session's template."""
    restore(demo_template(), db)


def fake_demo_runs(db, limit: int) -> list[int]:
    """The demo loaded, then one finished ``fake`` run per method (rocketeval, checkeval) on
    the first ``limit`` SummEval demo items; their run ids. Built once per ``limit``, copied
    into the (empty) ``db``."""

    def build(d) -> list[int]:
        from checkeval_core.demo import load_demo

        load_demo(d)
        ids = []
        for m in ("rocketeval", "checkeval"):
            rid = create_run(d, "summeval-demo", "fake", m, limit=limit)
            execute_run(db_path(d), rid)
            ids.append(rid)
        return ids

    t = _template(("fake_demo_runs", limit), build)
    restore(t, db)
    return list(_RESULTS[t])


def copy_db(src: Path, dst: Path) -> Path:
    """A consistent copy of the SQLite database file ``src`` at ``dst`` (the backup API, so a
    write-ahead log is folded in)."""
    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    try:
        a.backup(b)
    finally:
        a.close()
        b.close()
    return dst


# -- OpenAI-compatible answers and a scripted server -------------------------------------------
def second_fake(model: str, record: Callable[[list], Any]) -> type:
    """A deterministic second judge's class (p(Yes) a stable hash of question and text,
    ``model`` its name) that hands each batch it executes to ``record`` — for the cascade
    tests, which count what the second judge was really asked."""

    class SecondFake:
        def __init__(self, parsed, **params) -> None:
            self.inner = FakeJudge("fake")
            self.spec, self.params = parsed.spec, params
            self.capabilities = Capabilities(logprobs=True, local=True, model=model)

        def binary(self, requests):
            record(requests)
            return [BinaryResult(verdict="yes" if p >= 0.5 else "no", p_yes=p, raw="x",
                                 mode="logprob", latency_ms=30.0)
                    for p in (round(stable_unit("second", r.question, r.prefix), 4)
                              for r in requests)]

        def generate(self, requests):
            return self.inner.generate(requests)

    return SecondFake


def completion(content, top=None):
    choice = {"index": 0, "finish_reason": "stop",
              "message": {"role": "assistant", "content": content}}
    if top is not None:
        choice["logprobs"] = {"content": [{
            "token": content, "logprob": max(top.values()), "bytes": None,
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": None}
                             for t, lp in top.items()]}]}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [choice], "usage": {"prompt_tokens": 11, "completion_tokens": 1,
                                           "total_tokens": 12}}


class ScriptedServer:
    """OpenAI-compatible chat completions on 127.0.0.1. ``mode``: ``ok`` (Yes, with
    log-probabilities), ``401`` (every request refused: a wrong key), ``maybe`` (an answer
    that is neither yes nor no). A request whose user message contains ``block_marker`` waits
    for ``release`` before it is answered."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.block_marker: str | None = None
        self.release = threading.Event()
        self.blocked = threading.Event()
        self.body_secret = "internal-service-BODY-SECRET"  # what mode "500" answers
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][-1]["content"]
                with srv.lock:
                    srv.requests.append({"auth": self.headers.get("Authorization"),
                                         "user": user, "headers": dict(self.headers.items())})
                if srv.block_marker and srv.block_marker in user:
                    srv.blocked.set()
                    srv.release.wait(60)
                if srv.mode in ("404", "500"):  # an internal service's error page
                    return self._send(int(srv.mode), {"error": {"message": srv.body_secret}})
                if srv.mode == "401":
                    return self._send(401, {"error": {"message": "invalid api key",
                                                      "type": "invalid_request_error"}})
                if srv.mode == "maybe":
                    return self._send(200, completion("Maybe", {"Maybe": -0.1}))
                self._send(200, completion("Yes", {"Yes": math.log(0.7), "No": math.log(0.3)}))

            def _send(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.spec = f"openai-compat:{self.url}#m"

    def auths(self) -> set[str | None]:
        with self.lock:
            return {r["auth"] for r in self.requests}

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# -- a fake-judge run in RocketEval's setting (page / CLI / browser tests) ---------------------
FRUITS = {"g1": ["apples", "bananas", "cherries", "grapes"],
          "g2": ["lemons", "mangos", "olives", "peaches"],
          "g3": ["plums", "quinces", "raisins", "tomatoes"],
          "g4": ["carrots", "onions", "potatoes", "radishes"]}
#: Two more queries for a task that must reach the small-sample minimum (6 groups) in a
#: process a test cannot lower it in (the app server of a browser test).
MORE_FRUITS = {"g5": ["beans", "leeks", "peppers", "turnips"],
               "g6": ["figs", "kiwis", "limes", "melons"]}
RANKING_SYSTEMS = (("sys-best", 4), ("sys-mid", 2), ("sys-low", 0))
RANKING_TASK = "rank-demo"
PREFS_CSV = ("group_id,item_a,item_b,winner\n"
             "g1,g1:sys-best,g1:sys-low,a\n"
             "g2,sys-mid,sys-best,b\n"
             "g3,g3:sys-mid,g3:sys-low,tie\n"
             "g4,g4:sys-low,g4:sys-mid,a\n")
RATINGS_CSV = ("system_id,rating,lower,upper\nsys-best,1200,1190,1210\nsys-mid,1100,,\n"
               "sys-low,1000,990,1010\nnot-in-task,900,,\n")


def build_ranking_task(db, prefs: bool = True, ratings: bool = True,
                       n_queries: int = 4) -> int:
    """Task ``rank-demo`` (kind instruction): 4 queries (up to 6 with ``n_queries``) × 3
    systems whose answers mention 4, 2 or 0 of the words the query's checklist asks about; a
    per-query checklist imported with the issue-14 API and frozen; one finished ``fake``
    rocketeval run. Returns the run id."""
    from checkeval_core.annotation.preferences import import_preferences, import_ratings
    from checkeval_core.checklists.instance import import_group_checklists
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.datasets import import_file
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.store import db_path

    queries = dict(list({**FRUITS, **MORE_FRUITS}.items())[:n_queries])
    recs = []
    for g, fruits in queries.items():
        for s, k in RANKING_SYSTEMS:
            words = fruits[:k] + (["mention"] if k else [])
            recs.append({"id": f"{g}:{s}", "group_id": g, "system_id": s,
                         "input": f"Write a short note for query {g[-1]}.",
                         "output": (" ".join(words) or "nothing relevant here") + f" ({s})"})
    import_file(db, None, RANKING_TASK, kind="instruction", filename="items.jsonl",
                data="\n".join(json.dumps(r) for r in recs).encode())
    checklists = [{"group_id": g, "questions": [f"Does it mention {f}?" for f in fr]}
                  for g, fr in queries.items()]
    import_group_checklists(db, RANKING_TASK, filename="checklists.jsonl",
                            data="\n".join(json.dumps(r) for r in checklists).encode())
    freeze(db, RANKING_TASK, kind="instance")
    rid = create_run(db, RANKING_TASK, "fake", "rocketeval")
    execute_run(db_path(db), rid)
    if prefs:
        import_preferences(db, RANKING_TASK, data=PREFS_CSV.encode(), filename="prefs.csv")
    if ratings:
        import_ratings(db, RANKING_TASK, data=RATINGS_CSV.encode(), filename="ref.csv")
    return rid


# -- a one-item task and the published checklists ----------------------------------------------
CK = data_dir() / "checklists"


def new_task(db, tmp_path, name="t"):
    p = tmp_path / f"{name}.csv"
    p.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, p, name)
    return name


def import_checklist_seeds(db, task):
    import json
    import tempfile
    from pathlib import Path

    from checkeval_core.checklists.io import import_checklist

    src = json.loads((CK / "summeval.json").read_text())
    seeds = {d: {"definition": v["definition"], "sub_dimensions": {
        s: {"seed": q["seed"]} for s, q in v["sub_dimensions"].items()}} for d, v in src.items()}
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.json"
        p.write_text(json.dumps(seeds))
        return import_checklist(db, task, p)


# -- a 3 documents x 3 systems summarisation task with a seed checklist ------------------------
ROWS = [
    {"id": f"d{g}-s{s}", "group_id": f"d{g}", "system_id": f"s{s}",
     "source": f"The council of town {g} approved a new park. Work starts in May. It costs "
               f"{g + 2} million euros.",
     "output": ["The council approved a park. Work starts in May.",
                "A park costs money. Cats like parks. The council met.",
                "The town approved a new park costing money. Work begins in May."][s],
     "scores": {"fluency": [4.0, 2.0, 5.0][s] - g * 0.5, "coherence": [3.0, 1.0, 4.0][s]}}
    for g in range(3) for s in range(3)]
CHECKLIST = {"fluency": {"definition": "grammar and wording", "sub_dimensions": {
    "Grammar": {"seed": ["Is the summary grammatical?", "Does the summary use correct spelling?"]},
    "Wording": {"seed": ["Is the wording of the park summary natural?"]}}},
    "coherence": {"definition": "structure", "sub_dimensions": {
        "Flow": {"seed": ["Does the summary about the council and the park flow logically?",
                          "Is the summary about work starting in May well organised?"]}}}}


def make_runs_task(db, tmp_path, rows: list[dict] | None = None,
                   checklist: dict | None = None) -> str:
    """Task ``t`` (``rows``, default ROWS) with ``checklist`` (default CHECKLIST) imported and
    frozen."""
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in (rows or ROWS)) + "\n", encoding="utf-8")
    import_file(db, p, "t", kind="summarization")
    c = tmp_path / "c.json"
    c.write_text(json.dumps(checklist or CHECKLIST))
    import_checklist(db, "t", c)
    freeze(db, "t")
    return "t"



def run(db, task, method, **kw):
    rid = create_run(db, task, "fake", method, **kw)
    r = execute_run(db_path(db), rid)
    assert r["status"] == "completed", r["error"]
    return rid


def scores_of(db, rid, agg):
    return {(r["item_id"], r["dimension"]): r["value"] for r in run_scores(db, rid, agg)}


# -- a hand-checked proposal task (tests/test_propose.py) --------------------------------------
PROPOSE_GROUPS = [f"g{i}" for i in range(8)]
PROPOSE_SYSTEMS = ["s1", "s2", "s3", "s4"]
# a different order of the four human scores in each document
PROPOSE_PERMS = [[1, 2, 3, 4], [4, 3, 2, 1], [2, 4, 1, 3], [3, 1, 4, 2], [1, 3, 2, 4],
                 [4, 2, 3, 1], [2, 1, 4, 3], [3, 4, 1, 2]]
PROPOSE_HUMAN = {g: PROPOSE_PERMS[i] for i, g in enumerate(PROPOSE_GROUPS)}
PROPOSE_TEXTS = {"good": "Does the summary state the main event of the source?",
                 "constant": "Is the summary written in English?",
                 "copy": "Does the summary state the main events of the source?",
                 "anti": "Is the summary free of details?"}


def proposal_values(name: str, h: int) -> float:
    """p(Yes) of each question for an item of human score ``h``: ``good`` follows the humans,
    ``copy`` too but with its top two swapped, ``anti`` against them and steeper, ``constant``
    never moves."""
    return {"good": h / 10, "constant": 0.99, "copy": {4: 0.3, 3: 0.4}.get(h, h / 10),
            "anti": 1 - h / 5}[name]


def coherence_task(db, name: str, human: dict[str, list], systems: list[str]
                   ) -> tuple[int, int, int]:
    """Task ``name``: one item ``<group>-<k>`` per document × system, with the human coherence
    score ``human[group][k]``; a dimension ``coherence`` with sub-dimension ``structure``.
    Returns (task id, dimension id, sub-dimension id)."""
    from checkeval_core.checklists.editing import ensure_dimension, ensure_sub
    from checkeval_core.datasets import import_file
    from checkeval_core.store import task_id

    recs = [{"id": f"{g}-{k}", "group_id": g, "system_id": systems[k],
             "source": f"doc {g}", "output": f"summary {g} {k}", "human_coherence": h}
            for g, hs in human.items() for k, h in enumerate(hs)]
    import_file(db, None, name, kind="summarization", filename="items.jsonl",
                data="\n".join(json.dumps(r) for r in recs).encode())
    tid = task_id(db, name)
    d = ensure_dimension(db, tid, "coherence")
    return tid, d, ensure_sub(db, d, "structure")


def build_proposal_task(db, human=PROPOSE_HUMAN):
    """Task ``pt`` (8 documents × 4 systems, human coherence), the four questions frozen as
    v1, one completed run with the answers above; returns (run id, {name: question id})."""
    from checkeval_core.checklists.editing import add_question
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.store import now_iso

    tid, d, s = coherence_task(db, "pt", human, PROPOSE_SYSTEMS)
    qid = {n: add_question(db, tid, d, s, t, status="kept") for n, t in PROPOSE_TEXTS.items()}
    vid = freeze(db, "pt")["id"]
    rid = db.execute("INSERT INTO run (task_id, checklist_version_id, judge_spec, method, "
                     "params, status, created_at) VALUES (?, ?, 'fake', 'checkeval', '{}', "
                     "'completed', ?)", [tid, vid, now_iso()]).lastrowid
    for g, hs in PROPOSE_HUMAN.items():  # the judge's answers never depend on a changed human score
        for k, h in enumerate(hs):
            pk = db.execute("SELECT id FROM item WHERE task_id = ? AND item_id = ?",
                            [tid, f"{g}-{k}"]).fetchone()[0]
            for n, q in qid.items():
                p = proposal_values(n, h)
                db.execute("INSERT INTO answer (run_id, item_id, question_id, dimension, "
                           "verdict, p_yes, created_at) VALUES (?, ?, ?, 'coherence', ?, ?, ?)",
                           [rid, pk, q, "yes" if p >= 0.5 else "no", p, now_iso()])
    return rid, qid


# -- two frozen checklist versions with runs (tests/test_versions.py) --------------------------
VERSIONS_HUMAN = {"g0": [1, 2, 3], "g1": [1, 2, 3], "g2": [3, 1, 2], "g3": [2, 3, 1]}
# v1's scores: Spearman per document 1, −1, −0.5, −0.5 (Σd² = 0, 8, 6, 6 over 3 items)
VERSIONS_V1 = {"g0": [1, 2, 3], "g1": [3, 2, 1], "g2": [1, 2, 3], "g3": [1, 2, 3]}
VERSIONS_RHO_V1 = {"g0": 1.0, "g1": -1.0, "g2": -0.5, "g3": -0.5}
VERSIONS_SYSTEMS = ["s1", "s2", "s3"]


def insert_versions_run(db, tid, vid, scores, judge="fake"):
    from checkeval_core.store import now_iso

    rid = db.execute("INSERT INTO run (task_id, checklist_version_id, judge_spec, method, "
                     "params, status, created_at) VALUES (?, ?, ?, 'checkeval', "
                     "'{\"aggregation\": \"share_yes\"}', 'completed', ?)",
                     [tid, vid, judge, now_iso()]).lastrowid
    for g, vals in scores.items():
        for k, v in enumerate(vals):
            pk = db.execute("SELECT id FROM item WHERE task_id = ? AND item_id = ?",
                            [tid, f"{g}-{k}"]).fetchone()[0]
            db.execute("INSERT INTO score (run_id, item_id, dimension, aggregation, value) "
                       "VALUES (?, ?, 'coherence', 'share_yes', ?)", [rid, pk, float(v)])
    return rid


def build_versions_task(db):
    """Task ``vt``: 4 documents × 3 systems with human coherence scores; v1 = {q1, q2};
    v2 = q2 edited into q3, q4 added; a run of each with the scores above (v2 = the human
    scores themselves, Spearman 1 everywhere). Returns (tid, run v1, run v2, q ids)."""
    from checkeval_core.checklists.editing import add_question
    from checkeval_core.checklists.versions import freeze

    tid, d, s = coherence_task(db, "vt", VERSIONS_HUMAN, VERSIONS_SYSTEMS)
    q1 = add_question(db, tid, d, s, "Is the summary well structured?", status="kept")
    q2 = add_question(db, tid, d, s, "Does each sentence follow from the previous one?",
                      status="kept")
    v1 = freeze(db, "vt")["id"]
    db.execute("UPDATE question SET status = 'rejected' WHERE id = ?", [q2])
    q3 = add_question(db, tid, d, s, "Does every sentence follow from the one before it?",
                      origin="edited", status="kept", parent_id=q2)
    q4 = add_question(db, tid, d, s, "Is there a clear topic sentence?", status="kept")
    v2 = freeze(db, "vt")["id"]
    r1 = insert_versions_run(db, tid, v1, VERSIONS_V1)
    r2 = insert_versions_run(db, tid, v2, VERSIONS_HUMAN)
    return tid, r1, r2, (q1, q2, q3, q4)


# -- a small instruction task for pairwise votes -----------------------------------------------
DUEL_SYSTEMS = ["s1", "s2", "s3", "s4"]


def small_task(db, name: str = "duel", n_queries: int = 3) -> dict[tuple[str, str], int]:
    """``n_queries`` queries × 4 systems (kind instruction); the item pk per (query, system)."""
    from checkeval_core.datasets import import_file

    recs = [{"id": f"q{g}:{s}", "group_id": f"q{g}", "system_id": s, "input": f"Query {g}?",
             "output": f"answer of {s} to {g}"} for g in range(n_queries) for s in DUEL_SYSTEMS]
    import_file(db, None, name, kind="instruction", filename="items.jsonl",
                data="\n".join(json.dumps(r) for r in recs).encode())
    return {(r[0], r[1]): r[2] for r in db.execute(
        "SELECT group_id, system_id, id FROM item WHERE task_id = (SELECT id FROM task WHERE "
        "name = ?)", [name])}


# -- the Analysis page -------------------------------------------------------------------------
def analysis_page(task: str = "summeval-demo"):
    """The Analysis page of the whole app, opened on ``task`` (an ``AppTest``)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=180)
    at.session_state["task_name"] = task
    at.run()
    at.switch_page("app_pages/analysis.py").run()
    assert not at.exception, at.exception
    return at


Q1, Q2 = "Is the output clear?", "Is the output correct?"


def authors(subs: Any, definition: Any = "d") -> str:
    return json.dumps({"clarity": {"definition": definition, "sub_dimensions": subs}})


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict[str, Any]:
    """A database with task ``t`` (items 1–3), a frozen two-question checklist and one
    completed fake run, plus that run's bundle."""
    import os

    from checkeval_core.checklists.io import import_checklist
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.datasets import import_file
    from checkeval_core.runs import create_run, execute_run
    from checkeval_core.runs.bundle import export_bundle
    from checkeval_core.store import open_db

    d = tmp_path_factory.mktemp("base")
    path = d / "base.db"
    old = os.environ.get("CHECKEVAL_DB")
    os.environ["CHECKEVAL_DB"] = str(path)
    try:
        db = open_db(path)
        src = d / "t.csv"
        src.write_text("id,output,human_clarity\n1,a,1\n2,b,2\n3,c,3\n", encoding="utf-8")
        import_file(db, src, "t")
        ck = d / "ck.json"
        ck.write_text(authors({"s": {"seed": [Q1, Q2]}}), encoding="utf-8")
        import_checklist(db, "t", ck)
        freeze(db, "t")
        rid = create_run(db, "t", "fake", "checkeval")
        execute_run(path, rid)
        bundle = export_bundle(db, rid)
        db.close()
    finally:
        if old is None:
            os.environ.pop("CHECKEVAL_DB", None)
        else:
            os.environ["CHECKEVAL_DB"] = old
    return {"path": path, "bundle": bundle}


def counts(path: Path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%'")]
        return {n: con.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        con.close()


class FakeUpload:
    def __init__(self, name: str, data: bytes):
        self.name, self._data, self.type, self.size = name, data, "application/json", len(data)
        self.file_id = "fake"

    def getvalue(self) -> bytes:
        return self._data


def use_upload(monkeypatch, key: str, upload: FakeUpload) -> None:
    """The uploader with ``key`` returns ``upload``; the others behave as usual."""
    original, module_level = DeltaGenerator.file_uploader, st.file_uploader

    def fake_uploader(self, label, *a, **kw):  # column.file_uploader(...)
        if kw.get("key") == key:
            return upload
        return original(self, label, *a, **kw)

    def fake_module_uploader(label, *a, **kw):  # st.file_uploader(...)
        if kw.get("key") == key:
            return upload
        return module_level(label, *a, **kw)

    monkeypatch.setattr(DeltaGenerator, "file_uploader", fake_uploader)
    monkeypatch.setattr(st, "file_uploader", fake_module_uploader)


COMPARE_HUMAN = [1.0, 2.0, 3.0]


def compare_task(db, name: str = "t", human: bool = True, outputs: dict | None = None) -> int:
    """Task ``name``: groups g1, g2 × systems s1..s3 (item ids ``g1-s1``…), one dimension
    ``d`` with questions q1, q2, human scores 1/2/3 per group when ``human``."""
    tid = db["task"].insert({"name": name, "kind": "summarization", "created_at": now_iso()}
                            ).last_pk
    did = db["dimension"].insert({"task_id": tid, "name": "d"}).last_pk
    for n, text in enumerate(("Is it q1?", "Is it q2?")):
        db["question"].insert({"task_id": tid, "dimension_id": did, "text": text,
                               "status": "kept", "position": n, "created_at": now_iso()})
    pos = 0
    for g in ("g1", "g2"):
        for k, s in enumerate(("s1", "s2", "s3")):
            out = (outputs or {}).get(f"{g}-{s}", "some output")
            pk = db["item"].insert({"task_id": tid, "item_id": f"{g}-{s}", "group_id": g,
                                    "system_id": s, "output": out, "position": pos}).last_pk
            pos += 1
            if human:
                db["human_score"].insert({"item_id": pk, "dimension": "d", "value": COMPARE_HUMAN[k]})
    return tid


def compare_qids(db, tid: int) -> list[int]:
    return [r[0] for r in db.execute("SELECT id FROM question WHERE task_id = ? ORDER BY "
                                     "position", [tid])]


def compare_run(db, tid: int, scores: dict[str, list[float]], answers: dict | None = None,
             method: str = "checkeval", aggregation: str = "share_yes") -> int:
    """A completed run with the given item scores (dimension ``d``) and answers
    ``{(item_id, question position): verdict}``."""
    rid = db["run"].insert({"task_id": tid, "judge_spec": "fake", "method": method,
                            "params": json.dumps({"aggregation": aggregation}),
                            "status": "completed", "created_at": now_iso()}).last_pk
    pks = {r[1]: r[0] for r in db.execute("SELECT id, item_id FROM item WHERE task_id = ?",
                                          [tid])}
    for g, vals in scores.items():
        for s, v in zip(("s1", "s2", "s3"), vals):
            if v is not None:
                db["score"].insert({"run_id": rid, "item_id": pks[f"{g}-{s}"], "dimension": "d",
                                    "aggregation": aggregation, "value": v})
    q = compare_qids(db, tid)
    for (item, pos), verdict in (answers or {}).items():
        db["answer"].insert({"run_id": rid, "item_id": pks[item], "question_id": q[pos],
                             "dimension": "d", "verdict": verdict, "created_at": now_iso()})
    return rid


COMPARE_ITEMS = [f"{g}-{s}" for g in ("g1", "g2") for s in ("s1", "s2", "s3")]


def open_rankings_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("app_pages/rankings.py").run()
    assert not at.exception, at.exception
    return at


def open_both_traces(screen, first: dict, a: int, b: int) -> None:
    """On Compare runs (browser): follow ``first`` item's link to both runs' traces and wait
    until both runs' decisions are shown."""
    link = screen.get_by_role("link", name=f"Open both traces of item {first['item_id']} "
                                           f"({first['dimension']})")
    link.wait_for()
    link.click()
    screen.get_by_text("Yes/No decisions").first.wait_for()
    screen.get_by_text(f"#{a} = ").first.wait_for()
    screen.get_by_text(f"#{b} = ").first.wait_for()


# -- human votes with a position bias (Rankings) ----------------------------------------------
RANKING_ORDER = {"sys-best": 0, "sys-mid": 1, "sys-low": 2}


def vote_fair_and_lefty(db) -> None:
    """``fair`` prefers the better system wherever it is shown; ``lefty`` always clicks the
    answer on the left (a position bias the page flags)."""
    from checkeval_core.annotation.pairwise import record_vote

    items = {(g, s): pk for pk, g, s in db.execute("SELECT id, group_id, system_id FROM item")}
    groups = sorted({g for g, _ in items})
    pairs = [("sys-best", "sys-mid"), ("sys-mid", "sys-low"), ("sys-best", "sys-low")]
    n = 0
    for g in groups:
        for x, y in pairs:
            left, right = (x, y) if n % 2 else (y, x)  # the better one left half the time
            n += 1
            a, b = items[(g, left)], items[(g, right)]
            better = "A" if RANKING_ORDER[left] < RANKING_ORDER[right] else "B"
            record_vote(db, RANKING_TASK, "fair", a, b, better)
            record_vote(db, RANKING_TASK, "lefty", a, b, "A")


# -- Align / Calibrate: a small fake run on the demo's SummEval task ---------------------------
def small_run(db, limit: int = 96) -> int:
    """The demo's SummEval task split 6/6 (seed 0), a version keeping 3 questions per
    dimension (fast to run), and a finished fake-judge rocketeval run on its first ``limit``
    items."""
    from checkeval_core.checklists.versions import freeze
    from checkeval_core.runs.jobs import create_run, execute_run
    from checkeval_core.store import db_path
    from checkeval_core.task_split import set_split

    for (d,) in db.execute("SELECT DISTINCT q.dimension_id FROM question q JOIN task t ON "
                           "t.id = q.task_id WHERE t.name = 'summeval-demo' AND q.status = "
                           "'kept'").fetchall():
        db.execute("UPDATE question SET status = 'rejected', reason = 'test: fewer questions' "
                   "WHERE id IN (SELECT id FROM question WHERE dimension_id = ? AND status = "
                   "'kept' ORDER BY position LIMIT -1 OFFSET 3)", [d])
    v = freeze(db, "summeval-demo", note="three per dimension")["version"]
    set_split(db, "summeval-demo")
    rid = create_run(db, "summeval-demo", "fake", "rocketeval", checklist=v, limit=limit)
    execute_run(db_path(db), rid)
    return rid


def give_old_database_todays_answer_columns(db) -> None:
    """Today's run executor records which judge gave each answer (migration m0017); a test
    that writes runs into a database of an older schema adds those columns first (m0017 keeps
    columns a database already has when it is applied on the upgrade)."""
    from checkeval_core.migrations import m0017_answer_judge

    for sql in m0017_answer_judge.STATEMENTS:
        if sql.startswith("ALTER"):
            db.execute(sql)


def bench_folder_from_demo(tmp_path: Path) -> Path:
    """A SummEval-shaped benchmark folder made from the bundled demo (``summeval.jsonl`` and
    its published checklist): what ``bench quality --data`` reads, without the real one."""
    from checkeval_core.config import data_dir

    src = tmp_path / "bench"
    (src / "checklists").mkdir(parents=True)
    rows = [json.loads(x) for x in (data_dir() / "summeval_demo.jsonl").read_text().splitlines()]
    (src / "summeval.jsonl").write_text("".join(json.dumps(
        {"doc_id": r["group_id"], "system_id": r["system_id"], "source": r["source"],
         "reference": r["reference"], "output": r["output"], "scores": r["scores"]}) + "\n"
        for r in rows))
    (src / "checklists" / "summeval.json").write_text(
        (data_dir() / "checklists" / "summeval.json").read_text())
    return src


# -- a small random pair of runs (the pinned Compare / Analysis outputs) -----------------------
_PIN_NOW = "2026-01-01T00:00:00"
_PIN_DIMS = ("coh", "flu")


def random_two_runs(db) -> tuple[int, int]:
    """The random fixture of the pinned Compare and Analysis tests — task ``t``: 8 groups × 5 systems, dimensions coh/flu with 3 questions each; runs A and
    B (share_yes) with random scores and answers."""
    rng = random.Random(7)
    c = db.conn
    c.execute("INSERT INTO task (name, kind, created_at) VALUES ('t', 'summarization', ?)", [_PIN_NOW])
    for d in _PIN_DIMS:
        c.execute("INSERT INTO dimension (task_id, name) VALUES (1, ?)", [d])
    for q in range(6):
        c.execute("INSERT INTO question (task_id, dimension_id, text, created_at) VALUES "
                  "(1, ?, ?, ?)", [q // 3 + 1, f"Question {q + 1}?", _PIN_NOW])
    items = [(g, s) for g in range(8) for s in range(5)]
    for pos, (g, s) in enumerate(items):
        c.execute("INSERT INTO item (task_id, item_id, group_id, system_id, output, position) "
                  "VALUES (1, ?, ?, ?, 'x', ?)", [f"g{g}-s{s}", f"g{g}", f"s{s}", pos])
    for pk, (g, _s) in enumerate(items, 1):
        for d in _PIN_DIMS:
            if pk % 7 == 3:
                continue  # no human score
            h = 3.0 if (g == 7 and d == "coh") else float(rng.randint(1, 5))
            c.execute("INSERT INTO human_score (item_id, dimension, value) VALUES (?, ?, ?)",
                      [pk, d, h])
    runs = []
    for r in range(2):
        c.execute("INSERT INTO run (task_id, judge_spec, method, params, status, created_at) "
                  "VALUES (1, ?, 'checkeval', '{\"aggregation\": \"share_yes\"}', 'completed', ?)",
                  [f"judge-{r}", _PIN_NOW])
        runs.append(c.execute("SELECT max(id) FROM run").fetchone()[0])
    a, b = runs
    for pk in range(1, len(items) + 1):
        for d in _PIN_DIMS:
            for rid in runs:
                if rid == b and pk in (1, 2):
                    continue  # items only run A scored
                v = None if (pk % 11 == 5 and rid == b) else rng.randint(0, 4) / 4
                c.execute("INSERT INTO score (run_id, item_id, dimension, aggregation, value) "
                          "VALUES (?, ?, ?, 'share_yes', ?)", [rid, pk, d, v])
    ans = []
    for rid in runs:
        for pk in range(1, len(items) + 1):
            ans.append((rid, pk, 0, "", "coh", rng.choice(["yes", "no"])))  # Likert: no decision
            for q in range(1, 7):
                if rid == b and q == 6 and pk <= 10:
                    continue  # answered by A only
                units = ["u1", "u2"] if q == 3 else [""]
                for u in units:
                    v = rng.choices(["yes", "no", "invalid"], [0.45, 0.45, 0.1])[0]
                    ans.append((rid, pk, q, u, _PIN_DIMS[(q - 1) // 3], v))
    # question 2: B mostly contradicts A (more flips than MAX_FLIPPED_ITEMS)
    first = {(pk, q, u): v for rid, pk, q, u, _, v in ans if rid == a}
    ans = [(rid, pk, q, u, d, ({"yes": "no", "no": "yes"}.get(first[(pk, q, u)], v)
                               if rid == b and q == 2 and pk % 9 else v))
           for rid, pk, q, u, d, v in ans]
    c.executemany("INSERT INTO answer (run_id, item_id, question_id, unit, dimension, verdict, "
                  "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [(*x, _PIN_NOW) for x in ans])
    c.commit()
    return a, b


#: How far a pinned float may move: relative 1e-9 (with 1e-12 absolute, for values at 0).
#: A pinned file is written on one CPU; the order in which numpy / scipy sum a reduction
#: depends on the vector code that CPU runs (AVX2 vs AVX-512, Intel vs AMD), so the last bits
#: of a mean or a correlation differ between machines (seen: a Pearson −0.05195833376287648
#: against the pinned …466 on an AMD EPYC). Any real change of a statistic moves it by far
#: more than 1e-9 of its value; keys, types, lengths, strings and NaN stay exact.
PINNED_REL, PINNED_ABS = 1e-9, 1e-12


def same_pinned(got: Any, want: Any, where: str = "", rel: float = PINNED_REL,
                abs_: float = PINNED_ABS) -> None:
    """``got`` equals a pinned output ``want``: the same keys, lengths, types and values, NaN
    where NaN; a float within ``rel`` (relative) or ``abs_`` (absolute) of the pinned one."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            same_pinned(got[k], want[k], f"{where}.{k}", rel, abs_)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            same_pinned(g, w, f"{where}[{i}]", rel, abs_)
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), where
    elif isinstance(want, float):
        assert type(got) is float, (where, got, want)
        assert got == pytest.approx(want, rel=rel, abs=abs_), (where, got, want)
    else:
        assert type(got) is type(want) and got == want, (where, got, want)


def dialogue_task(db, tmp_path, n: int, questions: list[str], *, groups: int = 0,
                  scores: bool = False, definition: str = "good reply", frozen: bool = True,
                  name: str = "chat") -> str:
    """A dialogue task ``name`` of ``n`` replies to "Hi?" (ids ``r0`` …; in ``groups`` groups
    ``g0`` … when given; with a human ``quality`` score ``i % 3 + 1`` when ``scores``) and a
    checklist of ``questions`` under quality / Basics, frozen unless ``frozen`` is false."""
    rows = []
    for i in range(n):
        row = {"id": f"r{i}", "context": "Hi?", "output": f"Fine {i}."}
        if groups:
            row["group_id"] = f"g{i % groups}"
        if scores:
            row["scores"] = {"quality": i % 3 + 1}
        rows.append(row)
    p = tmp_path / f"{name}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_file(db, p, name, kind="dialogue")
    c = tmp_path / f"{name}-checklist.json"
    c.write_text(json.dumps({"quality": {"definition": definition, "sub_dimensions": {
        "Basics": {"seed": list(questions)}}}}))
    import_checklist(db, name, c)
    if frozen:
        freeze(db, name)
    return name


def browser_run_page(page, url: str, judge: str = "fake", limit: int = 2) -> None:
    """Open the Run page in ``page`` with ``judge`` alone (typed; the preselected embedded
    judges' tags removed, embedded:quality where the larger model is installed) and the first
    ``limit`` items; Enter commits the number, only the Start button starts a run."""
    page.goto(url + "/run")
    page.get_by_text("Checklist version").wait_for()
    page.get_by_label("Another judge spec (optional)").fill(judge)
    for name in ("Remove embedded:quality", "Remove embedded"):
        button = page.get_by_role("button", name=name, exact=True)
        if button.count():
            button.click()
    box = page.get_by_role("spinbutton", name="Items (first N)")
    box.fill(str(limit))
    box.press("Enter")
    idle(page)


def idle(page) -> None:
    """Wait until Streamlit has finished the script run the browser's last action started.

    The app's own run state (``data-test-script-state`` on ``stApp``) is back to
    "notRunning" and the running indicator hidden. A widget's rerun request reaches that
    state a moment after the action (the page says "running" only once the server answers),
    hence the short pause first, as Streamlit's own browser tests do."""
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(250)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for()
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")


# -- batch files (tests/test_run_batch_files.py, tests/test_run_batch_api.py) --------------------
BATCH_ANSWER_COLS = ("item_id, question_id, unit, dimension, verdict, p_yes, value, mode, raw, "
                     "error, tokens_in, tokens_out, judge")




def fake_batch_results(db, run_id, request_lines, model="fake"):
    """Result lines (OpenAI's batch output format) answering ``request_lines`` (a batch file
    of run ``run_id``) with the fake judge's answers."""
    run = get_run(db, run_id)
    plan = plan_run(db, run, offline_judge(db, run["judge_spec"]))
    fake = FakeJudge()
    out = []
    log = os.environ.pop("CHECKEVAL_FAKE_LOG", None)  # these answers are the test's, not a run's
    try:
        for i, line in enumerate(request_lines):
            cid = json.loads(line)["custom_id"]
            p = plan.pending[cid]
            if p.kind == "binary":
                r = fake.binary([p.request])[0]
                body = chat_completion(model, r.raw, r.p_yes, r.tokens_in, r.tokens_out)
            else:
                r = fake.generate([p.request])[0]
                body = chat_completion(model, r.text, None, r.tokens_in, r.tokens_out)
            out.append(json.dumps({"id": f"batch_req_{i}", "custom_id": cid,
                                   "response": {"status_code": 200, "request_id": f"req_{i}",
                                                "body": body}, "error": None}))
    finally:
        if log is not None:
            os.environ["CHECKEVAL_FAKE_LOG"] = log
    return out


def batch_lines(path):
    """The non-blank lines of a JSONL file."""
    return [x for x in Path(path).read_text(encoding="utf-8").split("\n") if x]


def batch_answers(db, rid):
    """A run's answers (:data:`BATCH_ANSWER_COLS`), in a stable order."""
    return sorted(db.execute(f"SELECT {BATCH_ANSWER_COLS} FROM answer WHERE run_id = ?", [rid]),
                  key=lambda r: tuple(str(x) for x in r[:4]))


def same_batch_answers(a, b):
    """Two runs' answers are the same: every column exactly, p(Yes) within 1e-9."""
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert x[:5] == y[:5] and x[6:] == y[6:]
        assert (x[5] is None) == (y[5] is None)
        if x[5] is not None:
            assert x[5] == pytest.approx(y[5], abs=1e-9)


# -- questions tested on dev items, and written from examples (test_question_evidence.py,
# test_checklist_grounded.py) -------------------------------------------------------------------
EV_GROUPS = [f"g{i}" for i in range(8)]  # g6, g7 held out
EV_HUMAN = {g: PROPOSE_PERMS[i] for i, g in enumerate(EV_GROUPS)}
# The fake judge says Yes when every content word of the question is in the item's text and No
# when none is: the good and the kept question follow people (high-scored outputs name the
# council decision), the reversed one follows the low-scored outputs, the constant one never
# finds its word. Held-out outputs carry the fake judge's invalid marker: read, they would show.
EV_HIGH = "The council decision is named here."
EV_LOW = "It mentions cats and parks."
EV_TEXTS = {"good": "Does the summary name the council decision?",
            "kept": "Is the council decision named?",
            "reversed": "Does the summary mention cats and parks?",
            "constant": "Is the summary good?"}


def evidence_task(db, name: str = "ev") -> dict[str, int]:
    """Task ``name``: 8 documents × 4 systems with human coherence (g6, g7 held out), the
    question ``kept`` kept and the three others proposed; returns ``{name: question id}``."""
    from checkeval_core.checklists.editing import add_question, ensure_dimension, ensure_sub
    from checkeval_core.judges.fake import INVALID_MARKER
    from checkeval_core.store import task_id
    from checkeval_core.task_split import set_explicit_split

    recs = [{"id": f"{g}-{k}", "group_id": g, "system_id": PROPOSE_SYSTEMS[k],
             "source": f"doc {g}", "human_coherence": h,
             "output": (EV_HIGH if h >= 3 else EV_LOW)
             + (f" {INVALID_MARKER}" if g in ("g6", "g7") else "")}
            for g, hs in EV_HUMAN.items() for k, h in enumerate(hs)]
    import_file(db, None, name, kind="summarization", filename="items.jsonl",
                data="\n".join(json.dumps(r) for r in recs).encode())
    set_explicit_split(db, name, ["g6", "g7"])
    tid = task_id(db, name)
    d = ensure_dimension(db, tid, "coherence", "how well the summary hangs together")
    s = ensure_sub(db, d, "structure")
    return {n: add_question(db, tid, d, s, t, status="kept" if n == "kept" else "proposed")
            for n, t in EV_TEXTS.items()}


def item_button(at, prefix: str):
    """The Annotate page's Submit / Skip button of the item shown (keyed by job, item and
    annotator: a queued second click cannot press the next item's)."""
    found = [b for b in at.button if (b.key or "").startswith(prefix + "|")]
    assert len(found) == 1, [b.key for b in at.button]
    return found[0]


def submit_answered(db, job_id: int, fill: str = "unsure") -> int:
    """Submit every item of a fixed job that someone answered and has not submitted, as the
    annotator would: the questions of the item's checklist they left get ``fill`` (``unsure``
    is no answer for either side), then *Submit*. People's answers count once submitted
    (:mod:`checkeval_core.people`). Returns how many items were submitted."""
    from checkeval_core.annotation import jobs as J

    open_items = db.execute(
        "SELECT DISTINCT a.annotator, a.item_id FROM annotation a JOIN annotation_assignment s "
        "ON s.job_id = a.job_id AND s.item_id = a.item_id AND s.annotator = a.annotator AND "
        "s.status = 'todo' WHERE a.job_id = ? AND a.kind = 'answer' ORDER BY 2, 1",
        [job_id]).fetchall()
    for who, pk in open_items:
        have = J.answers_of(db, job_id, who, pk)
        for q in J.job_questions(db, job_id, pk):
            if q["id"] not in have:
                J.save_answer(db, job_id, who, pk, q["id"], fill)
        J.submit_item(db, job_id, who, pk)
    return len(open_items)


def summeval_bench_folder(tmp_path: Path) -> Path:
    """A SummEval-shaped benchmark folder (summeval.jsonl, checklists/summeval.json) of the
    bundled demo's 8 documents, for the benches that read the real one."""
    from checkeval_core.config import data_dir

    src = tmp_path / "bench"
    (src / "checklists").mkdir(parents=True)
    rows = [json.loads(x) for x in (data_dir() / "summeval_demo.jsonl").read_text().splitlines()]
    (src / "summeval.jsonl").write_text("".join(json.dumps(
        {"doc_id": r["group_id"], "system_id": r["system_id"], "source": r["source"],
         "output": r["output"], "scores": r["scores"]}) + "\n" for r in rows))
    (src / "checklists" / "summeval.json").write_text(
        (data_dir() / "checklists" / "summeval.json").read_text())
    return src
