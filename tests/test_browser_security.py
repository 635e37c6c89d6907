"""Browser tests of the shared-deployment defaults (issue 13 items 2, 5, 6), against the real
server started like ``python -m studio_ui.serve`` from the repository root (so the shipped
``.streamlit/config.toml`` applies):

* a client-sent ``X-Forwarded-User`` is ignored unless ``CHECKEVAL_TRUSTED_USER_HEADER``
  names that header — then it is the recorded name;
* tables have no built-in "Download as CSV" (it exports ``=cmd|…`` unescaped), no Deploy
  button is offered, and the app fetches nothing from hosts other than the server itself.
"""

import json
from urllib.parse import urlparse

import pytest

from checkeval_core.annotation.jobs import create_job
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from checkeval_core.store import open_db
from checkeval_core.team import grant
from tests.helpers import idle

pytestmark = pytest.mark.browser
QUESTIONS = ["Is the reply polite?", "Is the reply short?"]


def prepare(db_path, tmp_path, annotators=("mallory", "alice")):
    db = open_db(db_path)
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"r{i}", "context": "Hi?", "output": f"Fine {i}."})
                         + "\n" for i in range(2)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "Basics": {"seed": QUESTIONS}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    jid = create_job(db, "chat", list(annotators), len(annotators), n_items=2)
    return db, jid


def spoofing_page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000},
                              extra_http_headers={"X-Forwarded-User": "mallory",
                                                  "X-Auth-Request-User": "mallory",
                                                  "Remote-User": "mallory"})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    return pg


@pytest.fixture
def no_header_trust(monkeypatch):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)


@pytest.fixture
def trust_forwarded_user(monkeypatch):
    monkeypatch.setenv(TRUSTED_HEADER_ENV, "x-forwarded-user")  # any case


def test_spoofed_user_headers_are_ignored(no_header_trust, app_server, browser, tmp_path):
    db, jid = prepare(app_server.db_path, tmp_path)
    pg = spoofing_page(browser)
    try:
        pg.goto(app_server.url + "/annotate")
        box = pg.get_by_label("Your name")
        box.wait_for()  # asked to type a name: the headers were not taken as one
        idle(pg)
        assert "mallory" not in pg.locator("[data-testid='stMain']").inner_text()
        assert pg.get_by_role("radiogroup").count() == 0
        box.fill("alice")
        box.press("Enter")
        pg.get_by_role("radiogroup", name=QUESTIONS[0]).get_by_text("yes", exact=True).click()
        pg.get_by_text("1 of 2 answered").wait_for()
    finally:
        pg.context.close()
    who = {r[0] for r in db.execute("SELECT annotator FROM annotation")}
    assert who == {"alice"}


def test_configured_header_is_the_recorded_name(trust_forwarded_user, app_server, browser,
                                                tmp_path):
    db, jid = prepare(app_server.db_path, tmp_path)
    grant(db, "mallory", "annotator")  # behind a login a person needs a role
    pg = spoofing_page(browser)
    try:
        pg.goto(app_server.url + "/annotate")
        pg.get_by_text("Signed in as").wait_for()
        assert pg.get_by_label("Your name").count() == 0
        pg.get_by_role("radiogroup", name=QUESTIONS[0]).get_by_text("no", exact=True).click()
        pg.get_by_text("1 of 2 answered").wait_for()
    finally:
        pg.context.close()
    assert db.execute("SELECT annotator, value FROM annotation").fetchall() == [("mallory",
                                                                                 "no")]


def test_tables_have_no_builtin_export_and_nothing_leaves_the_server(no_header_trust,
                                                                     app_server, page,
                                                                     tmp_path):
    prepare(app_server.db_path, tmp_path)
    requested = []
    page.on("request", lambda r: requested.append(r.url))
    page.goto(app_server.url + "/annotation_jobs")
    page.get_by_text("Progress", exact=True).wait_for()
    idle(page)
    table = page.locator("[data-testid='stDataFrame']").first
    table.hover()
    toolbar = page.locator("[data-testid='stElementToolbar']").first
    toolbar.wait_for()
    buttons = [b.get_attribute("aria-label") or b.inner_text()
               for b in toolbar.locator("button").all()]
    assert buttons, "the table toolbar did not appear"  # hover worked: the check is real
    assert not [b for b in buttons if "download" in (b or "").lower()], buttons
    # the explicit, formula-safe downloads are there instead
    assert page.get_by_role("button", name="Progress (CSV)").count() == 1
    assert page.get_by_text("Deploy", exact=True).count() == 0
    for path in ("/", "/dimensions", "/analysis"):
        page.goto(app_server.url + path)
        idle(page)
    hosts = {urlparse(u).hostname for u in requested if u.startswith(("http", "ws"))}
    assert hosts == {"127.0.0.1"}, [u for u in requested if "127.0.0.1" not in u]
