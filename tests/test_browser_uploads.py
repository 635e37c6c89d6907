"""In a real browser, against the app as served (``.streamlit/config.toml`` applied): a file
with a lone surrogate on the Data and Dimensions pages gets a clean message naming the file,
line and field — no traceback, no server path — and the Data page asks where a file goes."""

from __future__ import annotations

import pytest

from checkeval_core.datasets import import_file
from checkeval_core.store import open_db
from tests.conftest import REPO


def _no_server_detail(pg) -> None:
    text = pg.get_by_test_id("stMain").inner_text()
    assert "Traceback" not in text and str(REPO) not in text and ".py" not in text, text


@pytest.mark.browser
def test_surrogate_uploads_show_a_clean_message(app_server, screen, tmp_path):
    db = open_db(app_server.db_path)
    src = tmp_path / "d.csv"
    src.write_text("id,output\n1,x\n", encoding="utf-8")
    import_file(db, src, "t")
    db.close()
    bad = tmp_path / "x.jsonl"
    bad.write_bytes(b'{"id": "1", "output": "ok"}\n{"id": "2", "output": "a\\ud800"}\n')
    screen.goto(app_server.url + "/data")
    screen.get_by_role("tab", name="Import a file").click()
    screen.get_by_text("Import into").first.wait_for()
    screen.locator("input[type=file]").first.set_input_files(str(bad))
    screen.get_by_text("x.jsonl, line 2, field 'output'").first.wait_for()
    screen.screenshot(path="/tmp/b-data-surrogate-1440.png")
    _no_server_detail(screen)

    yaml = tmp_path / "c_seed.yaml"
    yaml.write_bytes(b'sub_aspect:\n  s: "Is it \\ud800?"\n')
    screen.goto(app_server.url + "/dimensions")
    screen.get_by_text("Presets and import / export").first.click()
    screen.locator("input[type=file]").first.set_input_files(str(yaml))
    screen.get_by_role("button", name="Import checklist").click()
    screen.get_by_text("c_seed.yaml, line 2, field 'sub_aspect.s'").first.wait_for()
    _no_server_detail(screen)
