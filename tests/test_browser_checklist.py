"""Browser: edit a seed question, generate with the fake judge, reject one, freeze a version."""

import json
import subprocess
import sys

import pytest


def cli(db, *args):
    return subprocess.run([sys.executable, "-m", "checkeval_core", "--db", str(db), *args],
                          capture_output=True, text=True, check=True, timeout=120).stdout


def idle(page):
    """Wait until Streamlit has finished the current script run."""
    page.wait_for_load_state("networkidle")
    page.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")


@pytest.mark.browser
def test_checklist_flow_in_browser(app_server, page):
    cli(app_server.db_path, "demo")
    page.goto(app_server.url + "/dimensions")
    page.get_by_text("Sub-dimensions and seed questions").wait_for()
    seed = page.get_by_label("Seed #1", exact=True)
    seed.fill("Does the summary stick to the central topic?")
    seed.press("Enter")
    page.get_by_role("button", name="Save seed questions").first.click()
    page.get_by_text("Seed questions saved").wait_for()
    judge = page.get_by_role("textbox", name="Judge spec")
    judge.fill("fake")
    judge.press("Enter")
    page.get_by_role("button", name="Generate questions").click()
    page.get_by_text("questions proposed").wait_for()

    page.goto(app_server.url + "/checklist")
    name = page.get_by_label("Your name as reviewer")
    name.fill("alice")
    name.press("Enter")
    page.get_by_text("Questions to act on").wait_for()
    idle(page)
    # bulk action: select every shown (proposed) question, then reject them with a reason
    page.get_by_role("button", name="Select all shown").click()
    page.get_by_text("12 selected").wait_for()
    idle(page)
    reason = page.get_by_label("Reason (required to reject)")
    reason.fill("not about coherence")
    reason.press("Enter")
    idle(page)
    page.get_by_role("button", name="Reject selected").click()
    page.get_by_text("Rejected 12 question(s)").wait_for()
    page.get_by_role("button", name="Freeze kept questions").click()
    page.get_by_text("Version 2:").wait_for()
    versions = json.loads(cli(app_server.db_path, "checklist", "versions", "--task",
                              "summeval-demo", "--json"))
    assert [v["version"] for v in versions] == [1, 2]
    out = cli(app_server.db_path, "checklist", "diff", "--task", "summeval-demo", "1", "2")
    assert "stick to the central topic" in out
    rejected = cli(app_server.db_path, "checklist", "export", "--task", "summeval-demo", "--out",
                   str(app_server.db_path.parent / "ck.json"))
    assert "wrote" in rejected
    data = json.loads((app_server.db_path.parent / "ck.json").read_text())
    statuses = [q["status"] for d in data["dimensions"] for s in d["sub_dimensions"]
                for q in s["questions"] if q["origin"] == "diversification" and q["author"] == "llm"]
    assert statuses and set(statuses) == {"rejected"}
