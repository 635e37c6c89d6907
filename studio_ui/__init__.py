"""Streamlit-side helpers shared by the pages (widgets only; the logic lives in checkeval_core)."""
