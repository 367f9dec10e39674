"""Console-script entry point: `memstore hook` skips click entirely (`hook --help` does not).

The hook runs on every Read in every session, so its path must load only the
standard library. Every other command goes to the click CLI.
"""

from __future__ import annotations

import sys

HELP = ("-h", "--help")


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


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _is_hook(argv):
        from memstore.hook.handler import main as hook_main

        sys.exit(hook_main(argv))
    from memstore.frontends.cli import main as cli_main

    cli_main(argv)


if __name__ == "__main__":
    main()
