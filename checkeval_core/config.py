"""Where things live on disk: the database, the model cache.

Everything is overridable by environment variables so that tests, the CLI (``--db``) and
deployments can point the app elsewhere without code changes.
"""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "CHECKEVAL_DB"
CACHE_ENV = "CHECKEVAL_CACHE_DIR"


def default_db_path() -> Path:
    """The database path: ``$CHECKEVAL_DB`` if set, else ``~/.local/share/checkeval/checkeval.db``."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "checkeval" / "checkeval.db"


def cache_dir() -> Path:
    """Writable cache directory (assembled model files): ``$CHECKEVAL_CACHE_DIR`` or ``~/.cache/checkeval``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "checkeval"


def repo_root() -> Path:
    """The directory holding ``app.py`` and ``data/`` (the package's parent)."""
    return Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """Bundled demo data shipped with the repository."""
    return repo_root() / "data"
