"""Write a synthetic agent root (see memstore_devtools.corpus) into an empty folder.

    .venv/bin/python scripts/make_corpus.py OUT_DIR [--t2 N] [--seed S] [--now ISO] [--force]

OUT_DIR must be missing or empty; --force deletes it first. The bundled fixture is
made with `.venv/bin/python scripts/make_corpus.py fixtures/corpus --t2 300 --force`.
scripts/make_corpus.py only calls `main` here.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from memstore_devtools.corpus import CorpusSpec, generate_corpus


def _parse_now(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or time: {text!r}") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _build_parser() -> argparse.ArgumentParser:
    defaults = CorpusSpec()
    parser = argparse.ArgumentParser(
        prog="make_corpus.py",
        description="Generate a deterministic synthetic memstore agent root.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path, help="folder to write")
    parser.add_argument(
        "--t2", type=int, default=defaults.t2, help=f"T2 topic files (default {defaults.t2})"
    )
    parser.add_argument(
        "--seed", type=int, default=defaults.seed, help=f"RNG seed (default {defaults.seed})"
    )
    parser.add_argument(
        "--now",
        type=_parse_now,
        default=defaults.now,
        help=f"reference time, ISO 8601; naive means UTC (default {defaults.now.isoformat()})",
    )
    parser.add_argument(
        "--force", action="store_true", help="delete OUT_DIR first if it is not empty"
    )
    return parser


def _refuse_to_delete(path: Path) -> str | None:
    """Why `path` must not be removed by --force, or None when it is safe."""
    resolved = path.resolve()
    if resolved == Path(resolved.anchor) or resolved == Path.home().resolve():
        return "refusing to delete a filesystem root or the home folder"
    if Path.cwd().resolve().is_relative_to(resolved):
        return "refusing to delete the current folder or one of its parents"
    if (resolved / ".git").exists():
        return "refusing to delete a folder that holds a git repository"
    return None


def main(argv: list[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    out: Path = args.out_dir
    if args.t2 < 0:
        print("make_corpus: --t2 must be >= 0", file=sys.stderr)
        return 2
    if out.exists() and not out.is_dir():
        print(f"make_corpus: {out} exists and is not a folder", file=sys.stderr)
        return 1
    if out.is_dir() and any(out.iterdir()):
        if not args.force:
            print(f"make_corpus: {out} is not empty (use --force to replace it)", file=sys.stderr)
            return 1
        reason = _refuse_to_delete(out)
        if reason is not None:
            print(f"make_corpus: {reason}: {out}", file=sys.stderr)
            return 1
        shutil.rmtree(out)

    spec = CorpusSpec(t2=args.t2, seed=args.seed, now=args.now)
    last_pct = -1

    def progress(done: int, total: int) -> None:
        # Small runs finish too fast for progress to mean anything.
        nonlocal last_pct
        if total < 2000:
            return
        pct = done * 100 // total
        if pct // 5 > last_pct // 5 or done == total:
            last_pct = pct
            print(f"make_corpus: {done}/{total} files ({pct}%)", file=sys.stderr)

    started = time.perf_counter()
    counts = generate_corpus(out, spec, progress)
    elapsed = time.perf_counter() - started
    shown = ("t2", "malformed", "reinforced", "pinned", "superseded", "newborn", "in_flight")
    detail = ", ".join(f"{k}={counts[k]}" for k in shown)
    print(f"wrote {counts['files']} files to {out} in {elapsed:.1f}s ({detail})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
