"""AppTest of the Versions page: history chart, table with N and intervals, the diff of two
versions beside Δ agreement, the split control (set / clear only after a confirmation), and
the empty states."""

from __future__ import annotations

import pytest

from checkeval_core import task_split as S
from tests.conftest import open_app_page
from tests.helpers import build_versions_task as build


def _table(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


@pytest.mark.usefixtures("few_groups_allowed")
def test_versions_page_shows_history_table_and_diff(db):
    build(db)
    at = open_app_page("app_pages/versions.py")
    assert at.selectbox(key="vs_task").value == "vt"
    assert at.radio(key="vs_part").options == ["all groups"]  # no split yet
    assert len(at.get("plotly_chart")) == 1
    t = _table(at, "statistic")
    assert list(t["version"]) == [1, 2] and t["value"].tolist() == pytest.approx([-0.25, 1.0])
    assert list(t["items"]) == [12, 12] and list(t["groups"]) == [4, 4]
    assert t["95% CI"].str.startswith("[").all()
    assert any("v1 → v2:" in m.value and "1 question(s) added, 0 removed, 1 edited" in m.value
               for m in at.markdown)
    q = _table(at, "change")
    assert sorted(q["change"]) == ["added", "edited"]
    assert any("→ Does every sentence follow" in x for x in q["question"])
    delta = _table(at, "Δ")
    assert delta["Δ"].tolist() == pytest.approx([1.25])
    assert "on 12 shared items, 95% CI" in delta["Δ on shared items (paired)"].iloc[0]


def test_split_is_set_and_cleared_only_after_confirm(db):
    build(db)
    at = open_app_page("app_pages/versions.py")
    at.button(key="vs_set").click().run()
    assert S.get_split(db, "vt")["defined"] is False  # nothing happens before Confirm
    at.button(key="vs_confirm_yes").click().run()
    assert not at.exception, at.exception
    s = S.get_split(db, "vt")
    assert s["defined"] and len(s["dev"]) == 2 and len(s["heldout"]) == 2
    assert at.radio(key="vs_part").options == ["dev", "held-out", "all groups"]
    at.radio(key="vs_part").set_value("heldout").run()
    t = _table(at, "statistic")
    assert list(t["groups"]) == [2, 2] and list(t["items"]) == [6, 6]
    # Clear: Cancel keeps it, Confirm removes it
    at.button(key="vs_clear").click().run()
    at.button(key="vs_confirm_no").click().run()
    assert S.get_split(db, "vt")["defined"]
    at.button(key="vs_clear").click().run()
    at.button(key="vs_confirm_yes").click().run()
    assert not at.exception and S.get_split(db, "vt")["defined"] is False


def test_a_split_named_group_by_group_shows_as_such(db):
    """A benchmark's fixed halves (``bench heldout``) are stored without a seed: the page
    says so and its seed and share controls still open."""
    build(db)
    groups = sorted(S.get_split(db, "vt")["unassigned"])
    S.set_explicit_split(db, "vt", groups[:1])
    at = open_app_page("app_pages/versions.py")
    assert not at.exception, at.exception
    assert any("3 dev and 1 held-out groups (named one by one, held-out share 0.25)" in m.value
               for m in at.markdown)
    assert at.number_input(key="vs_seed").value == 0
    assert at.slider(key="vs_share").value == pytest.approx(0.25)


def test_empty_states_say_why(db):
    from checkeval_core.datasets import import_file

    import_file(db, None, "bare", filename="i.jsonl",
                data=b'{"id": "a", "output": "x", "group_id": "g", "human_coherence": 3}')
    at = open_app_page("app_pages/versions.py")
    assert any("no completed run of a frozen checklist version" in i.value for i in at.info)


@pytest.mark.usefixtures("few_groups_allowed")
def test_versions_opens_on_heldout_with_the_verdict_beside_delta(db):
    """Choose on dev, report on held-out: with a split the page opens on held-out groups, and
    the Δ table's verdict comes right after Δ (at 1440 px the last columns are off-screen)."""
    build(db)
    S.set_split(db, "vt", 0.5, seed=0)
    at = open_app_page("app_pages/versions.py")
    assert not at.exception, at.exception
    assert at.radio(key="vs_part").value == "heldout"
    delta = _table(at, "Δ")
    cols = list(delta.columns)
    assert cols.index("verdict") == cols.index("Δ") + 1, cols
