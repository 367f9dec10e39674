"""A team's memory: team add/list/remove/pull/init, and share (memstore.api.teams, memstore.team).

Joining or leaving a team, and proposing anything to one, are the person's: each needs a person at
their own terminal who types `y` (memstore.frontends.terminal), the rule review answers follow.
Listing and pulling change no membership, and the nightly tick pulls too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from memstore.core.inert import for_terminal
from memstore.frontends.cligroup import App, cli, common, emit_json, json_option


def _person(what: str, question: str) -> None:
    from memstore.core.errors import MemstoreError
    from memstore.frontends.terminal import confirmed, person_at_terminal

    person_at_terminal(what)
    if not confirmed(question):
        raise MemstoreError("nothing changed", hint="answer y to go ahead")


def propose(app: App, question: str, make: Callable[[], Any], as_json: bool) -> None:
    """Ask the person, make the proposal (a pushed branch), and say what to do next."""
    _person("proposing a change to a team",
            f"{question} (a new branch pushed to the team's remote)?")
    proposal = make()
    if as_json:
        emit_json(proposal.to_json())
        return
    pushed = "pushed" if proposal.pushed else "committed (not pushed)"
    click.echo(for_terminal(f"{proposal.action}: {proposal.path} on branch {proposal.branch} of "
                            f"team {proposal.team}, {pushed}"))
    click.echo(for_terminal(f"next: {proposal.next_step}"))


@cli.command()
@click.argument("name")
@click.option("--team", "team", required=True,
              help="The joined team to propose it to (memstore team list).")
@json_option
@common
def share(app: App, name: str, team: str, as_json: bool) -> None:
    """Propose memory or lens NAME to TEAM: a commit on a new branch of the team clone, pushed; then
    open the pull request.

    Only the memory's authored text goes (your access counts and stability stay yours); a memory
    that looks as if it holds a secret is refused. Yours alone: it needs your terminal and a typed
    y.
    """
    # the checks (a secret, the team, the file) before the question
    prepared = app.store.teams.prepare(name, team)
    propose(app, f"share {prepared.inner} with team {team}",
            lambda: app.store.teams.send(prepared), as_json)


@cli.group()
def team() -> None:
    """A team's memory: a git repository of shared memories and lenses, cloned under
    teams/<name>/."""


@team.command("add")
@click.argument("url")
@click.option("--name", "name", default=None,
              help="The team's folder name (default: from the URL).")
@click.option("--branch", default=None,
              help="The branch to follow (default: the remote's default).")
@json_option
@common
def team_add(app: App, url: str, name: str | None, branch: str | None, as_json: bool) -> None:
    """Join the team whose repository is URL: clone it into teams/<name>/ and record it in
    memstore.toml.

    Its memories are then searched and listed beside yours, and its lenses fire in your sessions.
    Yours alone: it needs your terminal and a typed y.
    """
    _person("joining a team",
            f"join the team at {url}? its lenses will be injected into your agent's sessions")
    joined = app.store.teams.add(url, name=name, branch=branch,
                                 say=lambda line: click.echo(line, err=True),
                                 accept=True)  # the person at their terminal said y
    row = next(r for r in app.store.teams.list() if r["name"] == joined.name)
    if as_json:
        emit_json(row)
        return
    click.echo(for_terminal(f"joined team {joined.name}: {row['memories']} memories, "
                            f"{row['lenses']} lenses in {row['folder']}/ "
                            f"(branch {joined.branch})"))


@team.command("list")
@json_option
@common
def team_list(app: App, as_json: bool) -> None:
    """The teams joined, with their memories and lenses and the state of each clone."""
    rows = app.store.teams.list()
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no team joined (memstore team add URL joins one)")
        return
    for row in rows:
        state = "" if row["cloned"] else "  (the clone is missing: team remove, then add again)"
        if row["changed_files"]:
            state += f"  ({len(row['changed_files'])} files changed by hand: a pull leaves them)"
        click.echo(for_terminal(f"{row['name']:16} {row['memories']:6} memories "
                                f"{row['lenses']:4} lenses  {row['url']} ({row['branch']}){state}"))


@team.command("remove")
@click.argument("name")
@click.option("--force", is_flag=True,
              help="Remove even when the clone holds changes or commits found nowhere else.")
@json_option
@common
def team_remove(app: App, name: str, force: bool, as_json: bool) -> None:
    """Leave team NAME: its clone goes and memstore.toml forgets it. Nothing of your own memory is
    touched."""
    _person("leaving a team", f"leave team {name} and delete its clone teams/{name}/?")
    gone = app.store.teams.remove(name, force=force, accept=True)
    if as_json:
        emit_json(gone.to_json())
        return
    click.echo(for_terminal(f"left team {gone.name}: teams/{gone.name}/ removed "
                            "(your own memories are as they were)"))


@team.command("pull")
@click.argument("names", nargs=-1)
@json_option
@common
def team_pull(app: App, names: tuple[str, ...], as_json: bool) -> None:
    """Fast-forward each team's clone (or those named). Never a merge, rebase or force: a clone that
    cannot fast-forward is left as it is, and said."""
    results = app.store.teams.pull(list(names) or None)
    if as_json:
        emit_json([r.to_json() for r in results])
        return
    if not results:
        click.echo("no team joined (memstore team add URL joins one)")
    for result in results:
        moved = f" {result.before[:8]}..{result.after[:8]}" if result.changed else ""
        click.echo(for_terminal(f"{result.team:16} {result.state}{moved}: {result.message}"))
    if any(r.state not in ("updated", "current") for r in results):
        raise SystemExit(1)


@team.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@json_option
@common
def team_init(app: App, directory: str, as_json: bool) -> None:
    """Lay a team repository out in DIRECTORY: memory/, lenses/, meditations/, a README, git
    init."""
    from memstore.api.teams import Teams

    made = Teams.init(directory)  # no agent root needed: a team repository is made anywhere
    if as_json:
        emit_json({"directory": directory, "made": made})
        return
    made_line = ", ".join(made) or "nothing new (it was laid out already)"
    click.echo(for_terminal(f"laid out {directory}: {made_line}"))
    click.echo("next: commit it, push it to the team's git host, then each person runs "
               "memstore team add URL")
