"""The launcher's safety settings hold whatever config is found, before the user's flags."""

import sys
import tomllib

from studio_ui import serve


def test_launcher_turns_fast_reruns_off_before_the_users_flags(monkeypatch):
    seen = {}
    monkeypatch.setattr("streamlit.web.cli.main", lambda: seen.setdefault("argv", list(sys.argv)))
    monkeypatch.chdir("/")
    serve.main(["--server.port", "9999"])
    argv = seen["argv"]
    assert argv[:3] == ["streamlit", "run", str(serve.APP)]
    flags = dict(zip(argv[3::2], argv[4::2]))
    assert flags["--runner.fastReruns"] == "false"  # one script run per session at a time
    assert flags["--client.disableDataExport"] == "true"
    assert argv[-2:] == ["--server.port", "9999"]  # the user's flags come last and win
    shipped = tomllib.loads((serve.ROOT / ".streamlit" / "config.toml").read_text())
    assert shipped["runner"]["fastReruns"] is False


def test_the_server_watches_no_files():
    """With Streamlit's "auto" watcher the server watched the whole checkout for changes,
    .venv's 3,600 folders included; the shipped config turns the watcher off."""
    shipped = tomllib.loads((serve.ROOT / ".streamlit" / "config.toml").read_text())
    assert shipped["server"]["fileWatcherType"] == "none"
