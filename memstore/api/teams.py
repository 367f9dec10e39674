"""The Store's teams (`store.teams`): joining, pulling, leaving, sharing, and a team memory's
history.

The steps live in memstore.team; this ties them to one root (memstore.api.state): the config read
again after memstore.toml changes, the mirror caught up and MEMORY.md rendered after a clone moves.
Whether a call comes from the person at their terminal is the front end's to check (sharing,
joining and leaving are the person's); the library does what it is asked.
"""

from __future__ import annotations

import builtins  # builtins.list in annotations: the method `list` shadows the type here
import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memstore.api import flows, queries
from memstore.core.errors import BadUsage, NotFound
from memstore.core.teams import Team, TeamMemory, team_of

if TYPE_CHECKING:
    from memstore.api.state import RootState
    from memstore.core.results import Memory
    from memstore.team.clones import Pulled
    from memstore.team.sharing import Proposal

Say = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A share checked and ready: the team, the path in its repository, the bytes, the commit
    message."""

    team: Team
    inner: str
    data: bytes
    message: str
    source: str = ""  # the own file (root-relative) or the accepted lesson's id it comes from


class Teams:
    def __init__(self, state: RootState) -> None:
        self.state = state

    @property
    def joined(self) -> tuple[Team, ...]:
        return self.state.config.teams

    def _changed(self) -> None:
        """memstore.toml or a clone changed: config read again, the mirror caught up, MEMORY.md
        rendered."""
        self.state.reload_config()
        flows.render_index(self.state.mirror())  # a full catch-up of the mirror first (one walk)

    def list(self) -> builtins.list[dict[str, Any]]:
        """Each joined team: name, url, branch, folder, its memories and lenses in the mirror, its
        clone's state."""
        from memstore.mirror.teamrows import team_counts
        from memstore.team.clones import current_branch, local_changes

        counts = self.state.mirror().read(team_counts)
        rows = []
        for team in self.joined:
            folder = team.folder(self.state.root)
            cloned = os.path.isdir(os.path.join(folder, ".git"))
            rows.append({**team.to_json(), "cloned": cloned,
                         "memories": counts.get(team.name, {}).get("t2", 0),
                         "lenses": counts.get(team.name, {}).get("lens", 0),
                         "on": current_branch(folder) if cloned else "",
                         "changed_files": local_changes(folder)[:20] if cloned else []})
        return rows

    def add(self, url: str, *, name: str | None = None, branch: str | None = None,
            say: Say = lambda _: None, accept: bool = False) -> Team:
        """Join a team. `accept`: the caller checked that the person is at their terminal (the
        command line does), so memstore.toml's new text is accepted as theirs; otherwise it is held
        like any edit made during an agent session, and no team is read until `memstore trust
        memstore.toml`."""
        from memstore.team.clones import add

        team = add(self.state.root, self.joined, url, name, branch, say, accept)
        self._changed()
        return team

    def remove(self, name: str, *, force: bool = False, accept: bool = False) -> Team:
        from memstore.team.clones import remove

        team = remove(self.state.root, self.joined, name, force, accept)
        self._changed()
        return team

    def pull(self, names: builtins.list[str] | None = None) -> builtins.list[Pulled]:
        """Fast-forward each team (or those named); the person's own copies of what a team now holds
        step aside (memstore.team.handover); the mirror follows when anything moved. A team that
        could not be pulled raises, after the others were."""
        from memstore.team.clones import find

        teams = [find(self.joined, name) for name in names] if names else list(self.joined)
        pulled = flows.pull_each(self.state.root, teams)
        results = [result for _name, result in pulled if not isinstance(result, Exception)]
        if any(result.changed or result.handed for result in results):
            self._changed()
        for _name, result in pulled:
            if isinstance(result, Exception):
                raise result
        return results

    @staticmethod
    def init(target: str | os.PathLike[str], say: Say = lambda _: None) -> builtins.list[str]:
        from pathlib import Path

        from memstore.team.clones import init

        return init(Path(target).expanduser().absolute(), say)

    # ------------------------------------------------------------ proposing changes (pull requests)

    def share(self, memory: str | os.PathLike[str], team: str) -> Proposal:
        """Propose one of the person's topic memories or lenses, or a lesson they accepted in review
        (by its review id, l3f9a0c1), to `team`."""
        return self.send(self.prepare(memory, team))

    def prepare(self, memory: str | os.PathLike[str], team: str) -> Prepared:
        """Everything `share` checks, before anything is asked or written: the team, the file, no
        secret."""
        from memstore.core.kinds import classify
        from memstore.hook.review import looks_like_id
        from memstore.team.clones import find
        from memstore.team.secrets import refuse
        from memstore.team.sharing import authored, lesson_file, refuse_unreadable

        joined = find(self.joined, team)
        if looks_like_id(os.fspath(memory)):
            name, data = lesson_file(str(self.state.root), os.fspath(memory), self.state.now)
            refuse(data.decode("utf-8"), f"sharing lesson {os.fspath(memory)}")
            return Prepared(joined, f"memory/{name}", data, f"Share lesson {name[:-3]}",
                            os.fspath(memory))
        shown = queries.show(self.state.mirror(), memory)
        rel = shown.path
        kind = classify(rel)
        if team_of(rel):
            raise BadUsage(f"{rel} is a team's already",
                           hint="share one of your own, under memory/ or lenses/")
        if kind not in ("t2", "lens"):
            raise BadUsage(f"{rel} is not a topic memory (memory/<type>_<topic>.md) "
                           "or a lens (lenses/*.md)",
                           hint="a note or lesson becomes one in review (memstore review), "
                                "then it can be shared")
        raw = (self.state.root / rel).read_bytes()
        # a frontmatter YAML does not read as written stays here until mended
        refuse_unreadable(raw, rel)
        refuse(raw.decode("utf-8", "replace"), f"sharing {rel}")
        filename = rel.rsplit("/", 1)[-1]
        summary = (shown.summary or "").strip()[:60]
        inner = f"memory/{filename}" if kind == "t2" else rel  # a lens keeps its place in lenses/
        return Prepared(joined, inner, authored(raw),
                        f"Share {filename[:-3]}" + (f": {summary}" if summary else ""), rel)

    def send(self, prepared: Prepared) -> Proposal:
        """The prepared file on a new branch from the team's, pushed
        (memstore.team.sharing.propose), and remembered: once the team holds it, the person's own
        copy steps aside (memstore.team.handover)."""
        from memstore.team.handover import record_share
        from memstore.team.sharing import propose

        proposal = propose(str(self.state.root), prepared.team, "share", prepared.inner,
                           prepared.data, prepared.message, self.state.now)
        if prepared.source and prepared.inner.startswith("memory/"):
            record_share(self.state.root, prepared.team, prepared.inner, prepared.source,
                         proposal.commit, f"{self.state.now:%Y-%m-%d}")
        return proposal

    def propose_forget(self, path: str, why: str) -> Proposal:
        """Propose taking a team memory out of the team's repository, with why."""
        from memstore.team.sharing import propose

        team, inner = self._team_file(path)
        message = f"Forget {inner.rsplit('/', 1)[-1][:-3]}: {why.strip()[:200]}"
        return propose(str(self.state.root), team, "forget", inner, None, message, self.state.now)

    def propose_supersede(self, path: str, by: str) -> Proposal:
        """Propose marking a team memory superseded by BY (`status: superseded`,
        `superseded_by`)."""
        from memstore.mirror.fmedit import set_fields
        from memstore.mirror.stepping_aside import edits_for_supersede
        from memstore.team.sharing import propose

        team, inner = self._team_file(path)
        by_name = queries.show(self.state.mirror(), by).name or str(by)
        raw = (self.state.root / path).read_bytes()
        edited = set_fields(raw, edits_for_supersede(by_name, self.state.now))
        return propose(str(self.state.root), team, "supersede", inner, edited,
                       f"Supersede {inner.rsplit('/', 1)[-1][:-3]} by {by_name}", self.state.now)

    def _team_file(self, path: str) -> tuple[Team, str]:
        from memstore.core.teams import split
        from memstore.team.clones import find

        found = split(path)
        if found is None:
            raise NotFound(f"{path} is not a team's memory")
        return find(self.joined, found[0]), found[1]

    def with_history(self, memory: Memory) -> Memory:
        """`show`'s view of a team memory with who added it and when, and its recent history (git
        log)."""
        return queries.with_history(self.state.root, memory)


__all__ = ["TeamMemory", "Teams"]
