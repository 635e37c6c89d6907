"""Roles in a real browser at 1440×900, through the trusted-header login (issue 35 §2): the
app is configured to trust ``X-Auth-Request-User`` and each browser context sends one person's
name in it, as the authenticating proxy would. For each role: what the navigation shows, a
deep link to a page the role may not use (refused, nothing of the page drawn), and an
annotator who tries Traces and Run; the annotator's answers are recorded under their name."""

import json

import pytest

from checkeval_core import team
from checkeval_core.annotation.jobs import create_job
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.identity import TRUSTED_HEADER_ENV
from checkeval_core.runs.jobs import create_run, execute_run
from checkeval_core.store import db_path, open_db
from tests.helpers import idle

pytestmark = pytest.mark.browser
HEADER = "X-Auth-Request-User"
QUESTIONS = ["Is the reply polite?", "Is the reply short?"]
NAV = ["Home", "Data", "Judges", "Dimensions", "Checklist review", "Improve checklist", "Run",
       "Traces", "Analysis", "Rankings", "Versions", "Align", "Compare runs", "Annotate",
       "Pairwise votes", "Annotation jobs", "Team"]
# role → the pages its navigation shows
SHOWN = {
    "admin": set(NAV),
    "researcher": set(NAV) - {"Annotate", "Pairwise votes", "Annotation jobs", "Team"},
    "reviewer": {"Home", "Data", "Checklist review", "Traces", "Analysis", "Rankings",
                 "Versions", "Align", "Compare runs"},
    "coordinator": {"Home", "Data", "Traces", "Analysis", "Rankings", "Versions", "Align",
                    "Compare runs", "Annotation jobs"},
    "annotator": {"Home", "Annotate", "Pairwise votes"},
    "viewer": {"Home", "Data", "Traces", "Analysis", "Rankings", "Versions", "Align",
               "Compare runs"},
    None: {"Home"},
}
PERSON = {"admin": "ada", "researcher": "rita", "reviewer": "rev", "coordinator": "cora",
          "annotator": "ann", "viewer": "vic", None: "zed"}
REFUSED_LINK = {"researcher": "annotation_jobs", "reviewer": "run", "coordinator": "run",
                "annotator": "traces", "viewer": "dimensions", None: "data"}


@pytest.fixture
def team_login(monkeypatch):
    monkeypatch.setenv(TRUSTED_HEADER_ENV, HEADER)
    monkeypatch.setenv(team.ADMINS_ENV, "ada")


def prepare(path, tmp_path):
    db = open_db(path)
    p = tmp_path / "d.jsonl"
    # a long conversation: the response to judge must still be on screen with the questions
    talk = "".join(f"A: Line {n} of a long conversation about the weather.\n" for n in range(80))
    p.write_text("".join(json.dumps({"id": f"r{i}", "context": talk, "output": f"Fine {i}."})
                         + "\n" for i in range(2)))
    import_file(db, p, "chat", kind="dialogue")
    c = tmp_path / "c.json"
    c.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "Basics": {"seed": QUESTIONS}}}}))
    import_checklist(db, "chat", c)
    freeze(db, "chat")
    rid = create_run(db, "chat", "fake", "rocketeval")
    execute_run(db_path(db), rid)
    create_job(db, "chat", ["ann"], 1, n_items=2, coordinator="cora")
    for role, person in PERSON.items():
        if role not in (None, "admin"):
            team.grant(db, person, role)
    return db, rid


def as_person(browser, name):
    ctx = browser.new_context(viewport={"width": 1440, "height": 900},
                              extra_http_headers={HEADER: name})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    return pg


def nav_titles(pg) -> set[str]:
    nav = pg.get_by_test_id("stSidebarNav")
    if nav.count() == 0:  # one page only: Streamlit draws no navigation
        return {"Home"}
    # each link's text is its icon's name, then its title
    return {t.strip().split("\n")[-1] for t in nav.get_by_role("link").all_inner_texts()} - {""}


def test_each_role_sees_its_pages_and_is_refused_the_others(team_login, app_server, browser,
                                                            tmp_path):
    db, rid = prepare(app_server.db_path, tmp_path)
    for role, person in PERSON.items():
        pg = as_person(browser, person)
        try:
            pg.goto(app_server.url + "/")
            idle(pg)
            assert nav_titles(pg) == SHOWN[role], role
            main = pg.get_by_test_id("stMain").inner_text()
            assert f"Signed in as {person}" in main, main
            if role is None:
                assert "has no role yet" in main
            if role in REFUSED_LINK:
                pg.goto(f"{app_server.url}/{REFUSED_LINK[role]}")
                pg.get_by_text("Refused:").first.wait_for()
                idle(pg)
                text = pg.get_by_test_id("stMain").inner_text()
                assert (f"Refused: {person} is {role}" if role else
                        f"Refused: {person} has no role") in text, text
        finally:
            pg.context.close()


def test_an_annotator_cannot_open_traces_or_run_and_answers_under_their_name(
        team_login, app_server, browser, tmp_path):
    db, rid = prepare(app_server.db_path, tmp_path)
    pg = as_person(browser, "ann")
    try:
        for address, title in ((f"/traces?runs={rid}", "Traces"), ("/run", "Run")):
            pg.goto(app_server.url + address)
            pg.get_by_text("Refused:").first.wait_for()
            idle(pg)
            text = pg.get_by_test_id("stMain").inner_text()
            assert f"Refused: ann is annotator; the page {title} is for" in text
            # nothing of the page: no judge's verdict, no run, no item text
            assert "Fine 0." not in text and "rocketeval" not in text
        pg.screenshot(path=str(tmp_path / "annotator-refused.png"))
        pg.goto(app_server.url + "/annotate")
        pg.get_by_text("Signed in as").wait_for()
        idle(pg)
        # the response to judge is on screen with the first question, labelled as they name it
        out = pg.get_by_text("The response to judge")
        assert out.bounding_box()["y"] < 900
        first = pg.get_by_role("radiogroup", name=QUESTIONS[0])
        assert first.bounding_box()["y"] < 900
        pg.screenshot(path=str(tmp_path / "annotate.png"))
        first.get_by_text("yes", exact=True).click()
        pg.get_by_text("1 of 2 answered").wait_for()
        assert "Judges' answers are hidden" in pg.get_by_test_id("stMain").inner_text()
    finally:
        pg.context.close()
    assert db.execute("SELECT annotator, value FROM annotation").fetchall() == [("ann", "yes")]
    assert [a["action"] for a in team.activity(db, "ann")] == ["save_answer"]
