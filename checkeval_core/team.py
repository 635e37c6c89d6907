"""Who may do what when people log in: roles, the one capability map, and the guard every
write goes through.

Without a login the app and the CLI are the single-user tool they always were: nobody is
"acting" (:func:`current_actor` is ``None``, the local operator) and nothing is checked. With
a login (Streamlit's OIDC ``[auth]`` or the one trusted proxy header, see
:mod:`checkeval_core.identity`) the frame registers a resolver that names the person of the
running request; every guarded write then

1. finds the person's role — the first admins from configuration (``CHECKEVAL_ADMINS``,
   comma-separated, or ``checkeval_admins`` in the secrets file), everyone else from the
   ``team`` table (latest grant wins, history kept); a person without a role gets nothing;
2. refuses with :class:`Denied` (a ``PermissionError`` whose message says who, which role,
   what was refused and which roles may) *before anything is written*, when the role lacks
   the capability or when the write would record another person's name as its author;
3. after the write succeeds, appends (person, role, action, target, time) to ``audit_log``.

Every write function carries one line at its top, :func:`guarded` (a decorator), so the rule
lives here and nowhere else. Nested guarded calls are checked once, at the outermost call.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from checkeval_core.store import now_iso, rows

ADMINS_ENV = "CHECKEVAL_ADMINS"
SECRETS_ENV = "CHECKEVAL_SECRETS"
SECRETS_KEY = "checkeval_admins"

ROLES = ("admin", "researcher", "reviewer", "coordinator", "annotator", "viewer")
ROLE_TEXT = {
    "admin": "everything, and who has which role",
    "researcher": "tasks, checklists, runs, judges, analysis",
    "reviewer": "Checklist review, read-only analysis",
    "coordinator": "annotation jobs, settling disagreements, read-only analysis",
    "annotator": "Annotate and Pairwise votes for the jobs they are in, their own progress",
    "viewer": "read-only analysis",
}

#: The one capability map: capability → (what it allows, the roles that have it).
CAPABILITIES: dict[str, tuple[str, frozenset[str]]] = {
    "team.manage": ("manage who has which role", frozenset({"admin"})),
    "data.import": ("import data", frozenset({"admin", "researcher"})),
    "checklist.edit": ("edit checklists", frozenset({"admin", "researcher"})),
    "checklist.review": ("review checklist questions",
                         frozenset({"admin", "researcher", "reviewer"})),
    "run.start": ("start or stop judge runs", frozenset({"admin", "researcher"})),
    "judge.save": ("save or delete judges", frozenset({"admin", "researcher"})),
    "job.manage": ("create annotation jobs, hand items on and settle disagreements",
                   frozenset({"admin", "coordinator"})),
    "answers.export": ("export people's answers",
                       frozenset({"admin", "researcher", "coordinator"})),
    "annotate": ("answer annotation jobs and give pairwise votes",
                 frozenset({"admin", "annotator"})),
    "analysis.read": ("read runs, traces and analysis (judges' answers, experts' scores)",
                      frozenset({"admin", "researcher", "reviewer", "coordinator", "viewer"})),
}

#: Each page's address → the capability needed to open it (``None``: anyone with a role).
PAGES: dict[str, str | None] = {
    "": None, "home": None,
    "data": "analysis.read", "judges": "judge.save",
    "dimensions": "checklist.edit", "checklist": "checklist.review",
    "improve": "checklist.edit", "run": "run.start",
    "traces": "analysis.read", "analysis": "analysis.read", "rankings": "analysis.read",
    "versions": "analysis.read", "align": "analysis.read", "compare": "analysis.read",
    "annotate": "annotate", "pairwise_votes": "annotate", "compare_answers": "annotate",
    "annotation_jobs": "job.manage", "team": "team.manage",
}


class Denied(PermissionError):
    """A write refused for the acting person's role; nothing was written."""


@dataclass(frozen=True)
class Actor:
    """The person of a logged-in request; ``name`` is ``None`` when the login did not name
    anyone (``reason`` says why: not logged in, no proxy header…)."""

    name: str | None
    source: str = "login"
    reason: str = ""


_UNSET: Any = object()
_ACTOR: contextvars.ContextVar[Any] = contextvars.ContextVar("checkeval_actor", default=_UNSET)
_DEPTH: contextvars.ContextVar[int] = contextvars.ContextVar("checkeval_guard_depth",
                                                              default=0)
_RESOLVER: list[Callable[[], Actor | None]] = []


def set_resolver(resolver: Callable[[], Actor | None] | None) -> None:
    """The app's frame names the person of the running request through ``resolver`` (it
    returns ``None`` when no login is configured: the single-user tool)."""
    _RESOLVER.clear()
    if resolver is not None:
        _RESOLVER.append(resolver)


def current_actor() -> Actor | None:
    """Who acts now: the actor set by :func:`acting_as`, else the frame's resolver, else
    ``None`` — the local operator (no login: nothing is checked)."""
    set_here = _ACTOR.get()
    if set_here is not _UNSET:
        return set_here
    if _RESOLVER:
        return _RESOLVER[0]()
    return None


