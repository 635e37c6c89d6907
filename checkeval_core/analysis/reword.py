"""Align → *Propose a rewording*: a question rewritten from the items on which the judge and
people disagreed (AutoRubric's rewrite from false-positive and false-negative examples), answered
on dev, reported on held-out, and queued for review as an edit.

1. **Examples (dev only)**: the run's answers to the question beside people's majority answer
   (:func:`checkeval_core.analysis.align.human_labels`) on dev items — up to
   :data:`MAX_EXAMPLES` false positives (judge Yes, people No) and false negatives (judge No,
   people Yes), their outputs shortened.
2. **The rewording**: ``judge`` writes one question from them (prompt ``REWORD``); an answer
   that is not a question, or repeats the question, is refused with what it said.
3. **Measured**: the same judge answers the old and the new wording, with the task's Yes/No
   prompt, on every item people labelled for this question — so the difference is the
   wording's. On dev: each wording's agreement with people (share of items, group interval).
   On held-out: Δ = agreement(new) − agreement(old), its paired group-bootstrap interval, the
   smallest change it could detect and the verdict (:func:`checkeval_core.stats.bootstrap.
   delta_fields`); below ``MIN_GROUPS`` held-out groups, no verdict.
4. **To review**: a new question (origin ``edited``, parent = the old one, status ``proposed``,
   its reason the held-out verdict) and an ``analysis`` line in its review history with the
   figures. The old question is left as it is; pressing twice adds nothing twice.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import sqlite_utils

from checkeval_core.analysis.align import human_labels, run_answers
from checkeval_core.checklists.augment import subject_noun
from checkeval_core.checklists.editing import add_question, norm
from checkeval_core.checklists.parse import parse_questions, question_flags
from checkeval_core.checklists.review import record_event
from checkeval_core.judges.base import GenerateRequest
from checkeval_core.judges.fake import register_fake_generator
from checkeval_core.judges.registry import get_judge
from checkeval_core.judges.spec import is_small_model
from checkeval_core.prompts import checklist as P
from checkeval_core.prompts.judge import binary_request_for_item
from checkeval_core.runs.jobs import get_run
from checkeval_core.stats.bootstrap import (
    delta_fields,
    paired_group_bootstrap,
    ratio_of_sums,
    share_ci,
)
from checkeval_core.stats.values import pct
from checkeval_core.store import rows, transaction
from checkeval_core.task_split import in_part, part_members
from checkeval_core.tasks import get_task, items
from checkeval_core.team import guarded

MAX_EXAMPLES = 3
OUTPUT_CHARS = 600
N_BOOT = 200


def _labelled(db: sqlite_utils.Database, run: dict[str, Any], question_id: int
              ) -> pd.DataFrame:
    """The run's Yes/No answers to the question on items people labelled: item_pk, group,
    system, verdict, human, part (dev / heldout)."""
    groups, systems = part_members(db, run["task"], "dev")  # type: ignore[misc]
    ans = run_answers(db, run["id"])
    ans = ans[(ans["question_id"] == question_id) & ans["verdict"].isin(["yes", "no"])]
    lab = human_labels(db, run["task_id"]).dropna(subset=["human"])
    df = ans.merge(lab[lab["question_id"] == question_id], on=["item_pk", "question_id"])
    df["part"] = ["dev" if in_part(g, s, "dev", groups, systems) else
                  "heldout" if in_part(g, s, "heldout", groups, systems) else ""
                  for g, s in zip(df["group"], df["system"])]
    return df[df["part"] != ""]


def _examples(db: sqlite_utils.Database, task: str, df: pd.DataFrame, judge: str, human: str
              ) -> list[dict[str, Any]]:
    pick = df[(df["part"] == "dev") & (df["verdict"] == judge) & (df["human"] == human)]
    pick = pick.sort_values("item_pk").head(MAX_EXAMPLES)
    its = {i["pk"]: i for i in items(db, task, pks=[int(x) for x in pick["item_pk"]])}
    return [{"item_pk": int(p), "item_id": its[int(p)]["item_id"],
             "output": _cut(its[int(p)]["output"])} for p in pick["item_pk"]]


def _cut(text: str) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= OUTPUT_CHARS else text[:OUTPUT_CHARS].rsplit(" ", 1)[0] + " …"


def _agreement(df: pd.DataFrame, col: str, n_boot: int, seed: int) -> dict[str, Any]:
    per = df.assign(hit=(df[col] == df["human"]).astype(float)).groupby("group")["hit"]
    fig = share_ci(per.sum().to_numpy(), per.count().to_numpy(), n_boot, seed)
    return {**fig.brief(), "n_groups": fig.n_groups}


@guarded("checklist.edit", self_param="actor")
def propose_rewording(db: sqlite_utils.Database, run_id: int, question_id: int, judge: str,
                      n_boot: int = N_BOOT, seed: int = 0, judge_obj: Any = None,
                      actor: str = "") -> dict[str, Any]:
    """See the module doc. Returns ``{"question_id", "old_text", "new_text", "new_question",
    "created", "false_positives", "false_negatives", "dev": {"old", "new"}, "heldout":
    {"old", "new", "delta", "ci", "ci_reason", "mde", "verdict", "n_groups", "n_items"},
    "requests", "from_cache"}``. Raises ``ValueError`` (no split, no disagreement on dev, an
    unusable answer) before anything is written."""
    run = get_run(db, run_id)
    q = rows(db, "SELECT q.id, q.text, q.task_id, q.dimension_id, q.sub_dimension_id, d.name AS "
                 "dimension FROM question q LEFT JOIN dimension d ON d.id = q.dimension_id "
                 "WHERE q.id = ?", [question_id])
    if not q or q[0]["task_id"] != run["task_id"]:
        raise ValueError(f"run {run_id}'s task has no question #{question_id}")
    q = q[0]
    task = run["task"]
    kind = get_task(db, task)["kind"]
    noun = subject_noun(kind)
    df = _labelled(db, run, question_id)
    fp = _examples(db, task, df, "yes", "no")
    fn = _examples(db, task, df, "no", "yes")
    if not fp and not fn:
        raise ValueError(f"question #{question_id}: the judge and people agree on every dev item "
                         "they both answered: there is nothing to learn a rewording from")
    def block(tpl: str, ex: list[dict[str, Any]]) -> str:
        return tpl.format(noun=noun, examples="\n".join(f"- {e['output']}" for e in ex)) \
            if ex else ""
    user = P.REWORD.format(question=q["text"], dimension=q["dimension"] or "", noun=noun,
                           false_positives=block(P.REWORD_FP, fp),
                           false_negatives=block(P.REWORD_FN, fn))
    j = judge_obj or get_judge(judge, db=db)
    req = GenerateRequest.chat(P.REWORD_SYSTEM.format(noun=noun), user, max_tokens=80,
                               purpose="reword", payload={"question": q["text"], "noun": noun},
                               **({"grammar": P.QUESTION_GRAMMAR} if is_small_model(judge)
                                  else {}))
    res = j.generate([req])[0]
    if res.error:
        raise ValueError(f"the judge failed to write a rewording: {res.error}")
    parsed, _ = parse_questions(res.text)
    if not parsed:
        raise ValueError(f"no question could be read from the judge's answer: {res.text[:200]!r}")
    new_text = norm(parsed[0])
    if new_text.lower() == q["text"].lower():
        raise ValueError(f"the judge repeated the question instead of rewording it: {new_text}")
    # both wordings, same judge and prompt, on every item people labelled
    its = {i["pk"]: i for i in items(db, task, pks=[int(x) for x in df["item_pk"]])}
    reqs = [binary_request_for_item(its[int(p)], t, kind)
            for t in (q["text"], new_text) for p in df["item_pk"]]
    out = j.binary(reqs) if reqs else []
    n = len(df)
    df = df.assign(old=[r.verdict for r in out[:n]], new=[r.verdict for r in out[n:]])
    dev, held = df[df["part"] == "dev"], df[df["part"] == "heldout"]
    figures = {"dev": {w: _agreement(dev, w, n_boot, seed) for w in ("old", "new")}}
    figures["heldout"] = _heldout(held, n_boot, seed)
    created, new_id = _to_review(db, q, new_text, judge, actor, fp, fn, figures, run_id)
    return {"question_id": question_id, "old_text": q["text"], "new_text": new_text,
            "new_question": new_id, "created": created, "flags": question_flags(new_text),
            "false_positives": fp, "false_negatives": fn, **figures,
            "requests": 1 + len(reqs), "from_cache": int(bool(res.cached))
            + sum(bool(r.cached) for r in out)}


def _heldout(held: pd.DataFrame, n_boot: int, seed: int) -> dict[str, Any]:
    groups = sorted(set(held["group"]))
    if not groups:
        return {"old": math.nan, "new": math.nan, "delta": math.nan, "ci": [math.nan, math.nan],
                "ci_reason": "no held-out item has people's answer to this question",
                "mde": math.nan, "verdict": "no verdict: no held-out item people answered",
                "n_groups": 0, "n_items": 0}
    g = held.groupby("group")
    cnt = g.size().reindex(groups).to_numpy(float)
    old = g.apply(lambda x: float((x["old"] == x["human"]).sum())).reindex(groups).to_numpy()
    new = g.apply(lambda x: float((x["new"] == x["human"]).sum())).reindex(groups).to_numpy()
    boot = paired_group_bootstrap(len(groups), ratio_of_sums(old, cnt), ratio_of_sums(new, cnt),
                                  n_boot, seed)
    a, b = float(old.sum() / cnt.sum()), float(new.sum() / cnt.sum())
    return {"old": a, "new": b, **delta_fields(b - a, boot, "held-out"),
            "n_groups": len(groups), "n_items": int(cnt.sum())}


def _to_review(db: sqlite_utils.Database, q: dict[str, Any], new_text: str, judge: str,
               actor: str, fp: list, fn: list, figures: dict[str, Any], run_id: int
               ) -> tuple[bool, int]:
    h = figures["heldout"]
    why = (f"rewording proposed from {len(fp)} false positive(s) and {len(fn)} false "
           f"negative(s) on dev; held-out agreement {pct(h['old'])} → {pct(h['new'])}: "
           f"{h['verdict']}")[:500]
    with transaction(db):
        same = db.execute("SELECT id FROM question WHERE parent_id = ? AND origin = 'edited' AND "
                          "text = ? ORDER BY id LIMIT 1", [q["id"], new_text]).fetchone()
        if same:
            return False, same[0]
        new_id = add_question(db, q["task_id"], q["dimension_id"], q["sub_dimension_id"],
                              new_text, origin="edited", status="proposed", parent_id=q["id"],
                              author="llm", model=judge, prompt_version=P.REWORD_PROMPT_VERSION,
                              flags=question_flags(new_text), reason=why)
        record_event(db, q["task_id"], "analysis", "propose_rewording", actor=actor, reason=why,
                     question_id=new_id, detail={
                         "from_question": q["id"], "run": run_id, "judge": judge,
                         "false_positives": [e["item_id"] for e in fp],
                         "false_negatives": [e["item_id"] for e in fn],
                         "dev": {w: _num(figures["dev"][w]["value"]) for w in ("old", "new")},
                         "heldout": {k: _num(h[k]) for k in ("old", "new", "delta", "mde")},
                         "verdict": h["verdict"]})
    return True, new_id


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _fake_reword(req: GenerateRequest) -> str:
    """The fake judge's rewording: the question made concrete with a fixed clause."""
    q = str(req.payload.get("question", "Is the text good?")).rstrip("?")
    return f"{q}, judging only what the {req.payload.get('noun', 'text')} states explicitly?"


register_fake_generator("reword", _fake_reword)
