"""CheckEval Studio — the Streamlit frame: page navigation only.

Each page is a thin shell over ``checkeval_core``; run with ``streamlit run app.py``.
"""

import streamlit as st

st.set_page_config(page_title="CheckEval Studio", page_icon="✅", layout="wide")

PAGES = {
    "Start": [
        st.Page("pages/home.py", title="Home", icon="🏠", default=True),
        st.Page("pages/data.py", title="Data", icon="🗂️"),
        st.Page("pages/judges.py", title="Judges", icon="⚖️"),
    ],
    "Checklists": [
        st.Page("pages/dimensions.py", title="Dimensions", icon="🧭"),
        st.Page("pages/checklist.py", title="Checklist review", icon="☑️"),
    ],
    "Evaluate": [
        st.Page("pages/run.py", title="Run", icon="▶️"),
        st.Page("pages/traces.py", title="Traces", icon="🔎"),
    ],
}

st.navigation(PAGES).run()
