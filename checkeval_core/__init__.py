"""CheckEval Studio core: store, judges, checklist methods and analysis.

This package never imports Streamlit: the app's pages are thin shells over it, and the
``checkeval`` CLI drives the same functions headless.
"""

__version__ = "0.1.0"
