"""Browser at 1440×900: a question people wrote (or a judge or a file did) is shown as text on
Annotate — an image in it is never loaded, a link in it is never a link, whatever Markdown it
holds (security rule: user text is rendered as text; the app loads nothing from other hosts)."""

from __future__ import annotations

import json

import pytest

from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.store import open_db

HOSTILE = ("Is it **kind**? ![x](https://evil.example/p.png) see https://evil.example/a, "
           "www.evil.example or [here](https://evil.example/b) <img src='https://evil.example/"
           "c.png'>")


@pytest.mark.browser
def test_a_question_with_markdown_links_and_images_is_shown_as_text(app_server, screen,
                                                                     tmp_path):
    from checkeval_core.annotation.jobs import create_job

    db = open_db(app_server.db_path)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "r0", "group_id": "g0", "context": "Hi?",
                                "output": "Fine."}) + "\n")
    import_file(db, data, "chat", kind="dialogue")
    ck = tmp_path / "c.json"
    ck.write_text(json.dumps({"quality": {"definition": "good", "sub_dimensions": {
        "B": {"seed": [HOSTILE]}}}}))
    import_checklist(db, "chat", ck)
    freeze(db, "chat")
    create_job(db, "chat", ["alice"], 1, n_items=1)
    db.close()
    asked: list[str] = []
    screen.on("request", lambda r: asked.append(r.url))
    screen.goto(app_server.url + "/annotate")
    box = screen.get_by_label("Your name")
    box.fill("alice")
    box.press("Enter")
    screen.get_by_text("Judges' answers are hidden").wait_for()
    main = screen.locator("[data-testid='stMain']")
    main.get_by_text("Is it **kind**? ![x](https:", exact=False).first.wait_for()
    screen.screenshot(path="/tmp/annotate-user-text-1440.png")
    assert main.locator("img[src*='evil']").count() == 0
    links = main.locator("a[href*='evil']")
    assert links.count() == 0
    # the question shown is the text as typed; the radio's accessible name is too
    assert main.locator("strong:visible", has_text="kind").count() == 0
    screen.get_by_role("radiogroup", name="Is it **kind**?", exact=False).wait_for()
    assert not [u for u in asked if "evil.example" in u]
