"""Start the app: ``python -m studio_ui.serve [streamlit options]`` (what scripts/demo.sh runs).

Same as ``streamlit run app.py``, except that Streamlit's legacy ``pages/``-folder mode is
switched off before the server starts. Streamlit decides that mode once per server from the
folder's existence and only leaves it when ``st.navigation`` runs, so with plain
``streamlit run`` a first visitor arriving on a deep link (``/traces``) would get that page
alone, with the legacy sidebar; with this launcher every URL goes through ``app.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv: list[str] | None = None) -> None:
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    PagesManager.uses_pages_directory = False
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
