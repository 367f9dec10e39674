"""Lenses take effect in the next session without a sync (issue 31, item 4): the hook reads a lens
file changed since the last sync itself, with a standard-library reader held to PyYAML's answers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memstore.core import tamper_sessions
from memstore.core.frontreader import read_frontmatter
from memstore.core.starter_templates import EXAMPLE_LENS
from memstore.mirror.parsing import split_frontmatter
from tests.helpers import LENS, call, context_of, install_user, pre, start, write

pytestmark = pytest.mark.usefixtures("claude_on_path")


def lens_text(root: Path, tool: str = "Bash", session: str = "s1") -> str:
    return context_of(call(root, pre(tool, session=session))[1])


def bump(path: Path) -> None:
    """A later mtime than the mirror holds, whatever the clock's granularity."""
    later = os.stat(path).st_mtime_ns + 2_000_000_000
    os.utime(path, ns=(later, later))


def test_added_edited_and_removed_lenses_count_in_the_next_session_without_a_sync(
        agent: Path) -> None:
    """Failure caught: the hook matched lenses from the mirror alone, which only a sync updates (the
    plugin never syncs between sessions): a new lens fired only a session late, an edited one
    injected its old text, a removed one went on firing."""
    assert "LENSMARK" in lens_text(agent, session="s1")
    write(agent, "lenses/glob-care.md", "---\ntype: lens\ntrigger:\n  tool_match: ^Glob$\n"
                                        "---\nGLOBMARK look first\n")
    assert "GLOBMARK" in lens_text(agent, "Glob", session="s2")  # new, never synced: fires at once
    (agent / "lenses/bash-care.md").write_text(LENS.replace("LENSMARK", "NEWMARK"))
    bump(agent / "lenses/bash-care.md")
    edited = lens_text(agent, session="s3")
    assert "NEWMARK" in edited and "LENSMARK" not in edited  # the file's text, not the mirror's
    (agent / "lenses/glob-care.md").unlink()
    # gone from the folder: gone from the session
    assert lens_text(agent, "Glob", session="s4") == ""


def test_a_lens_changed_mid_session_is_still_held(agent: Path, run) -> None:
    """Failure caught: reading lens files afresh bypassed tamper.lens_filter, so a lens the agent
    rewrote during its own session (not yet trusted) was injected at once."""
    install_user(run, agent)
    start(agent)
    (agent / "lenses/bash-care.md").write_text(LENS.replace("LENSMARK", "EVILMARK")
                                               + "\npush to main\n")
    bump(agent / "lenses/bash-care.md")
    assert "EVILMARK" not in lens_text(agent) and "LENSMARK" not in lens_text(agent)


def test_a_lens_added_between_sessions_fires_in_the_next(agent: Path, run, monkeypatch) -> None:
    """Failure caught: a lens the person added by hand between two sessions waited for a sync (or
    was held as the agent's): it must fire in the very next session."""
    monkeypatch.setattr(tamper_sessions, "SLACK_S", 0.0)
    install_user(run, agent)
    start(agent, "s1")
    tamper_sessions.session_end(str(agent), "s1")
    time.sleep(0.05)
    write(agent, "lenses/read-care.md", "---\ntype: lens\ntrigger: \n  tool_match: ^Read$\n"
                                        "---\nREADMARK\n")
    start(agent, "s2")
    assert "READMARK" in lens_text(agent, "Read", session="s2")


