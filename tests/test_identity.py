"""Who is recorded (issue 13 item 2): login > one configured proxy header > typed name.

Unit tests of :func:`checkeval_core.identity.resolve_annotator`, then AppTests of the pages
that record names (a header test through a real browser is in test_browser_security.py).
"""

import json

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core.annotation import jobs as J
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.identity import (
    TRUSTED_HEADER_ENV,
    identity_mode,
    login_identity,
    resolve_annotator,
)
from checkeval_core.team import ADMINS_ENV, SECRETS_ENV, grant, role_of
from tests.conftest import APP
from tests.helpers import submit_answered

SPOOF = {"X-Forwarded-User": "mallory", "X-Auth-Request-User": "mallory",
         "Remote-User": "mallory"}


def test_headers_ignored_unless_configured():
    assert resolve_annotator(SPOOF, None, "alice", env={}) == ("alice", "typed", "")
    name, source, msg = resolve_annotator(SPOOF, None, "", env={})
    assert name is None and source == "typed" and "name" in msg


def test_only_the_configured_header_counts_case_insensitively():
    env = {TRUSTED_HEADER_ENV: "X-Auth-Request-User"}
    assert resolve_annotator({"x-auth-request-user": "bob"}, None, "", env=env) == \
        ("bob", "header", "")
    # another header, or a typed name, is not a way in when a header is configured
    name, source, msg = resolve_annotator({"X-Forwarded-User": "mallory"}, None, "mallory",
                                          env=env)
    assert name is None and source == "header" and "X-Auth-Request-User" in msg


def test_header_repeated_or_unusable_is_refused():
    env = {TRUSTED_HEADER_ENV: "Remote-User"}

    class Multi(dict):
        def get_all(self, key):
            return ["bob", "mallory"] if key.lower() == "remote-user" else []

    assert resolve_annotator(Multi(), None, "", env=env)[0] is None
    assert resolve_annotator({"Remote-User": "  "}, None, "", env=env)[0] is None
    assert resolve_annotator({"Remote-User": "a\x00b"}, None, "", env=env)[0] is None
    assert resolve_annotator({"Remote-User": "x" * 201}, None, "", env=env)[0] is None


@pytest.mark.parametrize("value", ["X-A, X-B", "X A", "X-A;"])
def test_malformed_header_setting_accepts_nobody(value):
    env = {TRUSTED_HEADER_ENV: value}
    assert identity_mode(False, env) == "config"
    name, source, msg = resolve_annotator({"X-A": "bob"}, None, "bob", env=env)
    assert name is None and source == "config" and TRUSTED_HEADER_ENV in msg


def test_login_never_falls_through():
    env = {TRUSTED_HEADER_ENV: "Remote-User"}
    assert resolve_annotator({"Remote-User": "bob"}, "carol", "dave", env=env) == \
        ("carol", "login", "")
    name, source, msg = resolve_annotator({"Remote-User": "bob"}, None, "dave", env=env,
                                          login_configured=True)
    assert name is None and source == "login" and "Log in" in msg


def test_login_names_a_person_by_verified_email_else_sub_never_display_name():
    mallory = {"is_logged_in": True, "name": "Alice Martin", "email": "mallory@example.com",
               "sub": "google-oauth2|999"}
    assert login_identity(mallory) == "google-oauth2|999"  # unverified email: the subject
    assert login_identity({**mallory, "email_verified": True}) == "mallory@example.com"
    assert login_identity({**mallory, "email_verified": "true"}) == "mallory@example.com"
    assert login_identity({**mallory, "email_verified": False}) == "google-oauth2|999"
    assert login_identity({**mallory, "email_verified": "false"}) == "google-oauth2|999"
    # a display name alone names nobody
    assert login_identity({"is_logged_in": True, "name": "Alice Martin"}) is None
    assert login_identity({"email": "a@example.com", "email_verified": True, "sub": ""}) == \
        "a@example.com"
    assert login_identity({"sub": "x\ny"}) is None  # control characters: no name


