"""Importing and exporting checklists: the CheckEval authors' YAML layout and our JSON format.

Accepted inputs:

* a CheckEval YAML file ``<dimension>_<seed|diversification|elaboration>.yaml`` with
  ``definition: {<benchmark>: text}`` and ``sub_aspect: {<name>: "Q1? Q2? ..."}`` (a folded
  string split after each ``?``, as the authors' own code does), or a folder of such files;
* the authors' JSON shape ``{dim: {definition, sub_dimensions: {name: {seed: [...],
  diversification: [...], elaboration: [...]}}}}`` (``data/checklists/*.json``);
* the project's JSON format (``"format": "checkeval-studio/checklist-v1"``), written by
  :func:`export_checklist`.

Imported published questions are *kept*. A text repeated within a dimension (the published
elaboration files repeat their seeds) becomes ONE question recording every origin.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import sqlite_utils
import yaml

from checkeval_core.checklists.editing import (
    add_question,
    dimensions,
    ensure_dimension,
    ensure_sub,
    norm,
    questions,
)
from checkeval_core.checklists.versions import get_version
from checkeval_core.fields import NAME_CHARS, QUESTION_CHARS, check_name, check_text
from checkeval_core.safeio import (
    LIMITS,
    InputError,
    decode_text,
    load_json_text,
    load_yaml_text,
    read_bytes,
    safe_filename,
    too_big,
)
from checkeval_core.store import dumps, loads, rows, task_id, transaction
from checkeval_core.team import guarded

FORMAT = "checkeval-studio/checklist-v1"
STRATEGIES = ("seed", "diversification", "elaboration")
ORIGINS = ("seed", "diversification", "elaboration", "instance", "edited")
STATUSES = ("proposed", "kept", "filtered", "rejected")
MAX_NAME_CHARS = NAME_CHARS  # a dimension / sub-dimension name
MAX_TEXT_CHARS = QUESTION_CHARS  # a question, a definition, a description
MAX_FILES = 500  # YAML files in one folder


class ChecklistError(ValueError):
    """A checklist file that cannot be imported; the message names the file and the problem."""


def split_questions(block: str) -> list[str]:
    """Split a folded string of questions after each ``?`` (the CheckEval authors' rule).

    Text after the last ``?`` is not a question and is dropped, as in the authors' code.
    Linear time (``str.split``), whatever the input.
    """
    parts = str(block).split("?")
    return [norm(p + "?") for p in parts[:-1] if norm(p)]


def display_name(name: str | Path) -> str:
    """The last component of a client-sent file name (``../../x.json`` → ``x.json``), for
    messages and for the format; never used as a path."""
    return PurePosixPath(str(name).replace("\\", "/")).name or "upload"


def _text(value: Any, where: str, limit: int = MAX_TEXT_CHARS, required: bool = False) -> str:
    """The field rule of :func:`checkeval_core.fields.check_text`, normalised, as a
    checklist error."""
    try:
        value = norm(check_text(value, where, limit))
    except InputError as e:
        raise ChecklistError(str(e)) from None
    if required and not value:
        raise ChecklistError(f"{where}: must not be empty")
    return value


def _name(value: Any, where: str) -> str:
    """A dimension or sub-dimension name: the text rule, then the app's name rule (no control
    characters), as for every other name (:func:`checkeval_core.fields.check_name`)."""
    text = _text(value, where, MAX_NAME_CHARS, True)
    try:
        return check_name(text, where, "name")
    except InputError as e:
        raise ChecklistError(str(e)) from None


def _yaml_spec(name: str, data: bytes) -> tuple[str, str, dict[str, list[dict[str, Any]]]]:
    """One CheckEval YAML file → (dimension, definition, {sub: [question entries]})."""
    m = re.match(r"(.+)_(seed|diversification|elaboration)$", PurePosixPath(name).stem)
    dim, strategy = (m.group(1), m.group(2)) if m else (PurePosixPath(name).stem, "seed")
    try:
        parsed = load_yaml_text(decode_text(data, name), name)
    except InputError as e:
        raise ChecklistError(str(e)) from None
    if not isinstance(parsed, dict) or "sub_aspect" not in parsed:
        raise ChecklistError(f"{name}: expected keys 'definition' and 'sub_aspect'")
    definition = parsed.get("definition") or ""
    if isinstance(definition, dict):
        definition = next(iter(definition.values()), "") or ""
    definition = _text(definition, f"{name}, field 'definition'")
    subs = parsed["sub_aspect"]
    if not isinstance(subs, dict):
        raise ChecklistError(f"{name}, field 'sub_aspect': must map sub-aspect names to "
                             "questions")
    out: dict[str, list[dict[str, Any]]] = {}
    for sub, block in subs.items():
        where = f"{name}, field 'sub_aspect.{sub}'"
        sub = _name(str(sub), f"{name}, field 'sub_aspect' (a name)")
        if block is None:
            block = ""
        if isinstance(block, list):
            if not all(isinstance(x, str) for x in block):
                raise ChecklistError(f"{where}: expected a text or a list of texts")
            block = " ".join(block)
        if not isinstance(block, str):
            raise ChecklistError(f"{where}: expected a text of questions, got "
                                 f"{type(block).__name__}")
        texts = split_questions(block)
        long = next((t for t in texts if len(t) > MAX_TEXT_CHARS), None)
        if long is not None:
            raise ChecklistError(f"{where}: a question of {len(long):,} characters is more "
                                 f"than the {MAX_TEXT_CHARS:,} allowed")
        out[sub] = [{"text": t, "origin": strategy} for t in texts]
    return _name(dim, f"{name} (the dimension from the file name)"), definition, out


def _named_objects(value: Any, where: str, field: str, sep: str,
                   kind: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Each object of the list ``field`` with its location and its name: a value that is not a
    list, an entry that is not an object, or a name given twice is refused with its place."""
    if not isinstance(value, list):
        raise ChecklistError(f"{where}, field '{field}': expected a list")
    seen: set[str] = set()
    for i, obj in enumerate(value):
        w = f"{where}{sep}{field}[{i}]"
        if not isinstance(obj, dict):
            raise ChecklistError(f"{w}: expected an object, got {type(obj).__name__}")
        n = _name(obj.get("name"), f"{w}, field 'name'")
        if n in seen:
            raise ChecklistError(f"{w}, field 'name': {kind} {n!r} is listed twice")
        seen.add(n)
        yield w, n, obj


