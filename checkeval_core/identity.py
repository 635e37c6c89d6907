"""Who is doing this? One answer for every page that records a person's name.

Annotations, review decisions and settled disagreements are only worth something if the
name stored with them is the person who made them. The app can learn a name three ways, in
strict order of trust, and never mixes them:

1. **Streamlit login** (an ``[auth]`` section in ``.streamlit/secrets.toml``): when a login is
   configured only the logged-in identity counts. A visitor who is not logged in gets no
   name at all — never a header or a typed name instead. The person is named by a stable,
   unique claim (:func:`login_identity`): the ``email`` when the provider says it is verified,
   else the subject ``sub`` — never the display ``name``, which people set themselves.
2. **A trusted proxy header**, only when the operator names it in the environment variable
   ``CHECKEVAL_TRUSTED_USER_HEADER`` (one header, e.g. ``X-Auth-Request-User``). Any other
   header (``X-Forwarded-User``, ``Remote-User``, …) is ignored: a client can send anything,
   so a header means something only when a proxy in front of the app sets it and strips the
   client's own copy. When the header is configured but missing, there is no name (the
   request did not come through the proxy).
3. **A typed name** otherwise (single-user or trusted-team setups; honest but not verified).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

TRUSTED_HEADER_ENV = "CHECKEVAL_TRUSTED_USER_HEADER"
MAX_NAME_LEN = 200
# RFC 9110 token characters: what a single header field name may contain.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def trusted_header(env: Mapping[str, str] | None = None) -> str | None:
    """The configured trusted header name, ``None`` when header trust is off.

    Raises ``ValueError`` when the variable is set to something that is not one header name
    (a list such as ``"X-A, X-B"`` is refused: exactly one header is trusted).
    """
    env = os.environ if env is None else env
    raw = (env.get(TRUSTED_HEADER_ENV) or "").strip()
    if not raw:
        return None
    if not _HEADER_NAME.match(raw):
        raise ValueError(f"{TRUSTED_HEADER_ENV}={raw!r} is not one HTTP header name "
                         "(e.g. X-Auth-Request-User); header trust stays off")
    return raw


def identity_mode(login_configured: bool, env: Mapping[str, str] | None = None) -> str:
    """Where the name comes from: ``login``, ``header``, ``typed`` (or ``config`` if the
    header variable is malformed — then no name is accepted at all)."""
    if login_configured:
        return "login"
    try:
        return "header" if trusted_header(env) else "typed"
    except ValueError:
        return "config"


def clean_name(value: Any) -> str | None:
    """A name fit to store: trimmed, no control characters, at most 200 characters."""
    if not isinstance(value, str):
        return None
    name = value.strip()
    if not name or len(name) > MAX_NAME_LEN:
        return None
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        return None
    return name


def _claim_true(value: Any) -> bool:
    # OIDC says boolean; some providers (Cognito, older Auth0 rules) send the string "true".
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def login_identity(claims: Mapping[str, Any]) -> str | None:
    """The name an OIDC login gives a person: their ``email`` when ``email_verified`` is true,
    else their subject ``sub`` (the provider's stable id for the account); ``None`` when
    neither is usable.

    Never the ``name`` claim: that is the profile's display name, which the person sets and
    which is not unique — an outsider who calls their profile "Alice Martin" must not become
    the admin named "Alice Martin". An unverified email is skipped for the same reason.
    """
    if _claim_true(claims.get("email_verified")):
        email = clean_name(claims.get("email"))
        if email:
            return email
    return clean_name(claims.get("sub"))


def _header_values(headers: Mapping[str, str], name: str) -> list[str]:
    get_all = getattr(headers, "get_all", None)
    if callable(get_all):  # Streamlit's headers keep repeated fields
        return [str(v) for v in get_all(name)]
    return [str(v) for k, v in headers.items() if str(k).lower() == name.lower()]


def resolve_annotator(headers: Mapping[str, str], login_user: str | None, typed: str,
                      env: Mapping[str, str] | None = None, *,
                      login_configured: bool | None = None) -> tuple[str | None, str, str]:
    """``(name or None, source, message)``: the name to record and where it came from.

    ``source`` is ``login``, ``header``, ``typed`` or ``config``; ``message`` explains a
    missing name (empty when there is one). ``login_configured`` defaults to "a login user
    was given"; pass ``True`` when a login is configured but nobody is logged in.
    """
    if login_configured is None:
        login_configured = login_user is not None
    mode = identity_mode(login_configured, env)
    if mode == "login":
        name = clean_name(login_user)
        if name:
            return name, "login", ""
        return None, "login", "Log in to continue: this app records the logged-in identity."
    if mode == "config":
        try:
            trusted_header(env)
        except ValueError as e:
            return None, "config", str(e)
    if mode == "header":
        header = trusted_header(env) or ""
        values = _header_values(headers, header)
        if not values:
            return None, "header", (f"No {header} header on this request: open the app "
                                    "through the login proxy.")
        if len(values) > 1:
            return None, "header", f"The {header} header appears {len(values)} times: refused."
        name = clean_name(values[0])
        if not name:
            return None, "header", f"The {header} header does not hold a usable name."
        return name, "header", ""
    name = clean_name(typed or "")
    if name:
        return name, "typed", ""
    if (typed or "").strip():
        return None, "typed", (f"Names are at most {MAX_NAME_LEN} characters, without "
                               "control characters.")
    return None, "typed", "Enter your name first: every record says who made it."
