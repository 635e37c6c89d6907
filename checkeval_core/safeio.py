"""Reading untrusted input safely: one place for size limits, bounded JSON/YAML parsing and
file names derived from data.

Every importer (datasets, checklists, annotations, external metrics) takes bytes plus a
*display* name (used only in messages, never as a path) and goes through these helpers, so an
upload from the web page and a file given to the CLI are refused by the same rules:

* bytes and rows/questions per import are bounded (:data:`LIMITS`, overridable by the
  environment variables listed there) and the message names the limit;
* JSON nesting depth is bounded (``[[[[...]]]]`` 100k deep is a clear error, not a
  ``RecursionError``);
* a key given twice in one JSON object or YAML mapping is refused with its line (the parsers
  would silently keep only the last value, dropping questions or rows);
* a lone UTF-16 surrogate (``"\\ud800"`` is valid JSON and YAML, but no text: SQLite and UTF-8
  cannot store it) is refused with its line and field instead of failing later;
* YAML is parsed with a safe loader that refuses alias expansion beyond a small bound (a
  "billion laughs" alias bomb is refused while it is being composed);
* :func:`safe_filename` / :func:`safe_join` turn data (dimension names…) into file names that
  cannot leave the output folder.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml


class InputError(ValueError):
    """Input refused by a safety rule; the message names the file and the rule."""


class WouldReplace(ValueError):
    """An import asked not to replace what is stored under its name (``replace=False``): the
    message says what would go, so a page can ask before it does. Nothing was written."""


def _env_int(name: str, default: int) -> int:
    try:
        v = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return v if v > 0 else default


#: Bounds on every import. Bytes limits can be raised with ``CHECKEVAL_MAX_IMPORT_MB``
#: (datasets, annotations, metrics) and ``CHECKEVAL_MAX_CHECKLIST_MB`` (checklists).
LIMITS: dict[str, int] = {
    "import_bytes": _env_int("CHECKEVAL_MAX_IMPORT_MB", 200) * 1024 * 1024,
    "checklist_bytes": _env_int("CHECKEVAL_MAX_CHECKLIST_MB", 5) * 1024 * 1024,
    "rows": _env_int("CHECKEVAL_MAX_IMPORT_ROWS", 1_000_000),
    "questions": 10_000,
    "json_depth": 64,
    "yaml_aliases": 100,
    "yaml_nodes": 200_000,
    "filename_chars": 100,
}


def too_big(name: str, size: int, limit: int) -> InputError:
    """The refusal for ``size`` bytes over ``limit`` (the message names the limit)."""
    mb = f" ({limit / (1024 * 1024):g} MB)" if limit >= 1024 * 1024 else ""
    return InputError(f"{name}: {size:,} bytes is more than the limit of {limit:,} bytes{mb} "
                      "allowed for one import")


def check_size(data: bytes, name: str, limit: int | None = None) -> bytes:
    """``data`` unchanged, or :class:`InputError` when it is larger than ``limit`` bytes."""
    limit = LIMITS["import_bytes"] if limit is None else limit
    if len(data) > limit:
        raise too_big(name, len(data), limit)
    return data


def read_bytes(path: str | Path, limit: int | None = None) -> bytes:
    """The file's bytes, refusing a missing file or one over ``limit`` before reading it."""
    p = Path(path)
    limit = LIMITS["import_bytes"] if limit is None else limit
    try:
        size = p.stat().st_size
        if size > limit:
            raise too_big(p.name, size, limit)
        with p.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise InputError(f"{p}: cannot read the file ({e.strerror or e})") from None
    return check_size(data, p.name, limit)


def check_count(n: int, name: str, what: str = "rows", limit: int | None = None) -> None:
    """Refuse more than ``limit`` rows/questions in one import."""
    limit = LIMITS[what if what in LIMITS else "rows"] if limit is None else limit
    if n > limit:
        raise InputError(f"{name}: more than {limit:,} {what} in one import (the limit)")


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM is dropped); an invalid byte is reported with its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{name}, line {line}: invalid UTF-8 byte 0x{data[e.start]:02x} at "
                         f"byte offset {e.start}; save the file as UTF-8") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def json_depth_error(text: str, max_depth: int | None = None) -> int | None:
    """The offset where ``text`` nests deeper than ``max_depth``, or None (linear scan)."""
    max_depth = LIMITS["json_depth"] if max_depth is None else max_depth
    if text.count("[") + text.count("{") <= max_depth:
        return None
    # strings may hold brackets: blank them out (same length, so offsets stay right)
    bare = _STRING.sub(lambda m: " " * len(m.group(0)), text)
    depth = 0
    for m in _BRACKET.finditer(bare):
        if m.group(0) in "[{":
            depth += 1
            if depth > max_depth:
                return m.start()
        else:
            depth -= 1
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]', re.DOTALL)
SURROGATE_MESSAGE = ("holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), "
                     "which is not text; remove it or give the whole character")