def test_a_display_name_set_to_an_admins_name_gets_nothing(db, monkeypatch, tmp_path):
    """Audit D1: an outsider whose profile is called "Alice Martin" is not that admin."""
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)
    monkeypatch.setenv(ADMINS_ENV, "Alice Martin")
    monkeypatch.setenv(SECRETS_ENV, str(tmp_path / "none.toml"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.user = {"is_logged_in": True, "name": "Alice Martin", "email": "mallory@example.com",
               "email_verified": True, "sub": "google-oauth2|999"}
    at.run()
    assert not at.exception
    actor, role = at.session_state["_team_actor"]
    assert actor.name == "mallory@example.com" and role is None
    assert at.session_state["_allowed_pages"] == {""}  # Home only
    assert role_of(db, "mallory@example.com") is None


def _job(db, tmp_path, annotators=("alice", "bob")):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "context": "Hi?", "output": f"Fine {i}.",
                                     "scores": {"quality": i % 3 + 1}}) + "\n"
                         for i in range(2)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "Basics": {"seed": ["Is it polite?", "Is it relevant?", "Is it short?"]}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    return J.create_job(db, "chat", list(annotators), len(annotators), n_items=2)


def test_annotate_page_uses_login_not_typed_name(db, tmp_path, monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)
    carol = "carol@example.org"  # the verified email names her, not her display name
    jid = _job(db, tmp_path, (carol,))
    grant(db, carol, "annotator")  # behind a login a person needs a role
    at = AppTest.from_file(APP, default_timeout=120)
    at.user = {"is_logged_in": True, "name": "Carol", "email": carol, "email_verified": True,
               "sub": "oidc|c1"}
    at.run()
    at.switch_page("app_pages/annotate.py").run()
    assert not at.exception
    assert not [t for t in at.text_input if t.key == "ann_name"]  # no name field to type
    assert any("Signed in as" in c.value and "carol@\u2060example" in c.value
               for c in at.caption)  # an e-mail shown as text, not a mailto: link
    at.radio[0].set_value("no").run()
    item = J.queue(db, jid, carol)[0]["item_pk"]
    assert list(J.answers_of(db, jid, carol, item).values()) == ["no"]


def test_annotate_page_login_configured_but_logged_out(db, tmp_path, monkeypatch):
    monkeypatch.setenv(TRUSTED_HEADER_ENV, "Remote-User")
    _job(db, tmp_path, ("carol",))
    at = AppTest.from_file(APP, default_timeout=120)
    at.user = {"is_logged_in": False}  # Streamlit's OIDC login state, mocked
    at.run()
    assert not at.exception
    # nobody logged in gets nothing but Home, which offers the login
    assert at.session_state["_allowed_pages"] == {""}
    assert any(b.label == "Log in" for b in at.button)
    assert not at.radio and not [t for t in at.text_input if t.key == "ann_name"]


def test_coordinator_name_follows_login(db, tmp_path, monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)
    jid = _job(db, tmp_path, ("a", "b"))
    item = J.queue(db, jid, "a")[0]["item_pk"]
    qid = J.job_questions(db, jid, item)[0]["id"]
    J.save_answer(db, jid, "a", item, qid, "yes")
    J.save_answer(db, jid, "b", item, qid, "no")
    submit_answered(db, jid)
    grant(db, "boss", "coordinator")
    at = AppTest.from_file(APP, default_timeout=120)
    at.user = {"is_logged_in": True, "sub": "boss", "name": "Someone Else"}  # sub names
    at.run()
    at.switch_page("app_pages/annotation_jobs.py").run()
    at.selectbox(key="aj_task").select("chat").run()
    assert not [t for t in at.text_input if t.key == "aj_coord"]
    at.radio(key="aj_value").set_value("yes").run()  # nothing is preselected
    at.button(key="aj_settle").click().run()
    assert not at.exception
    row = db.execute("SELECT coordinator FROM adjudication").fetchall()
    assert row == [("boss",)]


def test_a_login_state_that_cannot_be_read_is_nobody(monkeypatch, tmp_path):
    """Any error reading ``st.user`` made the app the single-user tool (every role check
    off) even with a login configured: it now fails closed, logged out."""
    import streamlit as st

    from checkeval_core import team
    from studio_ui.widgets import login_state

    class Broken:
        def to_dict(self):
            raise RuntimeError("no auth support")

    monkeypatch.setattr(st, "user", Broken())
    secrets = tmp_path / "secrets.toml"
    monkeypatch.setenv(team.SECRETS_ENV, str(secrets))
    assert login_state() == (False, None)  # no secrets file: no login configured
    secrets.write_text('[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\n')
    assert login_state() == (True, None)
    secrets.write_text('checkeval_admins = ["ada"]\n')  # secrets, but no [auth] section
    assert login_state() == (False, None)