@contextmanager
def acting_as(actor: Actor | None) -> Iterator[None]:
    """Run the block as ``actor`` (``None``: the local operator)."""
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        _ACTOR.reset(token)


def _secrets_file() -> Path:
    return Path(os.environ.get(SECRETS_ENV) or Path(".streamlit") / "secrets.toml")


def _secrets(path: Path | None = None) -> dict[str, Any]:
    """The secrets file's contents; ``{}`` when it is missing or unreadable."""
    try:
        return tomllib.loads((path or _secrets_file()).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def auth_configured(secrets: Path | None = None) -> bool:
    """Does the secrets file configure a Streamlit login (an ``[auth]`` section)? Read on its
    own so that a page that cannot read the login state fails closed (logged out), not open."""
    return isinstance(_secrets(secrets).get("auth"), dict)


def config_admins(env: Mapping[str, str] | None = None,
                  secrets: Path | None = None) -> list[str]:
    """The first admins: ``CHECKEVAL_ADMINS`` (comma-separated) if set, else the secrets
    file's ``checkeval_admins`` (a list or a comma-separated string)."""
    env = os.environ if env is None else env
    raw: Any = env.get(ADMINS_ENV, "")
    if not raw.strip():
        raw = _secrets(secrets).get(SECRETS_KEY, "")
    names = raw if isinstance(raw, list) else str(raw).split(",")
    return list(dict.fromkeys(str(n).strip() for n in names if str(n).strip()))


def role_of(db: sqlite_utils.Database, person: str | None) -> str | None:
    """The person's role, ``None`` when they have none (deny by default)."""
    if not person:
        return None
    if person in config_admins():
        return "admin"
    row = db.execute("SELECT role FROM team WHERE person = ? ORDER BY id DESC LIMIT 1",
                     [person]).fetchone()
    return row[0] if row and row[0] else None


def can(role: str | None, capability: str) -> bool:
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")
    return role is not None and role in CAPABILITIES[capability][1]


def may_open(role: str | None, url_path: str) -> bool:
    """May someone with ``role`` open the page at ``url_path`` (unknown pages: admin only)?"""
    if role is None:
        return url_path in ("", "home")
    need = PAGES.get(url_path, "team.manage")
    return need is None or can(role, need)


def _who_may(capability: str) -> str:
    return ", ".join(r for r in ROLES if r in CAPABILITIES[capability][1])


def refusal(actor: Actor, role: str | None, capability: str) -> str | None:
    """Why ``actor`` may not use ``capability`` (``None``: they may)."""
    what = CAPABILITIES[capability][0]
    if not actor.name:
        return f"Refused: {actor.reason or 'nobody is logged in'} Nothing was written."
    if role is None:
        return (f"Refused: {actor.name} has no role in this app, so may not {what}. An admin "
                f"adds people on the Team page (or `checkeval team add NAME --role ROLE`). "
                "Nothing was written.")
    if not can(role, capability):
        return (f"Refused: {actor.name} is {role}; to {what} needs the role "
                f"{_who_may(capability)}. Nothing was written.")
    return None


def require(db: sqlite_utils.Database, capability: str,
            actor: Actor | None = None) -> tuple[Actor | None, str | None]:
    """``(actor, role)`` when the current actor may use ``capability``; raises
    :class:`Denied` otherwise. The local operator (no login) may do everything."""
    actor = current_actor() if actor is None else actor
    if actor is None:
        return None, None
    role = role_of(db, actor.name)
    why = refusal(actor, role, capability)
    if why:
        raise Denied(why)
    return actor, role


def record(db: sqlite_utils.Database, person: str, role: str, action: str,
           target: str = "") -> None:
    db.execute("INSERT INTO audit_log (person, role, action, target, created_at) VALUES "
               "(?, ?, ?, ?, ?)", [person, role, action, target[:500], now_iso()])


_PLAIN = (str, int, float, bool, Path)
#: characters of an argument's description the audit log keeps (then "…")
_KEPT = 80


def _describe(value: Any) -> str:
    """What the log says an argument was: plain values and short lists or dicts of them
    as written; anything else only by its type. A mapping such as the app's secrets is
    never written out (its keys would land in the log), and an object's own repr may
    read a file or fail (Streamlit's secrets raise when there is no secrets file)."""
    if isinstance(value, str):  # one more than the log keeps (its "…" shows), not a whole upload
        return repr(value[:_KEPT + 1])
    if isinstance(value, _PLAIN):
        return repr(value)
    if isinstance(value, (list, tuple)) and len(value) <= 20 and \
            all(isinstance(x, _PLAIN) or x is None for x in value):
        return repr(value)
    if type(value) is dict and len(value) <= 20 and \
            all(isinstance(x, _PLAIN) or x is None for x in value.values()):
        return repr(value)
    return f"<{type(value).__name__}>"


def _target(arguments: dict[str, Any]) -> str:
    parts = []
    for k, v in arguments.items():
        if k in ("db", "secrets") or isinstance(v, sqlite_utils.Database) or v is None:
            continue
        text = _describe(v)
        parts.append(f"{k}={text[:_KEPT] + '…' if len(text) > _KEPT else text}")
    return ", ".join(parts)


def log_write(db: sqlite_utils.Database, actor: Actor | None, role: str | None, action: str,
              target: str) -> None:
    """Append an allowed write to the audit log: who, as what, what, on what. The local
    operator (no login, ``actor`` None or nameless) is not logged."""
    if actor is not None and actor.name and role:
        record(db, actor.name, role, action, target)


F = TypeVar("F", bound=Callable[..., Any])


def guarded(capability: str, *, self_param: str | None = None,
            audit: bool = True) -> Callable[[F], F]:
    """The one line at the top of every write: check the acting person's role for
    ``capability`` before the function runs (and, with ``self_param``, that the name the
    write records as its author is exactly the acting person's own: not blank, not padded,
    not someone else's), then append the write to the
    audit log (``audit=False`` for an export a page prepares on every render: checked, not
    logged). The local operator is not checked and not logged."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")

    def wrap(fn: F) -> F:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            if _DEPTH.get():  # an outer guarded call checked already
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            db = bound.arguments.get("db", args[0] if args else None)
            actor, role = require(db, capability)
            if actor is not None and self_param:
                # exactly the acting person's name: a blank name or one padded with spaces
                # would be stored as someone else (another "person" with their own answers)
                named = bound.arguments.get(self_param, sig.parameters[self_param].default)
                if not isinstance(named, str) or not named.strip():
                    raise Denied(f"Refused: {actor.name} must name themselves as "
                                 f"{self_param} (the name given is blank). Nothing was "
                                 "written.")
                if named != actor.name:
                    raise Denied(f"Refused: {actor.name} may not record work as "
                                 f"{named!r}. Nothing was written.")
            token = _DEPTH.set(1)
            try:
                out = fn(*args, **kwargs)
            finally:
                _DEPTH.reset(token)
            if audit and actor is not None and isinstance(db, sqlite_utils.Database):
                log_write(db, actor, role, fn.__qualname__, _target(bound.arguments))
            return out

        inner.capability = capability  # type: ignore[attr-defined]
        return inner  # type: ignore[return-value]
    return wrap


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"Unknown role {role!r}. Available: {', '.join(ROLES)}")
    return role


def acting_name() -> str:
    """The acting person's name, for a write that records its author (``''``: the local
    operator, nobody logged in)."""
    actor = current_actor()
    return actor.name if actor is not None and actor.name else ""


def _granter() -> str:
    return acting_name() or "(local operator)"


@guarded("team.manage")
def grant(db: sqlite_utils.Database, person: str, role: str) -> None:
    """Give ``person`` the role ``role`` (appended: the earlier grants stay as history)."""
    name = (person or "").strip()
    if not name or len(name) > 200:
        raise ValueError("a person's name is 1 to 200 characters")
    db.execute("INSERT INTO team (person, role, granted_by, created_at) VALUES (?, ?, ?, ?)",
               [name, _check_role(role), _granter(), now_iso()])


@guarded("team.manage")
def remove(db: sqlite_utils.Database, person: str) -> None:
    """Take ``person``'s role away (a row with an empty role: the history stays)."""
    name = (person or "").strip()
    if name in config_admins():
        raise ValueError(f"{name} is an admin by configuration ({ADMINS_ENV} or the secrets "
                         "file): remove them there")
    if role_of(db, name) is None:
        raise ValueError(f"{name!r} has no role: nothing to remove")
    db.execute("INSERT INTO team (person, role, granted_by, created_at) VALUES (?, '', ?, ?)",
               [name, _granter(), now_iso()])