def has_surrogate(text: str) -> bool:
    """True when ``text`` holds a lone surrogate code point (not storable as UTF-8)."""
    return _SURROGATE.search(text) is not None


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _DuplicateKey()
    return d


# one decoder for every call (``json.loads(..., object_pairs_hook=)`` builds a new one each time)
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def _field_path(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def json_key_problem(text: str) -> tuple[int, str] | None:
    """``(line, problem)`` for the first key given twice in one object or the first string
    holding a lone surrogate, or None. A linear scan of the tokens, run only when the fast
    parser has already seen one of these problems, to say where it is."""
    frames: list[dict[str, Any]] = []  # per open object/array: keys seen, current key/index
    pending: tuple[str, int] | None = None  # a string whose role the next token decides

    def path(extra: str | None = None) -> str:
        parts: list[str | int] = []
        for f in frames:
            if f["obj"] and f["key"] is not None:
                parts.append(f["key"])
            elif not f["obj"]:
                parts.append(f["i"])
        if extra is not None:
            parts.append(extra)
        return _field_path(parts)

    def line(off: int) -> int:
        return text.count("\n", 0, off) + 1

    def value_problem(s: str, off: int) -> tuple[int, str] | None:
        if has_surrogate(s):
            p = path()
            return line(off), (f"field {p!r} " if p else "the value ") + SURROGATE_MESSAGE
        return None

    for m in _JSON_TOKEN.finditer(text):
        tok = m.group(0)
        if pending is not None:
            s, off = pending
            pending = None
            if tok == ":" and frames and frames[-1]["obj"]:
                f = frames[-1]
                f["key"] = None  # the path of this key is its object's path plus the key
                if has_surrogate(s):
                    p = path()
                    return line(off), (f"a key in field {p!r} " if p else "a key ") \
                        + SURROGATE_MESSAGE
                if s in f["keys"]:
                    return line(off), (f"field {path(s)!r}: the key {s!r} is given twice in "
                                       "one object (only one value can be kept)")
                f["keys"].add(s)
                f["key"] = s
                continue
            found = value_problem(s, off)
            if found:
                return found
        if tok[0] == '"':
            try:
                s = json.loads(tok) if "\\" in tok else tok[1:-1]
            except ValueError:
                s = tok[1:-1]
            pending = (s, m.start())
        elif tok in "[{":
            frames.append({"obj": tok == "{", "keys": set(), "key": None, "i": 0})
        elif tok in "]}":
            if frames:
                frames.pop()
        elif tok == "," and frames and not frames[-1]["obj"]:
            frames[-1]["i"] += 1
    if pending is not None:
        return value_problem(*pending)
    return None


def load_json_text(text: str, name: str, max_depth: int | None = None,
                   where: str = "") -> Any:
    """``json.loads`` with the nesting depth bounded, a key given twice in one object and a
    lone surrogate refused; errors name the file, line and column (or field).

    ``where`` ("line 3") prefixes positions for one-record-per-line files.
    """
    max_depth = LIMITS["json_depth"] if max_depth is None else max_depth
    loc = f"{name}, {where}" if where else name
    off = json_depth_error(text, max_depth)
    if off is not None:
        line = text.count("\n", 0, off) + 1
        pos = f"{loc}" if where else f"{name}, line {line}"
        raise InputError(f"{pos}: JSON nested more than {max_depth} levels deep (the limit)")
    try:
        value = _DECODER.decode(text)
        # a surrogate comes from a \\uD800-\\uDFFF escape, or from text that was never UTF-8
        suspect = bool(("\\u" in text and _SURROGATE_ESCAPE.search(text))
                       or _SURROGATE.search(text))
    except json.JSONDecodeError as e:
        pos = f"{loc}, column {e.colno}" if where else f"{name}, line {e.lineno}, column {e.colno}"
        raise InputError(f"{pos}: not valid JSON ({e.msg})") from None
    except _DuplicateKey:
        value, suspect = None, True
    except RecursionError:  # pragma: no cover - the depth scan refuses this first
        raise InputError(f"{loc}: JSON nested too deeply") from None
    if suspect:
        found = json_key_problem(text)
        if found is not None:
            line, problem = found
            raise InputError(f"{loc if where else f'{name}, line {line}'}, {problem}")
        if value is None:  # pragma: no cover - the scan finds what the parser saw
            raise InputError(f"{loc}: a key is given twice in one object")
    return value


class _BoundedLoader(yaml.SafeLoader):
    """A safe loader that counts aliases and the size of the expanded document while composing."""

    def __init__(self, stream: str, name: str):
        super().__init__(stream)
        self.name = name
        self.n_aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            self.n_aliases += 1
            if self.n_aliases > LIMITS["yaml_aliases"]:
                ev = self.peek_event()
                raise InputError(f"{self.name}, line {ev.start_mark.line + 1}: more than "
                                 f"{LIMITS['yaml_aliases']} YAML aliases (the limit; "
                                 "alias expansion is refused)")
        return super().compose_node(parent, index)


def _expanded_size(node: yaml.Node, name: str) -> int:
    """Nodes in the document once every alias is expanded (memoised; refuses cycles/depth,
    a key given twice in one mapping and a lone surrogate, each with its line and field)."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()
    limit, max_depth = LIMITS["yaml_nodes"], LIMITS["json_depth"]

    def size(n: yaml.Node, depth: int, path: tuple[str | int, ...] = ()) -> int:
        key = id(n)
        if isinstance(n, yaml.ScalarNode) and isinstance(n.value, str) \
                and has_surrogate(n.value):
            p = _field_path(list(path))
            raise InputError(f"{name}, line {n.start_mark.line + 1}, "
                             + (f"field {p!r} " if p else "the value ") + SURROGATE_MESSAGE)
        if key in sizes:
            return sizes[key]
        if key in busy:
            raise InputError(f"{name}, line {n.start_mark.line + 1}: a YAML alias refers to "
                             "itself (recursive structure)")
        if depth > max_depth:
            raise InputError(f"{name}, line {n.start_mark.line + 1}: YAML nested more than "
                             f"{max_depth} levels deep (the limit)")
        busy.add(key)
        total = 1
        if isinstance(n, yaml.SequenceNode):
            for i, child in enumerate(n.value):
                total += size(child, depth + 1, (*path, i))
                if total > limit:
                    break
        elif isinstance(n, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for k, v in n.value:
                label = str(k.value) if isinstance(k, yaml.ScalarNode) else "?"
                if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                    if (k.tag, k.value) in seen:
                        p = _field_path([*path, label])
                        raise InputError(f"{name}, line {k.start_mark.line + 1}, field {p!r}: "
                                         f"the key {label!r} is given twice in one mapping "
                                         "(only one value can be kept)")
                    seen.add((k.tag, k.value))
                total += size(k, depth + 1, path) + size(v, depth + 1, (*path, label))
                if total > limit:
                    break
        busy.discard(key)
        if total > limit:
            raise InputError(f"{name}: the YAML document expands to more than {limit:,} "
                             "values (the limit; alias expansion is refused)")
        sizes[key] = total
        return total

    return size(node, 0)


def load_yaml_text(text: str, name: str) -> Any:
    """One YAML document, parsed safely (no Python tags, aliases and expansion bounded)."""
    loader = _BoundedLoader(text, name)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, name)
        return loader.construct_document(node)
    except InputError:
        raise
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{name}{line}: not valid YAML ({e.problem or e})") from None
    except yaml.YAMLError as e:
        raise InputError(f"{name}: not valid YAML ({e})") from None
    except RecursionError:
        raise InputError(f"{name}: YAML nested too deeply") from None
    finally:
        loader.dispose()


_UNSAFE = re.compile(r"[^\w.\- ]+")
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
             *(f"lpt{i}" for i in range(1, 10))}


def safe_filename(name: str, default: str = "file") -> str:
    """A file name made from data: letters, digits, spaces, ``_``, ``-`` and ``.`` only, no
    leading dot, no path separator, at most ``LIMITS["filename_chars"]`` characters, never empty."""
    s = unicodedata.normalize("NFKC", str(name))
    s = " ".join(_UNSAFE.sub("_", s).split()).strip("._- ")
    s = re.sub(r"\.{2,}", ".", s)[: LIMITS["filename_chars"]].strip("._- ")
    if not s or s.split(".")[0].lower() in _RESERVED:
        s = f"{default}_{s}" if s else default
    return s


def safe_join(folder: str | Path, name: str) -> Path:
    """``folder / name`` after checking that the result stays inside ``folder``."""
    base = Path(folder).resolve()
    target = (base / name).resolve()
    if target.parent != base:
        raise InputError(f"{name!r}: refusing to write outside {base}")
    return target
