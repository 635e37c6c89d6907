"""Start the app: ``python -m studio_ui.serve [streamlit options]`` (what scripts/demo.sh runs).

Same as ``streamlit run app.py`` (the pages live in ``app_pages/``, per Streamlit's
multipage guide, so no legacy ``pages/``-folder mode can start), except that

* it runs from the repository root, so Streamlit reads the shipped ``.streamlit/config.toml``
  (Streamlit looks for it in the current directory);
* the safety settings that must hold whatever config is found are passed as flags first
  (your own flags, given after them, still win): no built-in "Download as CSV" on tables
  (it exports formula cells unescaped; the pages have formula-safe downloads), XSRF
  protection on, no usage statistics sent, and no fast reruns: with
  ``runner.fastReruns`` (Streamlit's default) a click starts the next script run on a new
  thread while the interrupted one is still finishing, and when that one ends it resets the
  session's button triggers — the new run then sees its button unpressed (a click lost), and
  both runs write the same session state. Without it a click interrupts the running script
  at its next Streamlit call and the next run starts after it, in the same thread.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
SAFE_FLAGS = ["--client.disableDataExport", "true",
              "--server.enableXsrfProtection", "true",
              "--browser.gatherUsageStats", "false",
              "--runner.fastReruns", "false"]


def main(argv: list[str] | None = None) -> None:
    from streamlit import config
    from streamlit.web import cli

    if "client.disableDataExport" not in config._config_options_template:
        sys.exit("studio_ui.serve: this Streamlit has no client.disableDataExport option; "
                 "install the version in requirements.txt (`bash scripts/setup.sh`)")
    os.chdir(ROOT)
    sys.argv = ["streamlit", "run", str(APP), *SAFE_FLAGS,
                *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
