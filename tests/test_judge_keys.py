"""One key resolver for every entry point (issue 13, items 7 and 13).

A judge saved with ``--key-env MYKEY`` must send ``Bearer <$MYKEY>`` from ``checkeval judge
test``, ``checkeval run`` and the Run page's background worker (``start_background`` →
``execute_run``); the key never reaches the database, the run's params, logs or outputs.
Key-shaped strings are refused as key sources and never stored.

``ScriptedServer`` (a local OpenAI-compatible server recording every request's
Authorization header) is shared with the other run-integrity tests.
"""

from __future__ import annotations

import json

import pytest

from checkeval_core.judges.keys import KEY_HOSTS_ENV, resolve_key
from checkeval_core.judges.saved import add_judge
from checkeval_core.store import open_db
from tests.helpers import ScriptedServer, cli, load_demo_copy

SECRET = "sk-MYKEY-secret-0123456789abcdef"





@pytest.fixture
def server(monkeypatch, clean_keys):
    """A local server the operator approved MYKEY for."""
    s = ScriptedServer()
    monkeypatch.setenv(KEY_HOSTS_ENV, f"MYKEY={s.url}")
    yield s
    s.close()


@pytest.fixture
def clean_keys(monkeypatch, tmp_path):
    """No default key variables; MYKEY holds the secret; logs in a temp cache dir."""
    for k in ("CHECKEVAL_OPENAI_COMPAT_KEY", "CHECKEVAL_OPENAI_KEY", "OPENAI_API_KEY",
              KEY_HOSTS_ENV):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MYKEY", SECRET)
    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "0")




def assert_secret_nowhere(tmp_path, *texts):
    for t in texts:
        assert SECRET not in t
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p


def test_resolve_key_order(db, monkeypatch, clean_keys):
    spec = "openai-compat:http://h/v1#m"
    assert resolve_key(db, spec) is None  # nothing configured
    monkeypatch.setenv("CHECKEVAL_OPENAI_COMPAT_KEY", "default-key")
    assert resolve_key(db, spec) is None  # set, but nobody approved http://h for it
    monkeypatch.setenv(KEY_HOSTS_ENV, "CHECKEVAL_OPENAI_COMPAT_KEY=http://h;MYKEY=http://h,"
                                      "https://x.example\nOTHER=http://h")
    assert resolve_key(db, spec) == "default-key"
    add_judge(db, spec, key_env="MYKEY")
    assert resolve_key(db, spec) == SECRET  # the saved judge's variable wins
    monkeypatch.setenv("OTHER", "other-key")
    assert resolve_key(db, spec, key_env="OTHER") == "other-key"  # explicit wins
    # a variable only in the app's secrets (the Judges page passes st.secrets)
    monkeypatch.delenv("MYKEY")
    assert resolve_key(db, spec, secrets={"MYKEY": "from-secrets"}) == "from-secrets"
    assert resolve_key(db, spec) == "default-key"  # MYKEY unset: falls back to the default
    assert resolve_key(db, "fake") is None
    monkeypatch.setenv("OPENAI_API_KEY", "oa")
    assert resolve_key(db, "openai:gpt-4o") == "oa"
    monkeypatch.setenv("CHECKEVAL_OPENAI_KEY", "ce")
    assert resolve_key(db, "openai:gpt-4o") == "ce"
    # saving the judge again with a key source updates it (not silently ignored)
    add_judge(db, spec, key_env="OTHER")
    assert resolve_key(db, spec) == "other-key"


def test_judge_test_and_run_send_the_saved_key(server, db_path, tmp_path, clean_keys):
    r = cli(db_path, "judge", "add", server.spec, "--key-env", "MYKEY")
    assert r.returncode == 0, r.stderr
    r = cli(db_path, "judge", "test", "--judge", server.spec, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "yes"
    assert server.auths() == {f"Bearer {SECRET}"}
    n_test = len(server.requests)
    assert cli(db_path, "demo").returncode == 0
    r = cli(db_path, "run", "--task", "topical-chat-demo", "--judge", server.spec, "--method",
            "rocketeval", "--limit", "1", "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "completed" and out["n_answers"] > 50
    assert len(server.requests) - n_test == out["n_answers"]
    assert server.auths() == {f"Bearer {SECRET}"}  # old code: "Bearer not-needed"
    d = open_db(db_path)
    d.conn.execute("PRAGMA wal_checkpoint(FULL)")
    assert_secret_nowhere(tmp_path, r.stdout, r.stderr,
                          cli(db_path, "export", "--run", str(out["run"]), "--what", "answers",
                              "--format", "jsonl", "--out", str(tmp_path / "a.jsonl")).stderr)


def test_background_worker_sends_the_saved_key(server, db, db_path, tmp_path, clean_keys):
    from checkeval_core.runs.jobs import create_run, start_background, wait_for

    load_demo_copy(db)
    add_judge(db, server.spec, key_env="MYKEY")
    rid = create_run(db, "topical-chat-demo", server.spec, "rocketeval", limit=1)
    start_background(db_path, rid)  # what the Run page's Start/Resume do
    run = wait_for(db_path, rid, timeout=240)
    assert run["status"] == "completed", run["error"]
    assert len(server.requests) == run["n_answers"] > 50
    assert server.auths() == {f"Bearer {SECRET}"}
    assert "MYKEY" not in json.dumps(run["params"]) and SECRET not in json.dumps(run["params"])
    db.conn.execute("PRAGMA wal_checkpoint(FULL)")
    assert_secret_nowhere(tmp_path)  # database files and the worker's log


@pytest.mark.parametrize("bad", ["sk-proj-abc123", "sk_live_abc123", "my key", "mykey",
                                 "1ABC", "A-B"])
def test_key_shaped_key_env_refused_and_never_stored(db_path, bad, clean_keys):
    r = cli(db_path, "judge", "add", "openai-compat:http://h/v1#m", "--key-env", bad)
    assert r.returncode == 2
    assert "NAME of an environment variable" in r.stderr and bad not in r.stderr
    d = open_db(db_path)
    assert d.execute("SELECT COUNT(*) FROM judge WHERE spec LIKE 'openai-compat%'"
                     ).fetchone()[0] == 0
    assert bad not in json.dumps([list(x) for x in d.execute("SELECT * FROM judge")])


def test_judges_page_test_button_sends_the_saved_key(server, db, clean_keys):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    add_judge(db, server.spec, key_env="MYKEY")
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    at = AppTest.from_file(app, default_timeout=120).run()
    at.switch_page("app_pages/judges.py").run()
    at.selectbox(key="test_spec").select(server.spec).run()
    at.button(key="test_run").click().run()
    assert not at.exception and not at.error
    assert {m.label: m.value for m in at.metric}["Verdict"] == "yes"
    assert server.auths() == {f"Bearer {SECRET}"}
    assert all(SECRET not in str(e.value) for e in at.markdown)
