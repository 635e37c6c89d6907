"""The Team page and the navigation by role, through Streamlit's OIDC login — the login state
is mocked at ``st.user`` (AppTest's ``user``): no OpenID provider runs here. The trusted-header
path is tested in a real browser (tests/test_browser_team.py)."""

import pytest
from streamlit.testing.v1 import AppTest

from checkeval_core import team
from checkeval_core.identity import TRUSTED_HEADER_ENV
from tests.conftest import APP


@pytest.fixture(autouse=True)
def _admins(monkeypatch, tmp_path):
    monkeypatch.delenv(TRUSTED_HEADER_ENV, raising=False)
    monkeypatch.setenv(team.ADMINS_ENV, "ada")
    monkeypatch.setenv(team.SECRETS_ENV, str(tmp_path / "none.toml"))


def logged_in(name: str | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    # the provider's subject names the person (docs/security.md); the display name does not
    at.user = ({"is_logged_in": True, "sub": name, "name": f"Display {name}"} if name
               else {"is_logged_in": False})
    return at.run()


def test_an_admin_grants_a_role_and_sees_what_people_did(db):
    at = logged_in("ada")
    assert not at.exception
    assert at.session_state["_allowed_pages"] >= {"team", "run", "annotate", "traces"}
    at.switch_page("app_pages/team.py").run()
    at.text_input(key="team_name").input("ann")  # a form: sent with its button
    at.selectbox(key="team_role").select("annotator")
    at.button[0].click().run()  # the form's "Give role"
    assert not at.exception
    assert team.role_of(db, "ann") == "annotator"
    assert team.history(db, "ann")[0]["granted_by"] == "ada"
    assert [a["action"] for a in team.activity(db, "ada")] == ["grant"]
    at.selectbox(key="team_activity").select("ada").run()
    assert "grant" in at.dataframe[1].value["action"].tolist()


def test_an_annotator_gets_only_their_pages(db):
    team.grant(db, "ann", "annotator")
    at = logged_in("ann")
    assert not at.exception
    assert at.session_state["_allowed_pages"] == {"", "annotate", "pairwise_votes",
                                                  "compare_answers"}
    assert any(c.value.startswith("Signed in as ann (annotator") for c in at.caption)
    # Home offers no way to load data or open the pages the role may not use
    assert not [b for b in at.button if b.key == "load_demo"]
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("app_pages/traces.py")  # registered only as its refusal


def test_home_shows_the_tasks_only_to_people_with_a_role(db):
    """Audit D6: a person without a role, or a visitor not logged in, sees no task names."""
    from tests.helpers import load_demo_copy

    load_demo_copy(db)
    for name in ("zed", None):  # a stranger, then a visitor who is not logged in
        at = logged_in(name)
        assert not at.exception
        assert not at.dataframe and not at.success  # no Tasks table, no demo status
        assert not [h for h in at.subheader if h.value in ("Tasks", "Demo")]
        assert not [m for m in at.markdown if "summeval-demo" in m.value]
    team.grant(db, "vic", "viewer")
    at = logged_in("vic")
    assert "summeval-demo" in at.dataframe[0].value["name"].tolist()
    assert any("demo tasks are loaded" in s.value for s in at.success)


def test_a_stranger_gets_nothing_and_without_login_everything(db):
    at = logged_in("zed")
    assert at.session_state["_allowed_pages"] == {""}
    assert any("zed, who has no role yet" in c.value for c in at.caption)
    at = AppTest.from_file(APP, default_timeout=120).run()  # no [auth], no header: one user
    assert at.session_state["_allowed_pages"] is None
    assert any(c.value.startswith("Single-user mode") for c in at.caption)
    at.switch_page("app_pages/team.py").run()
    assert not at.exception and any("single-user tool" in i.value for i in at.info)


def test_a_write_the_role_may_not_make_is_refused_on_the_page(db, tmp_path):
    from tests.helpers import make_runs_task, run

    task = make_runs_task(db, tmp_path)
    run(db, task, "rocketeval")
    team.grant(db, "vic", "viewer")
    at = AppTest.from_file(APP, default_timeout=180)
    at.user = {"is_logged_in": True, "sub": "vic"}
    at.session_state["task_name"] = task
    at.run()
    assert not [b for b in at.button if b.key == "load_demo"]  # Home: no import offered
    at.switch_page("app_pages/align.py").run()  # read-only analysis: the viewer's page
    at.text_input(key="al_annotators").input("ann, bob")  # the form's fields, sent together
    next(b for b in at.button if b.label.startswith("Draw the sample")).click().run()
    shown = [e.value.replace("\\", "") for e in at.error]  # escaped: the message is text
    assert any("Refused: vic is viewer" in e and "Nothing was written" in e for e in shown), shown
    assert db.execute("SELECT COUNT(*) FROM annotation_job").fetchone()[0] == 0
