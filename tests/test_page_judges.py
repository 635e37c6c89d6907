"""AppTest of the Judges page: default judge listed, add a judge, one-question test (fake)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def open_judges():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("app_pages/judges.py").run()
    assert not at.exception
    return at


def test_default_embedded_listed_and_fake_test(db):
    at = open_judges()
    assert "embedded" in list(at.dataframe[0].value["spec"])
    at.selectbox(key="add_backend").select("fake").run()
    at.button(key="add_save").click().run()
    assert not at.exception
    assert list(at.dataframe[0].value["spec"]) == ["embedded", "fake"]
    at.selectbox(key="test_spec").select("fake").run()
    at.button(key="test_run").click().run()
    assert not at.exception
    labels = {m.label: m.value for m in at.metric}
    assert labels["Verdict"] in ("yes", "no")
    assert 0.0 <= float(labels["p(Yes)"]) <= 1.0


def test_bad_spec_shows_error_and_key_is_not_stored(db):
    at = open_judges()
    at.selectbox(key="add_backend").select("openai-compat").run()
    at.text_input(key="add_model").input("").run()
    at.button(key="add_save").click().run()
    assert any("openai-compat:<base_url>#<model>" in e.value for e in at.error)
    at.text_input(key="add_model").input("my-model").run()
    at.text_input(key="add_key_env").input("sk-live-123").run()
    at.button(key="add_save").click().run()
    assert any("NAME of an environment variable" in e.value for e in at.error)
    assert db.execute("SELECT COUNT(*) FROM judge WHERE key_env LIKE 'sk-%'").fetchone()[0] == 0
