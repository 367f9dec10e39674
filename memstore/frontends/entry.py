"""Console-script entry point: `memstore hook`, a plain `memstore search ... --json` and the
SessionEnd hook's `debrief --hook --detach` skip click.

The hook runs on every Read in every session, so its path must load only the standard
library. `search --json` is what scripts and agents call to look something up, where
loading click and every command module was a third of the call; the same search runs
through the library, and anything it does not read as a plain search (another option, a
bad value, --help, text output) goes to the click CLI, as does every other command. Its
notice and progress lines are written as memstore.frontends.cligroup's App writes them
(this module imports nothing of the CLI's but its main: no import circle).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HELP = ("-h", "--help")
SEARCH_FLAGS = {
    "--json": "as_json",
    "--no-sync": "no_sync",
    "--full": "full",
    "--this-project": "this_project",
    "--all": "include_all",
}
SEARCH_VALUES = {
    "--limit": "limit",
    "-n": "limit",
    "--type": "type_",
    "--mode": "mode",
    "--root": "root",
    "--now": "now",
}


class Declined(Exception):
    """The fast path leaves this call to click, which says what is wrong in its own words."""


def _is_hook(argv: list[str]) -> bool:
    """Is this a hook run? `hook --help` is not: click prints the help, and stdin is never read."""
    args = iter(argv)
    for arg in args:
        if arg in ("--root", "--now"):
            next(args, None)
            continue
        if arg.startswith(("--root=", "--now=")):
            continue
        return arg == "hook" and not any(rest in HELP for rest in args)
    return False


def search_options(argv: list[str]) -> dict[str, Any]:
    """The options of `[--root R] [--now T] search QUERY --json [...]`, as the command reads them.
    Raises Declined for anything else: click then reads the line as it always has."""
    options: dict[str, Any] = {
        "root": None,
        "now": None,
        "limit": "10",
        "type_": None,
        "mode": "auto",
        **dict.fromkeys(SEARCH_FLAGS.values(), False),
    }
    query: str | None = None
    seen_command = False
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        if not seen_command and arg == "search":
            seen_command = True
        elif seen_command and arg in SEARCH_FLAGS:
            options[SEARCH_FLAGS[arg]] = True
        elif (
            name in SEARCH_VALUES
            and (seen_command or name in ("--root", "--now"))
            and not (eq and name == "-n")
        ):
            if not eq:
                value = next(args, None)  # type: ignore[assignment]
                if value is None:
                    raise Declined
            options[SEARCH_VALUES[name]] = value
        elif seen_command and query is None and not arg.startswith("-"):
            query = arg
        else:
            raise Declined
    if query is None or not options["as_json"] or options["mode"] not in ("auto", "fts", "hybrid"):
        raise Declined
    limit = options["limit"]
    if not (limit.isascii() and limit.isdigit()) or not 1 <= int(limit) <= 100_000:
        raise Declined
    options["limit"] = int(options["limit"])
    options["query"] = query
    return options


def detach_options(argv: list[str]) -> tuple[str | None, str | None, bool]:
    """(root, now, commit) of `[--root R] [--now T] debrief --hook --detach [--commit]`; raises
    Declined for anything else."""
    values: dict[str, str | None] = {"--root": None, "--now": None}
    flags: set[str] = set()
    args = iter(argv)
    seen_command = False
    for arg in args:
        name, eq, value = arg.partition("=")
        if not seen_command and name in values:
            values[name] = value if eq else next(args, None)
            if values[name] is None or not values[name].strip():  # type: ignore[union-attr]
                raise Declined
        elif not seen_command and arg == "debrief":
            seen_command = True
        elif seen_command and arg in ("--hook", "--detach", "--commit") and arg not in flags:
            flags.add(arg)
        else:
            raise Declined
    if not seen_command or not {"--hook", "--detach"} <= flags:
        raise Declined
    return values["--root"], values["--now"], "--commit" in flags


def say(message: str) -> None:
    """A notice on stderr, one line (click's `echo` writes the same bytes)."""
    sys.stderr.write(f"memstore: {message}\n")
    sys.stderr.flush()


def json_text(value: Any) -> str:
    """What every --json prints."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def fast_search(argv: list[str]) -> bytes:
    """What `memstore search ... --json` prints, found through the library; raises Declined before
    anything is printed when the line or its values are for click to judge."""
    options = search_options(argv)
    if not hasattr(sys.stdout, "buffer"):
        raise Declined  # a stream of text only (a test's): click writes to it
    now_text = options["now"] if options["now"] is not None else os.environ.get("MEMSTORE_NOW")
    if (options["root"] is not None and not options["root"].strip()) or (
        now_text is not None and not now_text.strip()
    ):
        raise Declined
    from memstore.api.store import Store
    from memstore.core.errors import MemstoreError
    from memstore.core.timeutil import parse_now
    from memstore.frontends.progress import progress_reporter
    from memstore.mirror.search import check_query, check_type

    try:
        now = parse_now(now_text)
        check_query(options["query"])
        check_type(options["type_"])
        progress = progress_reporter("rebuild")
        store = Store.locate(options["root"], now, notify=say, progress=progress)
    except (ValueError, MemstoreError):
        raise Declined from None
    catch_up = "none" if options["no_sync"] else "full" if options["full"] else "quick"
    hits = store.search(
        options["query"],
        options["limit"],
        options["type_"],
        catch_up=catch_up,
        mode=options["mode"],
        this_project=options["this_project"],
        include_all=options["include_all"],
    )
    text = json_text([hit.to_json() for hit in hits]) + "\n"
    # encoded as the stream would: a text it cannot write (a lone surrogate) is for click
    try:
        return text.encode(sys.stdout.encoding or "", sys.stdout.errors or "strict")
    except (LookupError, UnicodeError):
        raise Declined from None


def _write(data: bytes) -> None:
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:  # the reader went away (`| head`): quietly, as the CLI does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _is_hook(argv):
        from memstore.hook.handler import main as hook_main

        sys.exit(hook_main(argv))
    if "debrief" in argv and "--detach" in argv:
        try:
            root, now, commit = detach_options(argv)
        except Declined:
            pass
        else:
            from memstore.core.session_end import hand_off

            if hand_off(sys.stdin, root, now, commit):
                sys.exit(0)
    if "search" in argv and "--json" in argv:
        try:
            data = fast_search(argv)
        except KeyboardInterrupt:
            say("interrupted")
            sys.exit(130)
        except Exception:  # Declined, or a failure the CLI meets again and says in its words
            pass
        else:
            _write(data)
            sys.exit(0)
    from memstore.frontends.cli import main as cli_main

    cli_main(argv)
