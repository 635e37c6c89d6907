"""Where a remote judge's API key comes from, and where it may go — one resolver for every
entry point.

``checkeval judge test``, ``checkeval run``, the Run page's background worker and the Judges
page's *Ask one question* all build their judge with ``registry.get_judge(spec, db=db)``,
which asks :func:`resolve`. Two rules hold whatever a client sends (a URL, a variable name, a
file name, a header):

* **Only variables the operator declared are key sources.** Declared are the variables named
  in ``CHECKEVAL_KEY_HOSTS`` and the default variables a backend declares in ``spec.py``.
* **A key is sent only to an address the operator approved for its variable.** The operator
  approves addresses outside the app, in the server's environment (or in
  ``.streamlit/secrets.toml``, which no page writes)::

      CHECKEVAL_KEY_HOSTS="MY_VLLM_KEY=http://gpu1.lab:8000,http://gpu2.lab:8000; CHECKEVAL_OPENAI_COMPAT_KEY=https://llm.example.org"

  An address is ``[scheme://]host[:port]`` (a path after it is ignored: an approval covers the
  whole origin); the scheme defaults to ``https`` and the port to the scheme's default, and
  each part must match exactly (``127.0.0.1.nip.io`` is not
  ``127.0.0.1``; a loopback or private address is approved only when named). The official
  endpoint of a built-in backend (``openai:`` → ``https://api.openai.com``) is approved for
  that backend's default variables.

The variable tried first is the one given explicitly (``key_env``), else the saved judge's
``key_env`` for this spec (same params first) in the ``judge`` table; then the backend's
default variables. A named variable that is not declared, or holds a key not approved for the
judge's address, is refused (:class:`KeyRefused`, naming the variable and the address and how
to approve it): nothing is sent. A *default* variable whose key is not approved for the address
is passed over, so a server without authentication still works and the key stays home.

Each variable is looked up in the process environment, then in the optional ``secrets``
mapping the caller passes (the app passes ``st.secrets``; the core never imports Streamlit).
Only the *name* of a variable is ever stored; the key itself never reaches the database, run
params, exports, logs or error messages. The backend re-checks every outgoing request's
address against the same approval and follows no redirect (``openai_compat.py``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from checkeval_core.judges.spec import BACKENDS, JudgeSpec, as_spec, backend_of, shown

# httpx is imported where a URL is checked (about 0.1 s): this module loads with the CLI.

# what an environment-variable NAME looks like; anything else (``sk-…``, spaces, lower case)
# is refused as a key source, so a pasted key is never stored
KEY_ENV_RE = re.compile(r"[A-Z_][A-Z0-9_]*\Z")
KEY_HOSTS_ENV = "CHECKEVAL_KEY_HOSTS"
# the addresses any remote judge may be sent requests at all (unset: any address); the
# operator's way to keep a visitor's judge off internal services (docs/security.md)
JUDGE_HOSTS_ENV = "CHECKEVAL_JUDGE_HOSTS"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_POLICY = 20_000  # characters: the policy is the operator's, but parsing stays bounded

Origin = tuple[str, str, int]  # scheme, host (lower case), port


class KeyRefused(ValueError):
    """A key source the operator did not declare, or an address it is not approved for."""


class AddressRefused(KeyRefused):
    """A judge address outside the operator's ``CHECKEVAL_JUDGE_HOSTS``."""


@dataclass(frozen=True)
class ResolvedKey:
    value: str
    variable: str  # the environment variable it came from (its name only is ever shown)
    origins: tuple[Origin, ...]  # the addresses the operator approved this key for


def origin_of(url: str) -> Origin:
    """``(scheme, host, port)`` of ``url`` as the HTTP client parses it; a URL with credentials
    (``http://api.openai.com@evil``), another scheme or no host is refused."""
    import httpx

    try:
        u = httpx.URL(str(url))
    except Exception as e:  # noqa: BLE001 - httpx raises several kinds for a bad URL
        raise KeyRefused(f"not a valid address: {_short(url)}") from e
    if u.userinfo:
        raise KeyRefused("an address with credentials before '@' is never sent a key: "
                         f"{_show(u)}")
    if u.scheme not in _DEFAULT_PORTS or not u.host:
        raise KeyRefused(f"not an http(s) address with a host: {_short(url)}")
    return u.scheme, u.host.lower().rstrip("."), u.port or _DEFAULT_PORTS[u.scheme]


