"""The Run page's engine: the default (the run's worker asks the judge), or Ray workers — a
local Ray or a cluster's address — through the same ``checkeval run --resume R --engine ray``
path as the CLI; disabled, with how to install it, when Ray is not importable; wrong Ray
options are said and start nothing; a worker that stops before its run starts fails the run
with its reason."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

import checkeval_core.runs as runs
import studio_ui.engine_ui as engine_ui
from checkeval_core.runs import create_run, get_run, list_runs
from checkeval_core.runs.jobs import wait_for
from checkeval_core.runs.ray_engine import INSTALL, EngineError, engine_args
from checkeval_core.store import db_path
from tests.conftest import run_page
from tests.helpers import make_runs_task


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def launched(monkeypatch):
    """The runs the page starts and the engine options each worker would get (no worker)."""
    started: list[tuple[int, list[str]]] = []
    monkeypatch.setattr(runs, "start_background",
                        lambda path, rid, engine=(): started.append((rid, list(engine))))
    return started


def shown(element) -> str:
    """An element's text as read (markdown escapes removed)."""
    return element.value.replace("\\", "")


def page(task):
    at = run_page(task, "fake", ["rocketeval"])
    at.number_input(key="run_limit").set_value(2).run()
    return at


def test_without_ray_the_choice_is_disabled_and_says_how_to_install_it(
        db, tmp_path, monkeypatch, launched):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    at = page(make_runs_task(db, tmp_path))
    radio = at.radio(key="run_engine")
    assert radio.disabled and radio.value == "local"
    assert any("Ray is not installed" in c.value and INSTALL in c.value for c in at.caption)
    at.button(key="run_start").click().run()
    assert not at.exception and launched == [(list_runs(db, "t")[0]["id"], [])]


def test_ray_options_go_to_the_worker_and_resume_keeps_them(db, tmp_path, launched):
    at = page(make_runs_task(db, tmp_path))
    radio = at.radio(key="run_engine")
    assert not radio.disabled and radio.value == "local"  # the default engine
    radio.set_value("ray").run()
    at.text_input(key="run_ray_address").input("ray://head:10001")
    at.number_input(key="run_ray_workers").set_value(4).run()
    assert not at.error and any("Ray cluster at ray://head:10001 with 4 worker(s)" in c.value
                                for c in at.caption)
    at.button(key="run_start").click().run()
    assert not at.exception
    [(rid, args)] = launched
    assert args == ["--engine", "ray", "--ray-address", "ray://head:10001", "--workers", "4"]
    db.execute("UPDATE run SET status = 'cancelled' WHERE id = ?", [rid])
    at.run()
    at.button(key="run_resume").click().run()
    assert launched[1] == (rid, args)


def test_wrong_ray_options_are_said_and_start_nothing(db, tmp_path, launched, monkeypatch):
    monkeypatch.setattr(engine_ui, "local_cpus", lambda: 2)
    at = page(make_runs_task(db, tmp_path))
    at.radio(key="run_engine").set_value("ray").run()
    at.number_input(key="run_ray_workers").set_value(3).run()
    assert any("3 workers: a local Ray here has 2 CPUs" in shown(e) for e in at.error)
    assert at.button(key="run_start").disabled
    at.number_input(key="run_ray_workers").set_value(0).run()  # one per CPU
    assert not at.error and not at.button(key="run_start").disabled
    at.text_input(key="run_ray_address").input("head 6379").run()
    assert any("'head 6379': give the cluster's address" in shown(e) for e in at.error)
    assert at.button(key="run_start").disabled and launched == [] and list_runs(db, "t") == []


def test_engine_options_for_the_worker():
    assert engine_args("local") == [] and engine_args(None) == []
    assert engine_args("ray") == ["--engine", "ray"]
    assert engine_args("ray", "auto", 2) == ["--engine", "ray", "--ray-address", "auto",
                                             "--workers", "2"]
    with pytest.raises(EngineError, match="go with --engine ray"):
        engine_args("local", workers=2)


def test_the_page_helpers_do_not_import_ray():
    """Importing Ray takes seconds: the Run page only looks whether it is there."""
    code = ("import sys, studio_ui.engine_ui as e; e.ray_installed(); "
            "e.engine_args('ray', None, 2); print('ray' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


def test_engine_options_need_ray_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(EngineError, match=r"pip install -e '\.\[scale\]'"):
        engine_args("ray", workers=2)


@pytest.mark.slow
def test_a_worker_that_stops_before_its_run_starts_fails_the_run(db, tmp_path):
    task = make_runs_task(db, tmp_path)
    rid = create_run(db, task, "fake", "rocketeval", limit=1)
    runs.start_background(db_path(db), rid, ["--engine", "spark"])  # refused by the CLI
    deadline = time.time() + 120
    while get_run(db, rid)["status"] == "pending" and time.time() < deadline:
        time.sleep(0.3)
    run = get_run(db, rid)
    assert run["status"] == "failed" and run["pid"] is None
    assert "stopped before the run started" in run["error"]
    assert "choose one of local, ray" in run["error"]


@pytest.mark.slow  # a local Ray takes 10-60 s to start on a loaded 2-core machine
def test_a_run_started_on_ray_from_the_page_completes_with_its_answers(
        db, tmp_path, monkeypatch):
    pytest.importorskip("ray")
    real, launched = runs.start_background, []

    def launch(path, rid, engine=()):  # the real worker, its options recorded
        launched.append((rid, list(engine)))
        return real(path, rid, engine)

    monkeypatch.setattr(runs, "start_background", launch)
    monkeypatch.setattr(engine_ui, "local_cpus", lambda: 2)
    at = page(make_runs_task(db, tmp_path))
    at.radio(key="run_engine").set_value("ray").run()
    at.number_input(key="run_ray_workers").set_value(2).run()
    at.button(key="run_start").click().run()
    assert not at.exception
    [(rid, args)] = launched
    assert args == ["--engine", "ray", "--workers", "2"]
    run = wait_for(db_path(db), rid, timeout=600)
    log = (tmp_path / "cache" / "logs" / f"run-{rid}.log").read_text()
    assert run["status"] == "completed", (run["error"], log)
    assert f"run {rid} started" in log  # after the engine was checked and Ray joined
    # 2 items × 5 questions, scored; the same answers as the default engine gives
    assert run["n_answers"] == 10 and run["n_errors"] == 0
    local = create_run(db, "t", "fake", "rocketeval", limit=2)
    assert runs.execute_run(db_path(db), local)["status"] == "completed"
    q = "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ? ORDER BY 1, 2"
    assert db.execute(q, [rid]).fetchall() == db.execute(q, [local]).fetchall()
    assert db.execute("SELECT COUNT(*) FROM score WHERE run_id = ?", [rid]).fetchone()[0] > 0
