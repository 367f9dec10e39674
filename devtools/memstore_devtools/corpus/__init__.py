"""Synthetic agent-root generator for tests, benchmarks and the bundled fixture.

`generate_corpus` writes a complete agent root (identity, T2 topic files, short-term
notes, dream journal, bug ledger, lenses, meditation objects) that looks like the
memory of a knowledge-work agent: vendor API quirks, reconciliation rules, git and
CI habits, drafting preferences, handoffs. Topic names are built combinatorially
from word lists, so even 100,000 files get distinct names and varied vocabulary.

The output is a pure function of the `CorpusSpec`: one seeded `random.Random`
drives every choice and files are enumerated in a fixed order, so the same spec
writes the same bytes. File modification times are set from each file's own dates
(never the wall clock), so a fresh corpus is not mistaken for a live session.

Deliberately broken T2 files are part of every corpus (see `MALFORMED_KINDS`), so
parsers, `lint` and the degrade-to-defaults rules have something real to chew on.

Only the standard library is used, and YAML is written as text (no dumper), which
keeps a 100k-file run to a few seconds.

Modules, by meaning:

- `spec`: `CorpusSpec`, the T2 types, the malformed kinds and their fixed names.
- `vocabulary`: word lists topic names and slots are drawn from.
- `templates`: summary, body, description, bug-title and T1-note templates.
- `fixed`: hand-written anchors, lenses, meditations, identity text.
- `output`: YAML scalars, timestamps, frontmatter, the raw file writer.
- `generator`: `_Gen`, the seeded RNG and the text it builds.
- `t2`: planning and rendering T2 topic files, malformed ones included.
- `other_files`: meditations, dream journal, short-term notes, bugs, lenses.
- `build`: `generate_corpus`, which writes them all in a fixed order.
- `cli`: the command line behind scripts/make_corpus.py.
"""

from memstore_devtools.corpus.build import generate_corpus
from memstore_devtools.corpus.fixed import ANCHOR_NAMES
from memstore_devtools.corpus.spec import (
    MALFORMED_KINDS,
    MALFORMED_NAMES,
    T2_TYPES,
    CorpusSpec,
    malformed_names,
)

__all__ = [
    "ANCHOR_NAMES",
    "MALFORMED_KINDS",
    "MALFORMED_NAMES",
    "T2_TYPES",
    "CorpusSpec",
    "generate_corpus",
    "malformed_names",
]