def show_origin(o: Origin) -> str:
    scheme, host, port = o
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if port == _DEFAULT_PORTS[scheme] else f":{port}")


def _parse_entry(entry: str) -> Origin:
    """One approved address; a path after it is ignored (an approval is for a whole origin)."""
    entry = entry.strip()
    if "://" not in entry:
        entry = "https://" + entry
    return origin_of(entry)


def _policy_text(secrets: Mapping[str, Any] | None, env: str = KEY_HOSTS_ENV) -> str:
    parts = [os.environ.get(env, "")]
    if secrets is not None:
        try:
            extra = secrets.get(env)
        except Exception:  # noqa: BLE001 - e.g. Streamlit without a secrets file
            extra = None
        if isinstance(extra, str):
            parts.append(extra)
    return ";".join(p for p in parts if p)


def approvals(secrets: Mapping[str, Any] | None = None) -> dict[str, list[Origin]]:
    """Every declared key variable → the addresses its key may be sent to: the backends'
    defaults (their official endpoint, when they have one) and the operator's
    ``CHECKEVAL_KEY_HOSTS``. A malformed policy raises (a remote judge then sends nothing)."""
    out: dict[str, list[Origin]] = {}
    for b in BACKENDS.values():
        for var in b.key_envs:
            out.setdefault(var, [])
            if b.default_url and origin_of(b.default_url) not in out[var]:
                out[var].append(origin_of(b.default_url))
    text = _policy_text(secrets)
    if len(text) > _MAX_POLICY:
        raise KeyRefused(f"{KEY_HOSTS_ENV} is longer than {_MAX_POLICY} characters")
    for chunk in re.split(r"[;\n]", text):
        if not chunk.strip():
            continue
        var, eq, hosts = chunk.partition("=")
        var = var.strip()
        if not eq or not KEY_ENV_RE.match(var):
            raise KeyRefused(f"{KEY_HOSTS_ENV}: write VAR=address[,address] pairs separated "
                             f"by ';' (an entry starts {_short(chunk.strip(), 20)!r})")
        for h in hosts.split(","):
            if h.strip():
                o = _parse_entry(h)
                if o not in out.setdefault(var, []):
                    out[var].append(o)
    return out


def judge_hosts(secrets: Mapping[str, Any] | None = None) -> tuple[Origin, ...] | None:
    """The addresses the operator lets any remote judge reach (``CHECKEVAL_JUDGE_HOSTS``:
    addresses separated by ``,``, ``;`` or new lines, each ``[scheme://]host[:port]`` as in
    ``CHECKEVAL_KEY_HOSTS``); None when unset (any address). A malformed list raises
    (:class:`AddressRefused`: then no remote judge is asked)."""
    text = _policy_text(secrets, JUDGE_HOSTS_ENV)
    if not text.strip():
        return None
    if len(text) > _MAX_POLICY:
        raise AddressRefused(f"{JUDGE_HOSTS_ENV} is longer than {_MAX_POLICY} characters")
    out: list[Origin] = []
    for entry in re.split(r"[,;\n]", text):
        if entry.strip():
            try:
                o = _parse_entry(entry)
            except KeyRefused as e:
                raise AddressRefused(f"{JUDGE_HOSTS_ENV}: {e}") from None
            if o not in out:
                out.append(o)
    return tuple(out)


