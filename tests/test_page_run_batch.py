"""The Run page's batch section: start runs as batch files (written, offered for download) or
through the provider's Batch API (a worker launched for them), refuse judges without one, and
the cost line with the online and the batch price side by side."""

import json

import pytest

from checkeval_core.runs import get_run, list_runs
from tests.conftest import run_page


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CHECKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CHECKEVAL_PRICES", raising=False)


def page(task, judge):
    at = run_page(task, judge, ["rocketeval"])
    at.number_input(key="run_limit").set_value(2).run()
    return at


def test_start_as_batch_files_writes_them_for_download(db, chat, launched):
    at = page(chat, "fake")
    at.button(key="batch_start_files").click().run()
    assert not at.exception and launched == []  # nothing asked, no worker
    [run] = list_runs(db, chat)
    rid = run["id"]
    assert get_run(db, rid)["batch"] == "files" and get_run(db, rid)["n_answers"] == 0
    assert at.selectbox(key="batch_run").value == rid
    downloads = at.get("download_button")
    assert len(downloads) == 1
    lines = db.execute("SELECT file_name, n_requests FROM run_batch WHERE run_id = ?",
                       [rid]).fetchall()
    body = open(lines[0][0], encoding="utf-8").read().splitlines()
    assert len(body) == lines[0][1] > 0
    assert json.loads(body[0])["url"] == "/v1/chat/completions"
    assert any("answers stored" in c.value for c in at.caption)
    at.button(key="batch_start_files").click().run()  # pressed again: said, nothing started
    assert [r["id"] for r in list_runs(db, chat)] == [rid]
    assert any(f"Run {rid} (fake / rocketeval) with the same settings is already pending"
               in i.value for i in at.info)


def test_start_with_the_batch_api_launches_its_worker(db, chat, launched):
    at = page(chat, "fake")
    at.button(key="batch_start_api").click().run()
    assert any("cannot be batched" in e.value for e in at.error)
    assert list_runs(db, chat) == [] and launched == []
    at.text_input(key="run_extra").input("openai-compat:http://127.0.0.1:9/v1#m").run()
    at.button(key="batch_start_api").click().run()
    assert not at.exception
    [run] = list_runs(db, chat)
    assert launched == [run["id"]] and get_run(db, run["id"])["batch"] == "api"


def test_the_cost_line_shows_the_batch_price(db, chat):
    at = page(chat, "openai:gpt-4o-mini")
    line = at.info[0].value
    assert "online ≈ $" in line and "with the Batch API ≈ $" in line
