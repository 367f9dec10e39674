"""Where install writes and verify looks, for one agent root and one install scope (Layout): which
settings file carries the hooks, which the read grant, which file the @ imports (install's docstring
says why each lands where it does).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from memstore.wiring import claude_code


@dataclass(frozen=True)
class Layout:
    """Which files carry what, for one agent root and one install scope."""

    scope: str  # "user" or "project"
    root: Path
    project: Path | None  # the project folder (project scope)
    settings: Path  # the hook registrations
    grant: Path | None  # the read grant for the root; None: not needed (root inside the project)
    # the file with the @ imports; None: SessionStart carries identity + MEMORY.md
    imports: Path | None
    # the root as the person named it, when that path leads through a symlink
    alias: Path | None = None

    @property
    def wiring(self) -> tuple[Path, ...]:
        """The files that hold memstore's wiring and that the agent must not rewrite: the settings
        with the hooks and deny rules, the read grant's file, and the user-memory rules file."""
        files = [self.settings, self.grant]
        if self.imports is not None and self.imports.parent.name == "rules":
            files.append(self.imports)
        return tuple(dict.fromkeys(f for f in files if f is not None))

    @property
    def forms(self) -> tuple[Path, ...]:
        """Every spelling of the root Claude Code may see in a tool call: rules match paths as
        given."""
        if self.alias is None or self.alias == self.root:
            return (self.root,)
        return (self.root, self.alias)

    @property
    def external(self) -> bool:
        """A project-scope root outside the project."""
        return self.scope == "project" and self.grant is not None

    @property
    def session_imports(self) -> bool:
        """Do SessionStart handlers deliver identity + MEMORY.md (imports would not be expanded)?"""
        return self.external and (self.imports is None
                                  or not claude_code.is_user_memory(self.imports))


def layout_for(root: Path, scope: str, settings: str | None, claude_md: str | None, cwd: Path,
               alias: Path | None = None) -> Layout:
    """Where install writes (and verify looks) for this scope; --settings/--claude-md override."""
    return dataclasses.replace(_layout_for(root, scope, settings, claude_md, cwd), alias=alias)


def _layout_for(root: Path, scope: str, settings: str | None, claude_md: str | None,
                cwd: Path) -> Layout:
    settings_path = Path(settings).expanduser().absolute() if settings else None
    md_path = Path(claude_md).expanduser().absolute() if claude_md else None
    if scope == "user":
        return Layout("user", root, None, settings_path or claude_code.user_settings(),
                      settings_path or claude_code.user_settings(),
                      md_path or claude_code.user_rules_file())
    if settings_path is not None and settings_path.parent.name == ".claude":
        project = settings_path.parent.parent
    else:
        project = cwd.absolute()
    settings_path = settings_path or project / ".claude" / "settings.json"
    if claude_code.inside(root, project):
        return Layout("project", root, project, settings_path, None,
                      md_path or project / "CLAUDE.md")
    return Layout("project", root, project, settings_path,
                  settings_path.parent / "settings.local.json", md_path)
