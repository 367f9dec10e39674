"""The command line: a thin click layer over the library (memstore.api.store.Store).

Each command parses its options, calls one Store method and prints what it returns;
no SQL, no orchestration lives here.

Every error the library raises is a MemstoreError and becomes one line on stderr
(plus a hint saying what to do next) with the exit code of DESIGN's contract:
0 success, 1 a problem found, 2 bad usage. No traceback reaches the user.

This module gathers the commands (memstore/frontends/commands/, one module per concern): each
attaches itself to the group in memstore.frontends.cligroup, which they and this module import.
"""

from __future__ import annotations

import sys

import click

# importing the command modules attaches their commands to `cli`
from memstore.frontends.cligroup import cli
from memstore.frontends.commands import capture, memory, nightly, serve, team, wiring  # noqa: F401

__all__ = ["cli", "main", "run_as"]


def main(argv: list[str] | None = None) -> None:
    """The console script. Usage errors, like every other error, are one line plus a hint, exit
    2."""
    try:
        code = cli.main(args=argv, prog_name="memstore", standalone_mode=False)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx is not None else "memstore"
        click.echo(f"memstore: error: {exc.format_message()}", err=True)
        click.echo(f"memstore: hint: see: {command} --help", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("memstore: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def run_as(command: str, argv: list[str]) -> None:
    """`memstore COMMAND ARGV` for the seed-style wrapper scripts; --root may come anywhere in
    ARGV."""
    rest = list(argv)
    options: list[str] = []
    if "--root" in rest:
        at = rest.index("--root")
        options, rest = rest[at : at + 2], rest[:at] + rest[at + 2 :]
    main([*options, command, *rest])