def members(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Everyone with a role: ``person, role, granted_by, since, source`` (configuration
    admins first)."""
    out = [{"person": n, "role": "admin", "granted_by": "", "since": "",
            "source": "configuration"} for n in config_admins()]
    seen = {o["person"] for o in out}
    for r in rows(db, "SELECT t.person, t.role, t.granted_by, t.created_at AS since FROM team t "
                      "WHERE t.id = (SELECT MAX(id) FROM team WHERE person = t.person) "
                      "ORDER BY t.person"):
        if r["role"] and r["person"] not in seen:
            out.append({**r, "source": "team"})
    return out


def history(db: sqlite_utils.Database, person: str | None = None) -> list[dict[str, Any]]:
    """Every grant and removal, oldest first (``role`` empty: removed)."""
    where, params = (" WHERE person = ?", [person]) if person else ("", [])
    return rows(db, "SELECT person, role, granted_by, created_at FROM team" + where +
                " ORDER BY id", params)


def activity(db: sqlite_utils.Database, person: str, limit: int = 200) -> list[dict[str, Any]]:
    """What ``person`` did, newest first: ``created_at, role, action, target``."""
    return rows(db, "SELECT created_at, role, action, target FROM audit_log WHERE person = ? "
                    "ORDER BY id DESC LIMIT ?", [person, limit])
