"""memstore's benchmarks (scripts/bench.py), one module per subject.

- `cli`: the command line, the section registry and the BENCHMARKS.md report (`main`);
- `common`: timing, child processes, tables, the corpus cache (`Bench`), `Goal`/`Outcome`;
- `sync`: first sync and rebuild throughput, incremental sync, a profile of a rebuild;
- `search`: search latency against `grep -ril`;
- `render`: render from the mirror against parsing every file each run;
- `hook`: the Claude Code hook's wall time against a bare interpreter start;
- `releases` (scripts/bench_releases.py): any two releases side by side, as ratios, against
  issue 43's goals; its figures in `release_figures`, its two checkouts in `sides`, its
  `claude -p` sessions in `claude_session`.

Each section is a function `section_NAME(bench) -> Outcome`; `cli` holds the registry,
the command line and the report writing. `scripts/bench.py` is `main()` and nothing else.
"""

from memstore_devtools.bench.cli import main

__all__ = ["main"]