def _project_spec(name: str, data: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for w, dn, d in _named_objects(data.get("dimensions"), name, "dimensions", ", ",
                                   "dimension"):
        subs: dict[str, Any] = {}
        for ws, sn, s in _named_objects(d.get("sub_dimensions", []), w, "sub_dimensions", ".",
                                        "sub-dimension"):
            qs_in = s.get("questions", [])
            if not isinstance(qs_in, list):
                raise ChecklistError(f"{ws}, field 'questions': expected a list")
            qs = []
            for k, q in enumerate(qs_in):
                wq = f"{ws}.questions[{k}]"
                if isinstance(q, str):
                    q = {"text": q}
                if not isinstance(q, dict):
                    raise ChecklistError(f"{wq}: expected an object, got {type(q).__name__}")
                entry: dict[str, Any] = {"text": _text(q.get("text"), f"{wq}, field 'text'")}
                origin = q.get("origin", "seed")
                if origin not in ORIGINS:
                    raise ChecklistError(f"{wq}, field 'origin': {str(origin)[:40]!r} is not "
                                         f"one of {', '.join(ORIGINS)}")
                entry["origin"] = origin
                origins = q.get("origins", [origin])
                if not isinstance(origins, list) or any(o not in ORIGINS for o in origins):
                    raise ChecklistError(f"{wq}, field 'origins': expected a list of "
                                         f"{', '.join(ORIGINS)}")
                entry["origins"] = list(origins) or [origin]
                status = q.get("status", "kept")
                if status not in STATUSES:
                    raise ChecklistError(f"{wq}, field 'status': {str(status)[:40]!r} is not "
                                         f"one of {', '.join(STATUSES)}")
                entry["status"] = status
                for f in ("author", "model", "prompt_version", "reason"):
                    if f in q:
                        entry[f] = _text(q[f], f"{wq}, field {f!r}")
                qs.append(entry)
            subs[sn] = {"description": _text(s.get("description"), f"{ws}, field "
                                                                       "'description'"),
                        "questions": qs}
        spec[dn] = {"definition": _text(d.get("definition"), f"{w}, field 'definition'"),
                    "sub_dimensions": subs}
    return spec


def _authors_spec(name: str, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or not data or not all(
            isinstance(v, dict) and "sub_dimensions" in v for v in data.values()):
        raise ChecklistError(f"{name}: expected {{dimension: {{definition, sub_dimensions}}}} "
                             f"or a {FORMAT} file")
    spec: dict[str, Any] = {}
    for dn, d in data.items():
        w = f"{name}, dimension {dn[:60]!r}"
        dn = _name(dn, f"{w} (its name)")
        subs_in = d["sub_dimensions"]
        if not isinstance(subs_in, dict):
            raise ChecklistError(f"{w}, field 'sub_dimensions': expected an object "
                                 "{name: {seed: [...], ...}}")
        subs: dict[str, Any] = {}
        for sn, s in subs_in.items():
            ws = f"{w}, sub-dimension {sn[:60]!r}"
            sn = _name(sn, f"{ws} (its name)")
            if not isinstance(s, dict):
                raise ChecklistError(f"{ws}: expected an object {{seed: [...], ...}}")
            qs = []
            for strategy in STRATEGIES:
                lst = s.get(strategy, [])
                if not isinstance(lst, list):
                    raise ChecklistError(f"{ws}, field {strategy!r}: expected a list of texts")
                for k, t in enumerate(lst):
                    qs.append({"text": _text(t, f"{ws}, field '{strategy}[{k}]'"),
                               "origin": strategy})
            subs[sn] = {"description": _text(s.get("description"), f"{ws}, field "
                                                                       "'description'"),
                        "questions": qs}
        spec[dn] = {"definition": _text(d.get("definition"), f"{w}, field 'definition'"),
                    "sub_dimensions": subs}
    return spec


def _n_questions(d: dict[str, Any]) -> int:
    return sum(1 for s in d["sub_dimensions"].values() for q in s["questions"] if q["text"])


def _check_counts(spec: dict[str, Any], name: str, every_dimension: bool) -> dict[str, Any]:
    total = sum(_n_questions(d) for d in spec.values())
    if total == 0:
        raise ChecklistError(f"{name}: the file holds no question (nothing imported)")
    if total > LIMITS["questions"]:
        raise ChecklistError(f"{name}: {total:,} questions is more than the "
                             f"{LIMITS['questions']:,} allowed in one import")
    if every_dimension:
        empty = [dn for dn, d in spec.items() if not _n_questions(d)]
        if empty:
            raise ChecklistError(f"{name}: dimension {empty[0]!r} has no question (nothing "
                                 "imported)")
    return spec


def read_checklist_data(data: bytes, filename: str) -> dict[str, Any]:
    """Parse one uploaded checklist file from memory. ``filename`` only names the format
    (``.json``/``.yaml``/``.yml``; a YAML file's stem gives its dimension) and the messages.

    Returns ``{dim: {definition, sub_dimensions: {name: {description, questions: [{text,
    origin, ...}]}}}}``; raises :class:`ChecklistError` (file, field) on any problem.
    """
    name = display_name(filename)
    suffix = PurePosixPath(name).suffix.lower()
    if len(data) > LIMITS["checklist_bytes"]:
        raise ChecklistError(str(too_big(name, len(data), LIMITS["checklist_bytes"])))
    if suffix in (".yaml", ".yml"):
        dim, definition, subs = _yaml_spec(name, data)
        spec = {dim: {"definition": definition, "sub_dimensions": {
            s: {"description": "", "questions": qs} for s, qs in subs.items()}}}
        return _check_counts(spec, name, every_dimension=True)
    if suffix == ".jsonl":
        raise ChecklistError(f"{name}: a .jsonl file holds per-query (RocketEval) checklists; "
                             "import it with `checkeval checklist instance-import FILE --task "
                             "TASK` (or the per-query upload on the Checklist review page)")
    if suffix != ".json":
        raise ChecklistError(f"{name}: use a CheckEval .yaml file or folder, or a .json "
                             "checklist")
    try:
        parsed = load_json_text(decode_text(data, name), name)
    except InputError as e:
        raise ChecklistError(str(e)) from None
    if isinstance(parsed, dict) and parsed.get("format") == FORMAT:
        return _check_counts(_project_spec(name, parsed), name, every_dimension=False)
    return _check_counts(_authors_spec(name, parsed), name, every_dimension=True)


def read_checklist(path: str | Path) -> dict[str, Any]:
    """A checklist file or a folder of CheckEval YAML files on disk (see
    :func:`read_checklist_data` for the result)."""
    p = Path(path)
    if not p.exists():
        raise ChecklistError(f"{p}: no such file or folder")
    if not p.is_dir():
        try:
            data = read_bytes(p, LIMITS["checklist_bytes"])
        except InputError as e:
            raise ChecklistError(str(e)) from None
        return read_checklist_data(data, p.name)
    files = sorted(f for f in p.rglob("*.y*ml") if f.suffix.lower() in (".yaml", ".yml"))
    if not files:
        raise ChecklistError(f"{p}: no .yaml files in this folder")
    if len(files) > MAX_FILES:
        raise ChecklistError(f"{p}: more than {MAX_FILES} YAML files (the limit)")
    # seeds first so sub-dimension order follows the seed file
    files.sort(key=lambda f: (STRATEGIES.index(f.stem.rsplit("_", 1)[-1])
                              if f.stem.rsplit("_", 1)[-1] in STRATEGIES else 0, f.name))
    spec: dict[str, Any] = {}
    total = 0
    for f in files:
        try:
            data = read_bytes(f, LIMITS["checklist_bytes"])
        except InputError as e:
            raise ChecklistError(str(e)) from None
        total += len(data)
        if total > LIMITS["checklist_bytes"]:
            raise ChecklistError(str(too_big(f"{p.name} (all YAML files)", total,
                                             LIMITS["checklist_bytes"])))
        dim, definition, subs = _yaml_spec(f.name, data)
        d = spec.setdefault(dim, {"definition": definition, "sub_dimensions": {}})
        d["definition"] = d["definition"] or definition
        for sub, qs in subs.items():
            d["sub_dimensions"].setdefault(sub, {"description": "", "questions": []})[
                "questions"].extend(qs)
    return _check_counts(spec, p.name, every_dimension=True)


@guarded("checklist.edit")
def import_checklist(db: sqlite_utils.Database, task: str, path: str | Path,
                     author: str = "import", data: bytes | None = None) -> dict[str, Any]:
    """Import a checklist into ``task`` (atomic). Returns counts per dimension.

    With ``data`` (an upload's bytes) nothing is read from disk and ``path`` is only the
    client's file name, used for the format and in messages — never as a path.
    """
    spec = read_checklist(path) if data is None else read_checklist_data(data, str(path))
    tid = task_id(db, task)
    counts: dict[str, int] = {}
    with transaction(db):
        for dim, d in spec.items():
            dim_id = ensure_dimension(db, tid, dim, d["definition"])
            existing = {q["text"]: q for q in rows(
                db, "SELECT id, text, origins, sub_dimension_id AS sub FROM question "
                    "WHERE dimension_id = ? AND item_id IS NULL", [dim_id])}
            n_new = 0
            for sub, s in d["sub_dimensions"].items():
                sub_id = ensure_sub(db, dim_id, sub, s["description"])
                seeds = [q["id"] for q in existing.values() if "seed" in loads(q["origins"], [])
                         and q.get("sub") == sub_id]
                for q in s["questions"]:
                    text, origin = q["text"], q["origin"]
                    if not text:
                        continue
                    if text in existing:
                        origins = loads(existing[text]["origins"], [])
                        for o in q.get("origins", [origin]):
                            if o not in origins:
                                origins.append(o)
                        existing[text]["origins"] = dumps(origins)
                        db.execute("UPDATE question SET origins = ? WHERE id = ?",
                                   [dumps(origins), existing[text]["id"]])
                        continue
                    parent = seeds[0] if origin == "elaboration" and len(seeds) == 1 else None
                    qid = add_question(db, tid, dim_id, sub_id, text, origin=origin,
                                       status=q.get("status", "kept"), parent_id=parent,
                                       author=q.get("author", author), model=q.get("model", ""),
                                       prompt_version=q.get("prompt_version", ""),
                                       reason=q.get("reason", ""))
                    origins = q.get("origins") or [origin]
                    db.execute("UPDATE question SET origins = ? WHERE id = ?",
                               [dumps(origins), qid])
                    existing[text] = {"id": qid, "text": text, "origins": dumps(origins),
                                      "sub": sub_id}
                    if origin == "seed":
                        seeds.append(qid)
                    n_new += 1
            counts[dim] = n_new
    return {"task": task, "dimensions": counts, "n_questions": sum(counts.values())}


def export_checklist(db: sqlite_utils.Database, task: str,
                     version: int | str | None = None) -> dict[str, Any]:
    """The project's JSON format: the working checklist, or a frozen version's content."""
    if version is not None:
        v = get_version(db, task, version)
        content = v["content"]
        dims = []
        for d in content["dimensions"]:
            subs = []
            for s in d["sub_dimensions"]:
                qs = [{"text": q["text"], "origin": q["origin"], "status": "kept"}
                      for q in content["questions"]
                      if q["dimension"] == d["name"] and q["sub_dimension"] == s["name"]]
                subs.append({"name": s["name"], "description": s.get("description", ""),
                             "questions": qs})
            dims.append({"name": d["name"], "definition": d.get("definition", ""),
                         "sub_dimensions": subs})
        return {"format": FORMAT, "task": task, "version": v["version"], "hash": v["hash"],
                "dimensions": dims}
    qs = questions(db, task)
    dims = []
    for d in dimensions(db, task):
        subs = []
        for s in d["sub_dimensions"]:
            subs.append({"name": s["name"], "description": s["description"], "questions": [
                {"text": q["text"], "origin": q["origin"], "origins": q["origins"],
                 "status": q["status"], "reason": q["reason"], "author": q["author"],
                 "model": q["model"], "prompt_version": q["prompt_version"]}
                for q in qs if q["sub_dimension_id"] == s["id"]]})
        dims.append({"name": d["name"], "definition": d["definition"], "sub_dimensions": subs})
    return {"format": FORMAT, "task": task, "dimensions": dims}


def export_yaml_files(db: sqlite_utils.Database, task: str) -> dict[str, str]:
    """The CheckEval authors' layout: ``{"<dim>_<origin>.yaml": text}`` for the kept questions.

    File names come from dimension names through :func:`safe_filename` (no ``/``, no ``..``),
    so they stay inside the folder they are written to."""
    qs = [q for q in questions(db, task) if q["status"] == "kept"]
    files: dict[str, str] = {}
    stems: set[str] = set()
    for d in dimensions(db, task):
        stem = safe_filename(d["name"], default="dimension")
        while stem.lower() in stems:  # two names sanitised alike
            stem += "-2"
        stems.add(stem.lower())
        for strategy in STRATEGIES:
            subs = {}
            for s in d["sub_dimensions"]:
                texts = [q["text"] for q in qs if q["sub_dimension_id"] == s["id"]
                         and (strategy in q["origins"] or (strategy == "seed"
                                                           and q["origin"] == "edited"))]
                if texts:
                    subs[s["name"]] = " ".join(texts)
            if subs:
                files[f"{stem}_{strategy}.yaml"] = yaml.safe_dump(
                    {"definition": {task: d["definition"]}, "sub_aspect": subs},
                    allow_unicode=True, sort_keys=False, width=1000)
    return files
