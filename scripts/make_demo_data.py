"""Re-create the bundled demo data in ``data/`` from the shared benchmark files.

Usage: ``python scripts/make_demo_data.py [--src ../shared/benchmarks] [--docs 12] [--contexts 12]
[--queries 8]``

Writes ``data/summeval_demo.jsonl`` (first N documents × all 16 systems),
``data/topical_chat_demo.jsonl`` (first N contexts × 6 responses), copies the CheckEval
authors' published checklists to ``data/checklists/``, and writes the instruction-following
demo: ``data/alpacaeval_demo.jsonl`` (the first N AlpacaEval queries of the shared
sample × the 12 test models), ``data/alpacaeval_demo_models.json`` (their Chatbot Arena Elo)
and ``data/checklists/alpacaeval_author.jsonl`` (the author-written checklists of those
queries). Deterministic: same input, same bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _make_writable(root: Path) -> None:
    """The shared benchmark folder is read-only; our copies must not be."""
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--src", default=str(REPO.parent / "shared" / "benchmarks"))
    ap.add_argument("--out", default=str(REPO / "data"))
    ap.add_argument("--docs", type=int, default=12)
    ap.add_argument("--contexts", type=int, default=12)
    ap.add_argument("--queries", type=int, default=8)
    a = ap.parse_args()
    src, out = Path(a.src), Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    docs: list[str] = []
    summ = []
    for line in (src / "summeval.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["doc_id"] not in docs:
            if len(docs) == a.docs:
                continue
            docs.append(r["doc_id"])
        summ.append({
            "id": f"{r['doc_id'][8:20]}-{r['system_id']}",
            "group_id": r["doc_id"],
            "system_id": r["system_id"],
            "source": r["source"],
            "reference": r["reference"],
            "output": r["output"],
            "scores": r["scores"],
        })
    (out / "summeval_demo.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in summ), encoding="utf-8")

    tc = []
    for line in (src / "topical_chat.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["context_id"] >= a.contexts:
            continue
        tc.append({
            "id": r["id"],
            "group_id": f"context-{r['context_id']:02d}",
            "system_id": r["system_id"],
            "context": r["context"],
            "fact": r["fact"],
            "output": r["output"],
            "scores": r["scores"],
        })
    (out / "topical_chat_demo.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in tc), encoding="utf-8")

    ck = out / "checklists"
    ck.mkdir(exist_ok=True)
    for name in ("summeval.json", "topical_chat.json"):
        shutil.copyfile(src / "checklists" / name, ck / name)
    if (ck / "raw").exists():
        _make_writable(ck / "raw")
        shutil.rmtree(ck / "raw")
    shutil.copytree(src / "checklists" / "raw", ck / "raw", copy_function=shutil.copyfile)
    _make_writable(ck / "raw")
    n_ae = _alpacaeval(src / "alpacaeval", out, a.queries)
    print(f"wrote {len(summ)} SummEval rows ({len(docs)} documents), {len(tc)} Topical-Chat rows,"
          f" {n_ae} AlpacaEval rows ({a.queries} queries × the test models)")


def _jsonl(path: Path, recs: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs),
                    encoding="utf-8")


def _alpacaeval(src: Path, out: Path, n_queries: int) -> int:
    """The instruction-following demo: items ``<instruction_id>:<system_id>`` (group = the
    query), the test models' Arena Elo, the author-written checklists of the queries."""
    ins = [json.loads(x) for x in (src / "instructions.jsonl").read_text("utf-8").splitlines()]
    ins = ins[:n_queries]
    by_id = {i["instruction_id"]: i for i in ins}
    models = [m for m in json.loads((src / "models.json").read_text("utf-8"))
              if m["split"] == "test"]
    test = {m["system_id"] for m in models}
    resp = [json.loads(x) for x in (src / "responses.jsonl").read_text("utf-8").splitlines()]
    rows = [{"id": r["id"], "group_id": r["instruction_id"], "system_id": r["system_id"],
             "input": by_id[r["instruction_id"]]["instruction"],
             "reference": by_id[r["instruction_id"]]["reference"], "output": r["output"]}
            for r in resp if r["instruction_id"] in by_id and r["system_id"] in test]
    order = {i["instruction_id"]: k for k, i in enumerate(ins)}
    sys_order = {m["system_id"]: k for k, m in enumerate(models)}
    rows.sort(key=lambda r: (order[r["group_id"]], sys_order[r["system_id"]]))
    _jsonl(out / "alpacaeval_demo.jsonl", rows)
    (out / "alpacaeval_demo_models.json").write_text(
        json.dumps(models, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    ck = [json.loads(x) for x in (src / "checklists_author.jsonl").read_text("utf-8").splitlines()]
    _jsonl(out / "checklists" / "alpacaeval_author.jsonl",
           sorted((c for c in ck if c["instruction_id"] in by_id),
                  key=lambda c: order[c["instruction_id"]]))
    return len(rows)


if __name__ == "__main__":
    main()
