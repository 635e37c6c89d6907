"""A key is sent only to an address the operator approved for its variable.

The attack: a web visitor saves an ``openai-compat`` judge whose base URL is the visitor's own
listener, names any server variable as the key source (or none, for the default), and presses
*Ask one question*; before, the listener received ``Authorization: Bearer <value>``. Here the
listener is a local :class:`ScriptedServer` and must never see a secret: not through the
page, the core, the CLI, a run, a redirect, a URL with credentials or a look-alike host, nor
through a saved judge whose address is edited afterwards.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.judges.base import BinaryRequest
from checkeval_core.judges.keys import (
    KEY_HOSTS_ENV,
    KeyRefused,
    declared_sources,
    origin_of,
    resolve,
)
from checkeval_core.judges.registry import get_judge, load_backend
from checkeval_core.judges.saved import add_judge
from checkeval_core.runs.judge_check import ask_judge
from tests.helpers import ScriptedServer, cli, load_demo_copy

APP = str(Path(__file__).resolve().parent.parent / "app.py")
SECRETS = {"OPENAI_API_KEY": "sk-openai-SECRET-0001", "AWS_SECRET_ACCESS_KEY": "aws-SECRET-0002",
           "CHECKEVAL_OPENAI_COMPAT_KEY": "compat-SECRET-0003", "MYKEY": "my-SECRET-0004",
           "CLIENT_SECRET": "oidc-SECRET-0005"}


@pytest.fixture
def env(monkeypatch, tmp_path):
    for k in ("CHECKEVAL_OPENAI_KEY", KEY_HOSTS_ENV):
        monkeypatch.delenv(k, raising=False)
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CHECKEVAL_DEMO_RUNS", "0")
    return monkeypatch


@pytest.fixture
def approved():
    """A server the operator approved MYKEY for."""
    s = ScriptedServer()
    yield s
    s.close()


def leaked(server: ScriptedServer) -> set[str]:
    return {name for name, value in SECRETS.items()
            for auth in server.auths() if auth and value in auth}


def req() -> BinaryRequest:
    return BinaryRequest("Judge.", ("Text: fine.\n\nQuestion: ",), "Is it fine?")


def test_the_three_page_attempts_send_no_secret(env, listener, db):
    """Judges page: the visitor's listener as base URL; the key source can only be one the
    operator approved for that address (none here), so the variables cannot even be named;
    saved without a key, *Ask one question* reaches the listener with no secret."""
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/judges.py").run()
    at.selectbox(key="add_backend").select("openai-compat").run()
    at.text_input(key="add_base_url").input(listener.url).run()
    at.text_input(key="add_model").input("m").run()
    options = at.selectbox(key="add_key_env").options
    assert len(options) == 1 and options[0].startswith("default:")  # nothing to name
    note = " ".join(c.value for c in at.caption)
    assert f"No key source is approved for {listener.url.rsplit('/', 1)[0]}" in note
    assert KEY_HOSTS_ENV in note  # says how the operator approves one
    at.button(key="add_save").click().run()
    spec = f"openai-compat:{listener.url}#m"
    at.selectbox(key="test_spec").select(spec).run()
    at.button(key="test_run").click().run()
    assert not at.exception
    assert listener.requests and leaked(listener) == set()
    assert listener.auths() == {"Bearer not-needed"}  # the compat default stayed home

    # the same three attempts, as a crafted form submission would reach the core
    for var in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "CLIENT_SECRET"):
        with pytest.raises(KeyRefused, match=var) as e:
            add_judge(db, spec, key_env=var)
        assert "127.0.0.1" in str(e.value) and KEY_HOSTS_ENV in str(e.value)
        assert SECRETS[var] not in str(e.value)
    assert db.execute("SELECT COUNT(*) FROM judge WHERE key_env != ''").fetchone()[0] == 0


def test_a_stored_key_source_is_checked_again_when_used(env, listener, db):
    """A judge row naming a variable (an older database, or one edited by hand) is refused at
    use, naming the variable and the address; nothing is sent."""
    spec = f"openai-compat:{listener.url}#m"
    for var in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        db.execute("DELETE FROM judge WHERE spec = ?", [spec])
        db.execute("INSERT INTO judge (spec, params, label, key_env, created_at) "
                   "VALUES (?, '{}', '', ?, '')", [spec, var])
        with pytest.raises(KeyRefused, match=var):
            ask_judge(db, spec)
        with pytest.raises(KeyRefused, match=var):
            get_judge(spec, db=db)
    assert listener.requests == []


def test_a_saved_judge_whose_address_is_edited_sends_nothing(env, approved, listener, db,
                                                            db_path):
    env.setenv(KEY_HOSTS_ENV, f"MYKEY={approved.url}")
    load_demo_copy(db)
    spec_ok = f"openai-compat:{approved.url}#m"
    add_judge(db, spec_ok, key_env="MYKEY")
    r = ask_judge(db, spec_ok)
    assert r["verdict"] == "yes" and approved.auths() == {f"Bearer {SECRETS['MYKEY']}"}
    spec_evil = f"openai-compat:{listener.url}#m"
    db.execute("UPDATE judge SET spec = ? WHERE spec = ?", [spec_evil, spec_ok])
    with pytest.raises(KeyRefused, match=r"MYKEY is not approved for http://127\.0\.0\.1:"):
        ask_judge(db, spec_evil)
    # a run with it starts nothing, before any judge call (CLI: exit 2, the reason named)
    r = cli(db_path, "run", "--task", "topical-chat-demo", "--judge", spec_evil, "--method",
            "rocketeval", "--limit", "1", "--json", "--quiet")
    assert r.returncode == 2 and "MYKEY" in r.stderr and KEY_HOSTS_ENV in r.stderr
    assert SECRETS["MYKEY"] not in r.stderr + r.stdout
    assert db.execute("SELECT COUNT(*) FROM run").fetchone()[0] == 0
    assert listener.requests == []


class Redirector:
    """An approved server that answers every request with a redirect to ``target``."""

    def __init__(self, target: str) -> None:
        self.hits = 0
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                srv.hits += 1
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(307)
                self.send_header("Location", target + "/chat/completions")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_redirect_to_another_host_is_not_followed(env, listener):
    red = Redirector(listener.url)
    try:
        env.setenv(KEY_HOSTS_ENV, f"MYKEY={red.url}")
        j = get_judge(f"openai-compat:{red.url}#m", key_env="MYKEY", cache=False)
        r = j.binary([req()])[0]
    finally:
        red.close()
    assert red.hits == 1 and r.verdict == "invalid"
    assert "redirect" in r.error and SECRETS["MYKEY"] not in r.error
    assert listener.requests == []


@pytest.mark.parametrize("url", [
    "http://api.openai.com@{host}/v1",        # credentials before '@': the host is {host}
    "http://127.0.0.1.nip.io:{port}/v1",      # a look-alike name
    "http://2130706433:{port}/v1",            # 127.0.0.1 as a number
    "http://localhost:{port}/v1",             # another name for the approved address
    "https://127.0.0.1:{port}/v1",            # another scheme
    "http://127.0.0.1:{other}/v1",            # another port
])
def test_address_tricks_are_refused(env, approved, listener, url):
    env.setenv(KEY_HOSTS_ENV, f"MYKEY={approved.url};OPENAI_API_KEY=https://api.openai.com")
    port = int(approved.url.rsplit(":", 1)[1].split("/")[0])
    other = int(listener.url.rsplit(":", 1)[1].split("/")[0])
    spec = "openai-compat:" + url.format(host=f"127.0.0.1:{other}", port=port,
                                         other=other) + "#m"
    for var in ("MYKEY", "OPENAI_API_KEY"):
        with pytest.raises(KeyRefused):
            resolve(None, spec, key_env=var)
    assert approved.requests == [] and listener.requests == []


def test_the_backend_checks_every_request_address(env, approved, listener):
    """Defence in depth: a key approved for one address, handed to a judge of another, is
    refused by the HTTP client before the request leaves."""
    j = load_backend(f"openai-compat:{listener.url}#m", api_key=SECRETS["MYKEY"],
                     key_origins=(origin_of(approved.url),))
    r = j.binary([req()])[0]
    assert r.verdict == "invalid" and "refused to send the key" in r.error
    assert listener.requests == []


def test_the_official_endpoint_is_approved_for_the_defaults_only(env):
    table = declared_sources()
    assert table["OPENAI_API_KEY"] == ["https://api.openai.com"]
    assert table["CHECKEVAL_OPENAI_KEY"] == ["https://api.openai.com"]
    assert table["CHECKEVAL_OPENAI_COMPAT_KEY"] == []  # no address until the operator names one
    found = resolve(None, "openai:gpt-4o-mini")
    assert found.variable == "OPENAI_API_KEY" and found.value == SECRETS["OPENAI_API_KEY"]
    # the client's own base-URL variable cannot move the key elsewhere
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    j = load_backend("openai:gpt-4o-mini", api_key=found.value, key_origins=found.origins)
    assert str(j.client.base_url).startswith("https://api.openai.com/")


def test_operator_policy_parsing(env):
    env.setenv(KEY_HOSTS_ENV, "A_KEY=gpu1.lab:8000, http://gpu2.lab:8001/v1 ;\nB_KEY=llm.example")
    table = declared_sources()
    assert table["A_KEY"] == ["https://gpu1.lab:8000", "http://gpu2.lab:8001"]
    assert table["B_KEY"] == ["https://llm.example"]
    env.setenv("A_KEY", "a-secret")
    assert resolve(None, "openai-compat:http://gpu2.lab:8001/v1#m", key_env="A_KEY").value == \
        "a-secret"
    with pytest.raises(KeyRefused, match="not approved for http://gpu1.lab:8000"):
        resolve(None, "openai-compat:http://gpu1.lab:8000/v1#m", key_env="A_KEY")
    for bad in ("lowercase=h", "NOEQUALS", "A_KEY=http://u:p@h"):
        env.setenv(KEY_HOSTS_ENV, bad)
        with pytest.raises(KeyRefused):
            declared_sources()
    # a policy in the app's secrets file counts too (no page writes it)
    env.delenv(KEY_HOSTS_ENV)
    assert declared_sources({KEY_HOSTS_ENV: "C_KEY=h.example"})["C_KEY"] == ["https://h.example"]


def test_cli_lists_sources_without_values(env, db_path):
    env.setenv(KEY_HOSTS_ENV, "MYKEY=http://127.0.0.1:8080")
    r = cli(db_path, "judge", "sources", "--json")
    assert r.returncode == 0, r.stderr
    rows = {x["variable"]: x for x in json.loads(r.stdout)}
    assert rows["MYKEY"] == {"variable": "MYKEY", "approved": ["http://127.0.0.1:8080"],
                             "set": True}
    assert not any(v in r.stdout for v in SECRETS.values())
    r = cli(db_path, "judge", "add", "openai-compat:http://10.0.0.5:8000/v1#m",
            "--key-env", "MYKEY")
    assert r.returncode == 2 and "MYKEY is not approved for http://10.0.0.5:8000" in r.stderr
