"""The documentation holds together: every relative link in README.md and docs/ reaches a file
(and, with ``#anchor``, a heading of it, as GitHub names headings), and docs/benchmarks.md stays
a readable size and names no machine's paths."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
#: The most docs/benchmarks.md may weigh: one line of date and load per section, each figure
#: once with its command, machine, date and interval; older runs stay in git history.
BENCHMARKS_MAX_BYTES = 60_000
#: Paths of the measuring machine: an absolute home, work or temporary folder, or a folder
#: beside the repository (``../shared/…``).
MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:home|work|root|tmp|Users|mnt|scratch|opt|data)/\S+"
                          r"|(?<![\w.])\.\./\S+")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, letters / digits / ``_`` / ``-`` / spaces
    kept (other characters dropped), spaces as ``-``."""
    text = heading.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} +(.+?) *#*$", text, flags=re.MULTILINE):
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def broken_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    bad = []
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    return bad


def test_slug_is_githubs():
    assert slug("Ranking models (RocketEval's setting)") == "ranking-models-rocketevals-setting"
    assert slug("Human annotation, preferences, reference ratings") == \
        "human-annotation-preferences-reference-ratings"
    assert slug("Escalation: a second judge — for what") == "escalation-a-second-judge--for-what"


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# Top\n\n## Two words\n\n[x](a.md#two-words) [y](b.md) "
                                   "[z](#nowhere) [w](https://example.org/x)\n")
    found = [b.split(": ", 1)[1] for b in broken_links_in(tmp_path / "a.md", tmp_path)]
    assert found == ["b.md (no such file)", "#nowhere (no such heading)"]


def broken_links_in(path: Path, root: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, root
    try:
        return broken_links(path)
    finally:
        ROOT = saved


def test_every_relative_link_in_the_docs_resolves():
    bad = [b for p in DOCS for b in broken_links(p)]
    assert bad == []


def test_benchmarks_md_stays_small_and_names_no_machine_path():
    path = ROOT / "docs" / "benchmarks.md"
    size = len(path.read_bytes())
    assert size < BENCHMARKS_MAX_BYTES, (
        f"docs/benchmarks.md is {size:,} bytes (limit {BENCHMARKS_MAX_BYTES:,}): state each "
        "figure once, one line of date and load per section; older runs are in git history")
    paths = MACHINE_PATH.findall(path.read_text(encoding="utf-8"))
    assert paths == [], f"docs/benchmarks.md names machine paths: {paths[:5]}"


def test_the_machine_path_check_sees_one():
    assert MACHINE_PATH.findall("data in /work/shared/benchmarks, cache ~/.cache/x") == [
        "/work/shared/benchmarks,"]
    assert MACHINE_PATH.findall("`--data ../shared/benchmarks`") == ["../shared/benchmarks`"]
    assert MACHINE_PATH.findall("`bench/quality_sweep.sh`, data/demo_runs/ and ~/.cache") == []
