"""Bench (not a test): CPU time of the input parsers on hostile text.

Usage: ``.venv/bin/python -m checkeval_core.bench.input_parsing [--before]``. ``--before`` also times the
former regexes (quadratic: 160 KB takes ~20 s of CPU, so 1 MB is left out of it).
CPU time (``time.process_time``), so a loaded machine does not inflate the numbers.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable

from checkeval_core.checklists.io import read_checklist_data, split_questions
from checkeval_core.checklists.parse import parse_questions
from checkeval_core.jsontext import find_json
from checkeval_core.safeio import load_json_text, load_yaml_text

BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def cpu(label: str, fn: Callable[..., object], *args: object) -> None:
    t = time.process_time()
    try:
        fn(*args)
    except ValueError:  # the refusals (InputError, ChecklistError) are the point
        pass
    print(f"{label:<58} {time.process_time() - t:9.4f} s CPU")


def main(before: bool) -> None:
    for n in (160_000, 1_000_000):
        text = ("word " * (n // 5 + 1))[:n]
        cpu(f"split_questions, {n:,} B without '?'", split_questions, text)
        yml = ("sub_aspect:\n  s: " + text + "\n").encode()
        cpu(f"YAML checklist upload, {n:,} B without '?'",
            read_checklist_data, yml, "c_seed.yaml")
        cpu(f"find_json, {n:,} x '['", find_json, "[" * n)
        arr = "[" + "1," * (n // 4) + "]" * (n // 2)
        cpu(f"parse_questions, {len(arr):,} B of '[1,1,...]]]]'", parse_questions, arr)
        if before and n < 1_000_000:
            cpu(f"BEFORE split regex, {n:,} B without '?'",
                re.findall, r"[^?]*\?", text)
            cpu("BEFORE find_json regex, 40,000 x '['",
                re.compile(r"[\[{].*[\]}]", re.DOTALL).search, "[" * 40_000)
    cpu(f"YAML alias bomb ({len(BOMB)} B), refused", load_yaml_text, BOMB, "b.yaml")
    deep = "[" * 100_000 + "]" * 100_000
    cpu("JSON nested 100,000 deep, refused", load_json_text, deep, "d.json")


if __name__ == "__main__":
    main("--before" in sys.argv)
