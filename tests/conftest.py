"""Shared fixtures: a temporary database, the real app on a free port, a Chromium page."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import (  # noqa: F401 - fake_demo_runs: imported from here by some tests
    APP,
    REPO,
    ScriptedServer,
    copy_db,
    demo_template,
    dialogue_task,
    fake_demo_runs,
    make_runs_task,
    restore,
)

# Tests start from the demo's data and checklists without its pre-computed runs (run ids
# then start at 1); tests/test_demo_runs.py checks those runs explicitly.
os.environ["CHECKEVAL_DEMO_RUNS"] = "0"
# ... and without the instruction-following demo task (issue 14), which sorts first by name;
# tests of that task set CHECKEVAL_DEMO_INSTRUCTION=1 (tests/test_demo_instruction.py).
os.environ["CHECKEVAL_DEMO_INSTRUCTION"] = "0"
CHROMIUM = "/usr/bin/chromium"


def pytest_collection_modifyitems(config, items):
    """Browser and embedded-model tests are slow by nature (a Streamlit server and Chromium,
    or a real model): mark them so ``-m 'not slow'`` leaves them out of a quick loop."""
    for item in items:
        if item.get_closest_marker("browser") or item.get_closest_marker("embedded"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report carries what CI cannot show otherwise: the page's text
    as the browser had it and the end of the app server's log."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for name in ("screen", "page"):
        pg = item.funcargs.get(name)
        if pg is not None and hasattr(pg, "locator"):
            try:
                text = pg.locator("[data-testid='stMain']").inner_text(timeout=5_000)
            except Exception as e:  # noqa: BLE001 - a report must not fail on its extras
                text = f"(page text unreadable: {e})"
            report.sections.append((f"page text ({name})", text[-6_000:]))
    server = item.funcargs.get("app_server")
    if server is not None:
        log = server.db_path.parent / "streamlit.log"
        if log.exists():
            report.sections.append(("app server log (end)",
                                    "\n".join(log.read_text(errors="replace")
                                              .splitlines()[-80:])))


@pytest.fixture
def db_path(tmp_path, monkeypatch) -> Path:
    """A fresh database path, also exported as CHECKEVAL_DB for code that uses the default."""
    p = tmp_path / "test.db"
    monkeypatch.setenv("CHECKEVAL_DB", str(p))
    return p


@pytest.fixture
def db(db_path):
    from checkeval_core.store import open_db

    d = open_db(db_path)
    yield d
    d.close()


@pytest.fixture(scope="session")
def demo_template_path() -> Path:
    """The demo database (``load_demo`` with the settings above), built once per session;
    never write to it: use ``demo_db``."""
    return demo_template()


@pytest.fixture
def demo_db_path(tmp_path, demo_template_path) -> Path:
    """A file copy of the session's demo database (for tests that hand a path to the CLI)."""
    return copy_db(demo_template_path, tmp_path / "demo.db")


@pytest.fixture
def demo_db(db, demo_template_path):
    """``db`` with the demo loaded: a copy of the session's demo database."""
    restore(demo_template_path, db)
    return db


@pytest.fixture
def task(db, tmp_path) -> str:
    """Task ``t``: 3 documents x 3 systems with human scores and a frozen seed checklist."""
    return make_runs_task(db, tmp_path)




@pytest.fixture
def chat(db, tmp_path) -> str:
    """Task ``chat``: 4 replies in 2 groups with a human ``quality`` score and a frozen
    two-question checklist."""
    return dialogue_task(db, tmp_path, 4, ["Is the reply polite?", "Does the reply answer?"],
                         groups=2, scores=True)


@pytest.fixture
def launched(monkeypatch) -> list[int]:
    """Runs the pages start, recorded instead of spawning workers."""
    import checkeval_core.runs as runs

    started: list[int] = []
    monkeypatch.setattr(runs, "start_background", lambda path, rid: started.append(rid))
    return started


@pytest.fixture
def listener():
    """A visitor's own server on localhost, answering as scripted and recording what it got."""
    s = ScriptedServer()
    yield s
    s.close()


def run_page(task: str, judge: str | None = None, methods: list[str] | None = None):
    """The Run page on ``task``; with ``judge``, that judge alone (typed, the listed ones
    cleared) and ``methods`` chosen."""
    at = open_app_page("app_pages/run.py")
    at.selectbox(key="run_task").select(task).run()
    if judge is not None:
        at.multiselect(key="run_judges").set_value([])
        at.text_input(key="run_extra").input(judge)
    if methods is not None:
        at.multiselect(key="run_methods").set_value(methods)
    return at


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    def __init__(self, url: str, db_path: Path, proc: subprocess.Popen):
        self.url, self.db_path, self.proc = url, db_path, proc


@pytest.fixture
def app_server(tmp_path):
    """Start ``streamlit run app.py`` on a free 127.0.0.1 port against a temp database.

    The database is prepared by the test before navigation if needed (``server.db_path``).
    """
    port = free_port()
    dbp = tmp_path / "app.db"
    env = dict(os.environ, CHECKEVAL_DB=str(dbp), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    log = open(tmp_path / "streamlit.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "studio_ui.serve",
         "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
        if proc.poll() is not None:
            raise RuntimeError((tmp_path / "streamlit.log").read_text())
    else:
        proc.kill()
        raise RuntimeError("streamlit did not start: " + (tmp_path / "streamlit.log").read_text())
    yield AppServer(url, dbp, proc)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser():
    """Playwright driving Debian's Chromium (never a downloaded browser build)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: run the README's test command (it installs chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"])
        yield b
        b.close()


def _browser_page(browser, width: int, height: int, timeout_ms: int):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    pg.set_default_timeout(timeout_ms)
    yield pg
    ctx.close()


@pytest.fixture
def page(browser):
    yield from _browser_page(browser, 1400, 1000, 30_000)


@pytest.fixture
def screen(browser):
    """A page at 1440×900, the size a person's laptop shows: the pages are checked there."""
    yield from _browser_page(browser, 1440, 900, 60_000)



def open_app_page(page_path: str, timeout: int = 180):
    """AppTest of the whole app (st.navigation), switched to one page, checked error-free."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout).run()
    at.switch_page(page_path).run()
    assert not at.exception, at.exception
    return at


# module-scoped fixture shared by the malformed-input matrix and the CLI input rules
from tests.helpers import base  # noqa: E402, F401


@pytest.fixture
def few_groups_allowed(monkeypatch):
    """For tests that check a statistic's arithmetic by hand on a fixture of 2–5 groups: the
    floor's small-sample rule (``stats.bootstrap.MIN_GROUPS``, read when called) lowered to
    2, so the interval, flag or proposal being checked is computed at all. The rule itself
    is tested at its real value (``tests/test_small_sample_rule.py``)."""
    from checkeval_core.stats import bootstrap

    monkeypatch.setattr(bootstrap, "MIN_GROUPS", 2)