def check_judge_hosts(spec: str | JudgeSpec, secrets: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`AddressRefused` when ``CHECKEVAL_JUDGE_HOSTS`` is set and an address of
    ``spec`` (each endpoint of a pool) is not in it; nothing is sent then."""
    allowed = judge_hosts(secrets)
    if allowed is None:
        return
    for url in urls_of(spec):
        try:
            o = origin_of(url)
        except KeyRefused as e:
            raise AddressRefused(str(e)) from None
        if o not in allowed:
            raise AddressRefused(f"judge address {show_origin(o)} is not among the addresses "
                                 f"the operator allows judges to reach ({JUDGE_HOSTS_ENV}, "
                                 "docs/security.md); nothing was sent")


def declared_sources(secrets: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """Declared key variables → their approved addresses, as text (names only, never keys):
    what the Judges page offers and ``checkeval judge sources`` lists."""
    return {var: [show_origin(o) for o in origins]
            for var, origins in approvals(secrets).items()}


def key_sources_for(spec: str, secrets: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """For the Judges page: the declared variables approved for ``spec``'s address
    (``approved``) and one sentence saying what will be sent and how to approve more."""
    try:
        urls = urls_of(spec)
    except ValueError:
        return {"approved": [], "note": "Complete the judge's fields to see its key sources."}
    try:
        table = approvals(secrets)
        targets = [origin_of(u) for u in urls]
    except KeyRefused as e:
        return {"approved": [], "note": f"No key can be sent: {e}"}
    if not targets:
        return {"approved": [], "note": "This judge names no address: no key is sent."}
    # a pool: only a variable approved for every one of its endpoints
    approved = sorted(v for v, origins in table.items() if all(t in origins for t in targets))
    where = ", ".join(show_origin(t) for t in targets)
    note = (f"Key sources approved for {where}: {', '.join(approved)}." if approved else
            f"No key source is approved for {where}: the judge is saved without a key.")
    return {"approved": approved,
            "note": note + f" The operator approves one outside the app with {KEY_HOSTS_ENV}"
                           f"='VAR={where}' in the server's environment (docs/security.md)."}


def target_url(spec: str | JudgeSpec) -> str:
    """Where the judge of ``spec`` sends its requests: its ``base_url``, else the backend's
    official endpoint ("" for a backend that calls no server)."""
    backend = backend_of(spec)
    if backend is None:
        return ""
    parsed = as_spec(spec)
    if parsed.is_pool:  # every endpoint is checked on its own (urls_of)
        raise ValueError(f"judge {shown(spec)!r} is a pool: one address per endpoint")
    url = parsed.get(backend.url_field, "") or backend.default_url
    return url if not url or "://" in url else "https://" + url


def urls_of(spec: str | JudgeSpec) -> list[str]:
    """Every address ``spec`` sends requests to: each endpoint of a pool, else
    :func:`target_url` (empty for a backend that calls no server)."""
    parsed = as_spec(spec)
    if parsed.is_pool:
        return [u if "://" in u else "https://" + u for u in parsed.urls]
    url = target_url(parsed)
    return [url] if url else []


def approval_hint(var: str, url: str) -> str:
    try:
        where = show_origin(origin_of(url))
    except KeyRefused:
        where = "this address"
    return (f"the operator approves it by adding {var}={where} to {KEY_HOSTS_ENV} in the "
            "server's environment (docs/security.md)")


def check_approved(var: str, url: str, secrets: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`KeyRefused` unless ``var`` is declared and approved for ``url``."""
    table = approvals(secrets)
    if not url:
        raise KeyRefused(f"this judge names no address, so the key in {var} is not sent")
    if var not in table:
        raise KeyRefused(f"key source {var} is not declared by the operator, so no key is "
                         f"read from it; {approval_hint(var, url)}")
    if origin_of(url) not in table[var]:
        raise KeyRefused(f"the key in {var} is not approved for {show_origin(origin_of(url))}, "
                         f"so it is not sent; {approval_hint(var, url)}")


def default_key_envs(spec: str | JudgeSpec) -> tuple[str, ...]:
    """The default key variables the backend of ``spec`` declares (empty: it sends no key)."""
    backend = backend_of(spec)
    return backend.key_envs if backend is not None else ()


def check_key_env(name: str) -> str:
    """``name`` if it is an environment-variable name, else a ValueError that never echoes it
    (it may be a pasted key)."""
    name = (name or "").strip()
    if name and not KEY_ENV_RE.match(name):
        raise ValueError("key source: give the NAME of an environment variable (capital letters, "
                         "digits and _, e.g. OPENAI_API_KEY), never the key itself; "
                         "nothing was saved")
    return name


def check_key_source(spec: str, name: str, secrets: Mapping[str, Any] | None = None) -> str:
    """What a saved judge may name as its key source: a declared variable approved for the
    judge's address ("" = the defaults). Raises ValueError / KeyRefused; nothing is saved."""
    name = check_key_env(name)
    if name:
        if not needs_key(spec):
            raise ValueError(f"judge {spec!r} sends no key; leave the key source empty")
        for url in urls_of(spec) or [""]:  # each endpoint of a pool must be approved
            check_approved(name, url, secrets)
    return name


def needs_key(spec: str | JudgeSpec) -> bool:
    """True for the backends that send an API key."""
    return bool(default_key_envs(spec))


def saved_key_env(db: Any, spec: str | JudgeSpec, params: Mapping[str, Any] | None = None
                  ) -> str:
    """The ``key_env`` of the saved judge with this spec ("" when none): the one saved with the
    same params first, else the most recent one that names a variable."""
    if db is None:
        return ""
    try:
        spec = as_spec(spec).spec
    except ValueError:
        return ""
    p = json.dumps(dict(params or {}), sort_keys=True)
    row = db.execute("SELECT key_env FROM judge WHERE spec = ? AND key_env != '' "
                     "ORDER BY (params = ?) DESC, id DESC LIMIT 1", [spec, p]).fetchone()
    return row[0] if row else ""


def _lookup(name: str, secrets: Mapping[str, Any] | None) -> str | None:
    value = os.environ.get(name)
    if not value and secrets is not None:
        try:
            value = secrets.get(name)
        except Exception:  # noqa: BLE001 - e.g. Streamlit without a secrets file
            value = None
    return str(value) if isinstance(value, str | int) and str(value) else None


def resolve(db: Any, spec: str | JudgeSpec, key_env: str | None = None,
            secrets: Mapping[str, Any] | None = None,
            params: Mapping[str, Any] | None = None,
            url: str | None = None) -> ResolvedKey | None:
    """The key for ``spec`` sent to ``url`` (default: the spec's own address), or ``None``.
    See the module docstring for the order and the two rules."""
    if not needs_key(spec):
        return None
    spec = as_spec(spec)  # parsed once for the address, the saved judge and the defaults
    url = url or target_url(spec)
    table = approvals(secrets)
    named = key_env or saved_key_env(db, spec, params)
    if named:
        if not KEY_ENV_RE.match(named):
            raise KeyRefused("the saved key source is not a variable name; save the judge "
                             "again with a declared variable")
        if named not in table:
            raise KeyRefused(f"key source {named} is not declared by the operator, so no key "
                             f"is read from it; {approval_hint(named, url)}")
        value = _lookup(named, secrets)
        if value:
            check_approved(named, url, secrets)
            return ResolvedKey(value, named, tuple(table[named]))
    if not url:
        return None  # a backend that names no address is sent no default key
    target = origin_of(url)
    for name in default_key_envs(spec):
        value = _lookup(name, secrets)
        if value and target in table.get(name, []):
            return ResolvedKey(value, name, tuple(table[name]))
    return None


def key_problems(db: Any, specs: list[str],
                 secrets: Mapping[str, Any] | None = None) -> list[str]:
    """Why each judge in ``specs`` would be refused its key (empty when none is): checked
    before a batch of runs starts, so a refused key source starts nothing."""
    out = []
    for spec in specs:
        parsed = as_spec(spec)
        try:
            check_judge_hosts(parsed, secrets)
            for url in urls_of(parsed) if parsed.is_pool else [None]:
                resolve(db, parsed, secrets=secrets, url=url)  # each endpoint of a pool
        except KeyRefused as e:
            out.append(f"{spec}: {e}")
    return out


def key_missing(db: Any, spec: str, secrets: Mapping[str, Any] | None = None) -> str | None:
    """Why a judge that cannot work without a key has none (its backend's official endpoint,
    e.g. ``openai:``, and no key set), or None — checked before a run starts."""
    backend = backend_of(spec)
    if not needs_key(spec) or backend is None or not backend.default_url:
        return None
    parsed = as_spec(spec)
    if parsed.get(backend.url_field, ""):
        return None  # a server of one's own may need no key
    try:
        found = resolve(db, parsed, secrets=secrets)
    except KeyRefused as e:
        return f"judge {spec!r}: {e}"
    if found is None:
        return (f"judge {spec!r} needs an API key: set {' or '.join(default_key_envs(spec))} "
                "in the environment (or in .streamlit/secrets.toml for the app)")
    return None


def resolve_key(db: Any, spec: str, key_env: str | None = None,
                secrets: Mapping[str, Any] | None = None,
                params: Mapping[str, Any] | None = None) -> str | None:
    """The key's value only (see :func:`resolve`)."""
    found = resolve(db, spec, key_env=key_env, secrets=secrets, params=params)
    return found.value if found else None


def _short(text: str, limit: int = 80) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _show(u: Any) -> str:
    """A URL without its credentials, for messages."""
    return _short(re.sub(r"//[^/]*@", "//", str(u)))
