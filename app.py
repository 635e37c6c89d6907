"""CheckEval Studio — the Streamlit frame: page navigation only.

Each page is a thin shell over ``checkeval_core``; run with ``streamlit run app.py``.
"""

from pathlib import Path

import streamlit as st

from checkeval_core import team
from studio_ui.access import navigation, request_actor
from studio_ui.frame import page_db

# A bundled favicon: a ":material/…:" page icon is fetched from fonts.gstatic.com.
st.set_page_config(page_title="CheckEval Studio",
                   page_icon=str(Path(__file__).parent / "studio_ui" / "icon.png"), layout="wide")

PAIRWISE = st.Page("app_pages/compare_answers.py", title="Pairwise votes",
                   icon=":material/compare:", url_path="pairwise_votes")


def _old_pairwise_address() -> None:
    """The Pairwise votes page's earlier address (``/compare_answers``): links and bookmarks
    made before it was renamed still open the page."""
    st.switch_page(PAIRWISE)


PAGES = {
    "Start": [
        st.Page("app_pages/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("app_pages/data.py", title="Data", icon=":material/table:"),
        st.Page("app_pages/judges.py", title="Judges", icon=":material/gavel:"),
    ],
    "Checklists": [
        st.Page("app_pages/dimensions.py", title="Dimensions", icon=":material/explore:"),
        st.Page("app_pages/checklist.py", title="Checklist review", icon=":material/checklist:"),
        st.Page("app_pages/improve.py", title="Improve checklist", icon=":material/auto_fix_high:"),
    ],
    "Evaluate": [
        st.Page("app_pages/run.py", title="Run", icon=":material/play_arrow:"),
        st.Page("app_pages/traces.py", title="Traces", icon=":material/search:"),
        st.Page("app_pages/analysis.py", title="Analysis", icon=":material/insights:"),
        st.Page("app_pages/rankings.py", title="Rankings", icon=":material/leaderboard:"),
        st.Page("app_pages/versions.py", title="Versions", icon=":material/history:"),
        st.Page("app_pages/align.py", title="Align", icon=":material/rule:"),
        st.Page("app_pages/compare.py", title="Compare runs", icon=":material/compare_arrows:"),
    ],
    "Annotate": [
        st.Page("app_pages/annotate.py", title="Annotate", icon=":material/edit_note:"),
        PAIRWISE,
        st.Page("app_pages/annotation_jobs.py", title="Annotation jobs", icon=":material/groups:"),
        st.Page(_old_pairwise_address, title="Pairwise votes (old address)",
                url_path="compare_answers", visibility="hidden"),
    ],
}

#: The address parameters each page reads (its deep links); every other page has none.
PAGE_PARAMS = {"compare": ("a", "b"), "traces": ("runs", "item", "dim"), "annotate": ("job",)}

TEAM = st.Page("app_pages/team.py", title="Team", icon=":material/badge:")

# With a login every write is checked against the person's role (checkeval_core.team): the
# core asks this frame who the request's person is. Without one, nothing changes.
team.set_resolver(request_actor)
shown, _, _ = navigation(page_db, PAGES, TEAM)
page = st.navigation(shown)
# A page's address carries only its own parameters: after a link to Traces and Back, the
# previous page's address must not keep Traces' ?runs=&item=&dim=. Only on arriving from
# another page of the session: the address a visitor opens first is theirs.
came_from = st.session_state.get("_page_seen")
st.session_state["_page_seen"] = page.url_path
if came_from is not None and came_from != page.url_path:
    for name in [k for k in st.query_params if k not in PAGE_PARAMS.get(page.url_path, ())
                 and k not in ("embed", "embed_options")]:
        del st.query_params[name]
try:
    page.run()
except team.Denied as e:  # a write the person's role may not make: refused, nothing written
    st.error(str(e))
