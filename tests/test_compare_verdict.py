"""Compare runs shows the verdict the core computes, under its Δ headline and per dimension; the
Δ chip's arrow follows Δ's sign and no colour says "better" without a verdict saying so."""

from __future__ import annotations

import pytest

from checkeval_core.analysis.compare import compare_runs, delta_chip, delta_colour
from checkeval_core.store import open_db
from checkeval_core.textsafe import md_escape
from tests.conftest import open_app_page
from tests.helpers import fake_demo_runs

NAN = float("nan")


def test_colour_only_with_a_verdict_and_the_chip_starts_with_the_sign():
    assert delta_colour("better on held-out") == "normal"
    assert delta_colour("worse on all groups") == "normal"
    for v in ("no detectable change (could have detected ≥ 0.120)", "no change (Δ = 0 on "
              "every resample)", "too few groups (n = 2 < 6): no verdict", "no verdict: x", None):
        assert delta_colour(v) == "off"
    ag = {"delta": -0.0104, "ci": [-0.05, 0.03], "ci_reason": None}
    assert delta_chip(ag) == "-0.010 · 95% CI [-0.050, +0.030]"
    assert delta_chip({"delta": 0.02, "ci": [NAN, NAN], "ci_reason": "no interval: too few"}
                      ) == "+0.020 · no interval: too few"


def _page(db, a, b):
    at = open_app_page("app_pages/compare.py")
    at.query_params.update({"a": str(a), "b": str(b)})
    at.run()
    assert not at.exception, at.exception
    return at


def test_page_shows_the_verdict_and_a_grey_arrow_following_the_sign(db, db_path):
    a, b = fake_demo_runs(db, 192)  # 12 documents: enough groups for a verdict
    at = _page(db, a, b)
    split = next(r for r in at.radio if r.label == "Read on").value
    level, coef = at.selectbox(key="cmp_level").value, at.selectbox(key="cmp_coef").value
    ag = compare_runs(open_db(db_path), a, b, level=level, coef=coef, n_boot=500,
                      split=split)["agreement"]
    assert ag["verdict"].startswith(("no detectable change (could have detected ≥", "better",
                                     "worse"))
    assert f"**Verdict:** {md_escape(ag['verdict'])}" in [m.value for m in at.markdown]
    chip = next(m for m in at.metric if m.label == "Δ = B − A")
    assert chip.delta == delta_chip(ag) and chip.delta[0] == ("-" if ag["delta"] < 0 else "+")
    fields = chip.proto.DESCRIPTOR.fields_by_name
    colour = fields["color"].enum_type.values_by_number[chip.proto.color].name
    arrow = fields["direction"].enum_type.values_by_number[chip.proto.direction].name
    assert arrow == ("DOWN" if ag["delta"] < 0 else "UP")
    # green only beside "better", red only beside "worse", grey beside any other verdict
    assert colour == {"better": "GREEN", "worse": "RED"}.get(ag["verdict"].split()[0], "GRAY")
    # per dimension: each dimension's own verdict in the table
    dims = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert list(dims["verdict"]) == [v["verdict"] for v in ag["dimensions"].values()]


@pytest.mark.browser
def test_compare_verdict_in_a_browser_at_1440(app_server, screen):
    db = open_db(app_server.db_path)
    a, b = fake_demo_runs(db, 192)
    db.close()
    screen.goto(f"{app_server.url}/compare?a={a}&b={b}")
    screen.get_by_text("Verdict:").first.wait_for()
    delta = screen.locator('[data-testid="stMetricDelta"]').first
    delta.wait_for()
    screen.locator("[data-testid='stStatusWidget']").wait_for(state="hidden")
    screen.wait_for_timeout(2000)  # the grids draw on a canvas after they are attached
    screen.screenshot(path="/tmp/g-compare-verdict-1440.png")
    assert delta.inner_text().strip()[0] in "+-"  # the sign first: the arrow follows it
    text = screen.locator('[data-testid="stMarkdown"]', has_text="Verdict:").first.inner_text()
    assert text.startswith("Verdict: ") and ("no detectable change" in text
                                             or "better" in text or "worse" in text)
    box = screen.get_by_text("Verdict:").first.bounding_box()
    assert box["y"] < 900  # under the headline, in the first screen
