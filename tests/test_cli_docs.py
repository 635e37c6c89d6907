"""docs/cli.md is generated (``python scripts/gen_cli_docs.py``) from the commands' own help
and the hand-written docs/cli_notes.md: it fails here as soon as it differs from what the
generator writes now, so a changed flag or help text cannot leave the reference behind."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "python scripts/gen_cli_docs.py"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs",
                                                  ROOT / "scripts" / "gen_cli_docs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def gen():
    return _generator()


def test_cli_md_is_what_the_generator_writes(gen):
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == gen.generate(), (
        f"docs/cli.md is stale (a command's help or docs/cli_notes.md changed): run `{REGENERATE}` "
        "and commit docs/cli.md")


def test_every_command_is_in_an_area_of_the_notes(gen):
    """A new command lands under *Other commands* until a reference line places it."""
    text = gen.generate()
    assert "## Other commands" not in text, (
        "a command no `<!-- reference: … -->` line of docs/cli_notes.md names: add it to its "
        f"area there, then run `{REGENERATE}`")


def test_a_command_reference_is_its_help(gen):
    root = gen.root_command()
    doc = gen.command_doc(root.commands["judge"].commands["test"], ["checkeval", "judge", "test"],
                          None, 3)
    assert doc.startswith("### `checkeval judge test`\n\n")
    assert "checkeval judge test [OPTIONS]" in doc
    assert "- `--judge <str>`: Judge spec. [default: embedded]" in doc
    assert "--help" not in doc


def test_notes_are_copied_and_markers_replaced(gen, tmp_path, monkeypatch):
    notes = tmp_path / "notes.md"
    notes.write_text("<!-- notes: for editors only -->\n# T\n\nprose kept\n\n"
                     "<!-- reference: judge list, tasks -->\n", encoding="utf-8")
    monkeypatch.setattr(gen, "NOTES", notes)
    text = gen.generate()
    assert "for editors only" not in text and "prose kept" in text
    assert "### `checkeval judge list`" in text and "### `checkeval tasks`" in text
    assert "<!-- reference: judge" not in text
    # every command the notes do not place is still documented, at the end
    other = text.split("## Other commands", 1)[1]
    assert "### `checkeval run`" in other and "### `checkeval tasks`" not in other


def test_a_marker_naming_no_command_stops_the_generator(gen, tmp_path, monkeypatch):
    notes = tmp_path / "notes.md"
    notes.write_text("<!-- reference: judge nope -->\n", encoding="utf-8")
    monkeypatch.setattr(gen, "NOTES", notes)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    with pytest.raises(SystemExit, match="`checkeval judge nope` is not a command"):
        gen.generate()


RICH_TAG = re.compile(r"(?<!\\)\[[a-z#/@][^\[]*?\]")  # what rich's markup reads as a style tag


def _helps(cmd, path):
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
    yield from ((path, t) for t in texts)
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        yield from _helps(sub, [*path, name])


def test_no_help_text_loses_a_bracket_in_help(gen):
    """`--help` renders help through rich's markup, which swallows ``[lo, hi]`` or
    ``[sub-dimension]`` as an unknown style: such a bracket is written ``\\[`` in help text."""
    lost = [(" ".join(path), m) for path, text in _helps(gen.root_command(), ["checkeval"])
            for m in RICH_TAG.findall(text)]
    assert not lost, f"write these brackets as \\[ in the help text: {lost}"


def test_the_reference_shows_an_escaped_bracket_plain(gen):
    root = gen.root_command()
    doc = gen.command_doc(root.commands["judge"].commands["sources"],
                          ["checkeval", "judge", "sources"], None, 3)
    assert '`[{"variable", "approved": [addresses], "set"}]`' in doc
    assert "\\[" not in doc
