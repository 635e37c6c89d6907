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

import json
import re
from pathlib import Path
from typing import Any

import sqlite_utils
import yaml

from checkeval_core.checklists.model import add_question, ensure_dimension, ensure_sub, norm
from checkeval_core.store import dumps, loads, rows, task_id, transaction

FORMAT = "checkeval-studio/checklist-v1"
STRATEGIES = ("seed", "diversification", "elaboration")


class ChecklistError(ValueError):
    """A checklist file that cannot be imported; the message names the file and the problem."""


def split_questions(block: str) -> list[str]:
    """Split a folded string of questions after each ``?`` (the CheckEval authors' rule)."""
    parts = re.findall(r"[^?]*\?", str(block))
    return [norm(p) for p in parts if norm(p) not in ("", "?")]


def _yaml_file(path: Path) -> tuple[str, str, dict[str, Any]]:
    m = re.match(r"(.+)_(seed|diversification|elaboration)$", path.stem)
    dim, strategy = (m.group(1), m.group(2)) if m else (path.stem, "seed")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ChecklistError(f"{path.name}: not valid YAML ({e})") from None
    if not isinstance(data, dict) or "sub_aspect" not in data:
        raise ChecklistError(f"{path.name}: expected keys 'definition' and 'sub_aspect'")
    definition = data.get("definition") or ""
    if isinstance(definition, dict):
        definition = next(iter(definition.values()), "") or ""
    subs = data["sub_aspect"]
    if not isinstance(subs, dict):
        raise ChecklistError(f"{path.name}: 'sub_aspect' must map sub-aspect names to questions")
    out = {name: {strategy: split_questions(block if isinstance(block, str)
                                            else " ".join(map(str, block or [])))}
           for name, block in subs.items()}
    return dim, norm(definition), out


def read_checklist(path: str | Path) -> dict[str, Any]:
    """Any accepted input → ``{dim: {definition, sub_dimensions: {name: {description?,
    seed/diversification/elaboration: [...] | questions: [...]}}}}``."""
    p = Path(path)
    if not p.exists():
        raise ChecklistError(f"{p}: no such file or folder")
    if p.is_dir() or p.suffix.lower() in (".yaml", ".yml"):
        files = sorted(p.rglob("*.y*ml")) if p.is_dir() else [p]
        if not files:
            raise ChecklistError(f"{p}: no .yaml files in this folder")
        spec: dict[str, Any] = {}
        # seeds first so sub-dimension order follows the seed file
        files.sort(key=lambda f: (STRATEGIES.index(f.stem.rsplit("_", 1)[-1])
                                  if f.stem.rsplit("_", 1)[-1] in STRATEGIES else 0, f.name))
        for f in files:
            dim, definition, subs = _yaml_file(f)
            d = spec.setdefault(dim, {"definition": definition, "sub_dimensions": {}})
            d["definition"] = d["definition"] or definition
            for name, qs in subs.items():
                s = d["sub_dimensions"].setdefault(name, {})
                for strategy, lst in qs.items():
                    s.setdefault(strategy, []).extend(lst)
        return spec
    if p.suffix.lower() != ".json":
        raise ChecklistError(f"{p.name}: use a CheckEval .yaml file or folder, or a .json checklist")
    try:
        data = json.loads(p.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ChecklistError(f"{p.name}: not valid JSON ({e})") from None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        spec = {}
        for d in data.get("dimensions", []):
            subs = {}
            for s in d.get("sub_dimensions", []):
                subs[s["name"]] = {"description": s.get("description", ""),
                                   "questions": s.get("questions", [])}
            spec[d["name"]] = {"definition": d.get("definition", ""), "sub_dimensions": subs}
        return spec
    if not isinstance(data, dict) or not all(isinstance(v, dict) and "sub_dimensions" in v
                                             for v in data.values()):
        raise ChecklistError(f"{p.name}: expected {{dimension: {{definition, sub_dimensions}}}} "
                             f"or a {FORMAT} file")
    return data


def import_checklist(db: sqlite_utils.Database, task: str, path: str | Path,
                     author: str = "import") -> dict[str, Any]:
    """Import a checklist into ``task`` (atomic). Returns counts per dimension."""
    spec = read_checklist(path)
    tid = task_id(db, task)
    counts: dict[str, int] = {}
    with transaction(db):
        for dim, d in spec.items():
            dim_id = ensure_dimension(db, tid, dim, norm(d.get("definition", "")))
            existing = {q["text"]: q for q in rows(
                db, "SELECT id, text, origins FROM question WHERE dimension_id = ? "
                    "AND item_id IS NULL", [dim_id])}
            n_new = 0
            for sub, s in d.get("sub_dimensions", {}).items():
                sub_id = ensure_sub(db, dim_id, sub, s.get("description", ""))
                entries: list[tuple[str, dict[str, Any]]] = []
                if "questions" in s:  # our format: rich entries
                    entries = [(q.get("origin", "seed"), q) for q in s["questions"]]
                else:
                    for strategy in STRATEGIES:
                        entries += [(strategy, {"text": t}) for t in s.get(strategy, [])]
                seeds = [q["id"] for q in existing.values() if "seed" in loads(q["origins"], [])
                         and q.get("sub") == sub_id]
                for origin, q in entries:
                    text = norm(q["text"])
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
        from checkeval_core.checklists.versions import get_version

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
    from checkeval_core.checklists.model import dimensions, questions

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
    """The CheckEval authors' layout: ``{"<dim>_<origin>.yaml": text}`` for the kept questions."""
    from checkeval_core.checklists.model import dimensions, questions

    qs = [q for q in questions(db, task) if q["status"] == "kept"]
    files: dict[str, str] = {}
    for d in dimensions(db, task):
        for strategy in STRATEGIES:
            subs = {}
            for s in d["sub_dimensions"]:
                texts = [q["text"] for q in qs if q["sub_dimension_id"] == s["id"]
                         and (strategy in q["origins"] or (strategy == "seed"
                                                           and q["origin"] == "edited"))]
                if texts:
                    subs[s["name"]] = " ".join(texts)
            if subs:
                files[f"{d['name']}_{strategy}.yaml"] = yaml.safe_dump(
                    {"definition": {task: d["definition"]}, "sub_aspect": subs},
                    allow_unicode=True, sort_keys=False, width=1000)
    return files
