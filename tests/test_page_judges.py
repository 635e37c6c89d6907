"""AppTest of the Judges page: default judge listed, add a judge, one-question test (fake)."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from checkeval_core.textsafe import md_escape

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
    assert any(md_escape("openai-compat:<base_url>#<model>") in e.value  # shown as text
               for e in at.error)
    at.text_input(key="add_model").input("my-model").run()
    # nothing can be typed as a key source: only the approved variables are offered (none
    # for localhost:8000 here), so a pasted key never reaches the form's value
    options = at.selectbox(key="add_key_env").options
    assert len(options) == 1 and options[0].startswith("default:")
    at.button(key="add_save").click().run()
    assert db.execute("SELECT COUNT(*) FROM judge WHERE key_env != ''").fetchone()[0] == 0


def test_save_judge_confirms_and_spec_column_fits(db):
    long_spec = "openai-compat:http://gpu-box.internal.example:8000/v1#Qwen/Qwen2.5-72B-Instruct"
    at = open_judges()
    at.selectbox(key="add_backend").select("openai-compat").run()
    at.text_input(key="add_base_url").input("http://gpu-box.internal.example:8000/v1").run()
    at.text_input(key="add_model").input("Qwen/Qwen2.5-72B-Instruct").run()
    at.button(key="add_save").click().run()
    assert not at.exception
    # the confirmation survives the rerun that lists the new judge (old code: none)
    assert any(f"Saved judge 2: {long_spec}" in s.value for s in at.success)
    assert long_spec in list(at.dataframe[0].value["spec"])
    cols = json.loads(at.dataframe[0].proto.columns)
    assert cols["spec"]["width"] >= 8 * len(long_spec)  # not cut (old: auto width)
    at.run()  # the next interaction: the confirmation has been shown once
    assert not at.success


def test_dead_url_shows_the_error_and_no_result_tiles(db):
    from checkeval_core.judges.saved import add_judge
    from tests.conftest import free_port

    dead = f"openai-compat:http://127.0.0.1:{free_port()}/v1#m"  # nothing listens there
    add_judge(db, "fake")
    add_judge(db, dead)
    at = open_judges()
    at.selectbox(key="test_spec").select("fake").run()
    at.button(key="test_run").click().run()
    assert {m.label for m in at.metric} >= {"Verdict", "Latency"}  # a working judge
    at.selectbox(key="test_spec").select(dead).run()
    assert not at.metric  # the fake judge's answer is not shown for this judge
    at.button(key="test_run").click().run()
    assert not at.exception
    assert any("The judge failed: cannot connect to http://127.0.0.1"  # shown escaped, as text
               in e.value.replace("\\", "").replace("\u2060", "") for e in at.error)
    # old code: Verdict "invalid", a latency and the declared capabilities (logprobs: true)
    assert not at.metric and not at.json
    assert all("logprobs" not in str(m.value) for m in [*at.markdown, *at.caption])


def test_every_declared_backend_has_its_form(db):
    """The form is built from the declarations: each field an input, the key source only for
    backends that declare key variables."""
    from checkeval_core.judges.spec import BACKENDS

    at = open_judges()
    for name, backend in BACKENDS.items():
        at.selectbox(key="add_backend").select(name).run()
        assert not at.exception
        keys = {w.key for w in at.text_input} | {w.key for w in at.selectbox}
        for f in backend.fields:
            assert (f"add_{name}_{f.name}" if f.choices else f"add_{f.name}") in keys
        assert ("add_key_env" in keys) == bool(backend.key_envs)
        assert at.code[0].value == backend.spec({f.name: f.default for f in backend.fields})


def test_remove_asks_first(db):
    from checkeval_core.judges.saved import add_judge

    jid = add_judge(db, "fake")
    at = open_judges()
    assert at.button(key="rm_btn").disabled  # nothing removed without the confirmation
    at.checkbox(key="rm_sure").check().run()
    at.button(key="rm_btn").click().run()
    assert not at.exception
    assert list(at.dataframe[0].value["spec"]) == ["embedded"]
    assert any(f"Removed judge {jid}: fake" in s.value for s in at.success)