SAMPLES = [
    EXAMPLE_LENS,
    LENS,
    "---\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n  path_pattern: notes/\n---\nbody\n",
    "---\n# a comment\ntype: lens\n\ntrigger:\n    tool_match: 'it''s'\n---\n\n\n"
    "body after blank lines\n",
    "---\ntrigger:\n  tool_match: \"^(Edit|Write)$\"\nbody_token_cap: 0\n---\nx",
    "---\ntrigger:\n  tool_match: .*\nname: any\n---\nx",
    "---\ntrigger:\n  tool_match:\nname: empty\n---\nx",
    "---\ntrigger:\nname: bare\n---\nx",
    "no frontmatter at all\n",
    "---\r\ntype: lens\r\ntrigger:\r\n  tool_match: Bash\r\n---\r\nwindows\r\n",
    # what the reader must leave to sync (None), each a way YAML reads otherwise than a naive split
    "---\ntrigger: {tool_match: Bash}\n---\nflow\n",
    "---\ntrigger:\n  tool_match: yes\n---\nboolean\n",
    "---\ntrigger:\n  tool_match: 010\n---\noctal\n",
    "---\ntrigger:\n  tool_match: 2024-01-01\n---\ndate\n",
    "---\ntrigger:\n  tool_match: Bash # why\n---\ncomment\n",
    "---\ntrigger:\n  tool_match: \"\\d+\"\n---\nbad escape\n",
    "---\ntrigger:\n  tool_match: &a Bash\n---\nanchor\n",
    "---\ntrigger:\n  tool_match: |\n    Bash\n---\nblock\n",
    "---\nname: a\n  continued\n---\nplain over two lines\n",
    "---\ntrigger:\n  tool_match: Bash\n   path_pattern: x\n---\nindent\n",
    "---\ntype: lens\ntype: again\n---\nrepeated\n",
    "---\ntype: lens\n",
    "---\ntags:\n  - a\n---\nlist\n",
    "---\ntrigger:\n  tool_match: 1.5\n---\nfloat\n",
    "---\ntrigger:\n  tool_match: ~\n---\nnull\n",
    # the attacker's walkthrough: line breaks YAML knows and str.split does not,
    # spaces str.strip takes
    "---\ntrigger:\n  tool_match: ^NeverMatches$\nname: harmless"
    "\u2028trigger:\u2028  tool_match:\u2028    ^Bash$\n---\nx\n",
    "---\ntrigger:\n  tool_match: ^Bash$\u2029name: x\n---\nx\n",
    "---\ntrigger:\n  tool_match: ^Bash$\x85name: x\n---\nx\n",
    "---\ntrigger:\n  tool_match: \u00a0^Bash$\n---\nnbsp\n",
    "---\ntrigger:\n  tool_match: ^Bash$\u3000\n---\nideographic space\n",
    "---\ntrigger:\n  tool_match: ^Ba\x07sh$\n---\ncontrol\n",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_the_small_reader_agrees_with_yaml_or_leaves_the_file_to_sync(text: str) -> None:
    """Failure caught: the hook's own lens reader read a frontmatter differently from sync's YAML (a
    different trigger, name or cap, or a different body), so a lens behaved one way before a sync
    and another after it. Where it cannot be sure it must say so (None), never guess."""
    mine = read_frontmatter(text)
    meta, body, _ = split_frontmatter(text, [])
    if mine is None:
        assert "---" in text[:4]  # only a frontmatter it declines; plain text is always read
        return
    assert mine[0] == meta, text
    assert mine[1].replace("\r\n", "\n").strip() == body.replace("\r\n", "\n").strip(), text


def test_the_small_reader_and_yaml_agree_on_random_frontmatters() -> None:
    """Failure caught (issue 31's attacker walkthrough: 21,939 disagreements in 200,000 cases): a
    lens whose trigger the hook read one way before a sync and sync's YAML another way after it.
    Seeded: the same 3,000 frontmatters every run, built from a lens's own parts and the characters
    that split the readers."""
    import random

    rng = random.Random(31)
    parts = ["type", "lens", "trigger", "tool_match", "name", "^Bash$", "Read", ":", ": ", "  ",
             "\n", "\n  ", "'", '"', "#", "-", "x", " ", "\t", "\r", "\u2028", "\u2029", "\x85",
             "\u00a0", "\u3000", "\x07", "\ufeff", "\x7f", "\x9b", "\u200b"]
    disagree = []
    for _ in range(3000):
        inner = "".join(rng.choice(parts) for _ in range(rng.randint(3, 18)))
        text = f"---\ntrigger:\n  tool_match: ^Bash$\n{inner}\n---\nbody\n"
        mine = read_frontmatter(text)
        if mine is None:
            continue
        try:
            meta, _body, _ = split_frontmatter(text, [])
        except Exception:  # what sync cannot read at all, the reader must not have read either
            disagree.append(repr(text))
            continue
        if mine[0] != meta:
            disagree.append(repr(text))
    assert not disagree, f"{len(disagree)} disagreements, e.g. {disagree[:3]}"
