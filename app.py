"""CheckEval Studio — the Streamlit frame: page navigation only.

Each page is a thin shell over ``checkeval_core``; run with ``streamlit run app.py``.
"""

from pathlib import Path

import streamlit as st

# A bundled favicon: a ":material/…:" page icon is fetched from fonts.gstatic.com.
st.set_page_config(page_title="CheckEval Studio",
                   page_icon=str(Path(__file__).parent / "studio_ui" / "icon.png"), layout="wide")

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
        st.Page("app_pages/compare_answers.py", title="Pairwise votes", icon=":material/compare:"),
        st.Page("app_pages/annotation_jobs.py", title="Annotation jobs", icon=":material/groups:"),
    ],
}

st.navigation(PAGES).run()
