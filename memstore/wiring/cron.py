"""The nightly cycle in cron: `memstore tick`, then `memstore wake` five minutes later, per agent
root.

The crontab is parsed, changed and rendered by python-crontab. Each of our jobs carries a
comment line naming its job and its root (`# memstore tick for /abs/root`), so several
roots coexist in one crontab and install/uninstall touch only this root's jobs. The
single tick line an earlier memstore wrote (`# memstore nightly tick for ROOT`) counts as
ours too, and is replaced.

What is not ours is left to python-crontab, which keeps plain comments, blank lines,
`NAME=value` lines and ordinary jobs as they were, but normalises some forms (quotes
around a value, `#30 3 ...` becomes `# 30 3 ...`, leading blanks) and silently drops
others (`NAME = value` with blanks around `=`; a `NAME=value` after the last job). So:
- a crontab in which none of our jobs would change is never rewritten (install twice
  gives the same text, byte for byte, with no render in between);
- a `NAME=value` python-crontab holds in no job (the last lines of the file) and one
  that sat above a job of ours that goes away are kept where they were;
- any other line not ours that the render would change is named in a warning (the
  diff shows how), and a change that would lose an environment setting is refused.

Both a crontab file (--crontab-file) and the user's crontab (`crontab -l` / `crontab
FILE`, so the `crontab` command must exist) go through the same parse from text: the
tests on files exercise the very code that edits the user's crontab.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
from collections import Counter, OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core import processes
from memstore.core.agent_root import RootPaths
from memstore.core.errors import BadUsage, MemstoreError
from memstore.core.locks import atomic_write
from memstore.core.model_command import DEFAULT_MODEL_CMD
from memstore.core.results import Check
from memstore.wiring.install_base import memstore_command

if TYPE_CHECKING:
    from crontab import CronItem, CronTab

JOBS = ("tick", "wake")  # in the order they run
DEFAULT_AT = (3, 30)  # tick at 03:30, wake at 03:35
WAKE_AFTER_MINUTES = 5
OLD_MARK = "memstore nightly tick for"  # the one-line tick of earlier versions


class CronError(MemstoreError):
    """The crontab cannot be read or written, or not without losing lines that are not ours."""


@dataclass(frozen=True)
class Source:
    """Which crontab: a file, or (file None) the user's crontab through the `crontab` command."""

    file: Path | None = None

    @property
    def label(self) -> str:
        return str(self.file) if self.file is not None else "crontab"

    def option(self) -> str:
        """The command-line option that names this crontab (for fix lines)."""
        if self.file is None:
            return "--cron"
        return f"--crontab-file {shlex.quote(str(self.file))}"


# ---------------------------------------------------------------- the jobs


def parse_time(text: str) -> tuple[int, int]:
    """'HH:MM' (24-hour clock) as (hour, minute)."""
    match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", text)
    if not match or int(match[1]) > 23 or int(match[2]) > 59:
        raise BadUsage(f"not a time of day: {text!r}",
                       hint="give HH:MM on the 24-hour clock, e.g. 03:30")
    return int(match[1]), int(match[2])


def schedule(at: tuple[int, int] = DEFAULT_AT) -> dict[str, tuple[int, int]]:
    """(hour, minute) of each job: tick at `at`, wake five minutes later (past midnight if need
    be)."""
    hour, minute = at
    later = (hour * 60 + minute + WAKE_AFTER_MINUTES) % (24 * 60)
    return {"tick": (hour, minute), "wake": divmod(later, 60)}


def comment(job: str, root: Path) -> str:
    return f"memstore {job} for {root}"


def command(job: str, root: Path, program: Sequence[str], model_cmd: str | None = None) -> str:
    """`<memstore> --root ROOT JOB [--model-cmd CMD] >> ROOT/runtime/state/JOB.log 2>&1`,
    shell-quoted."""
    log = os.path.join(RootPaths(root).state, f"{job}.log")
    extra = ["--model-cmd", model_cmd] if job == "wake" and model_cmd else []
    return f"{shlex.join([*program, '--root', str(root), job, *extra])} >> {shlex.quote(log)} 2>&1"


def planned_jobs(root: Path, at: tuple[int, int] = DEFAULT_AT,
                 program: Sequence[str] | None = None,
                 model_cmd: str | None = None) -> list[CronItem]:
    """Our two jobs for root, as python-crontab items (comment on its own line above each)."""
    from crontab import CronItem

    if program is None:
        program = memstore_command()
    items = []
    for job, (hour, minute) in schedule(at).items():
        item = CronItem(command(job, root, program, model_cmd), comment(job, root),
                        pre_comment=True)
        item.setall(minute, hour, "*", "*", "*")
        items.append(item)
    return items


def lines(root: Path, at: tuple[int, int] = DEFAULT_AT,
          program: Sequence[str] | None = None) -> list[str]:
    """The crontab lines install writes for root (two per job: the comment, then the job)."""
    return [line for item in planned_jobs(root, at, program)
            for line in item.render().splitlines()]


def ours(tab: CronTab, root: Path) -> list[CronItem]:
    """This root's jobs in tab, in file order (the older one-line tick included)."""
    names = {comment(job, root) for job in JOBS} | {f"{OLD_MARK} {root}"}
    return [item for item in tab.crons or [] if item.comment in names]


def _own_text(item: CronItem) -> str:
    """The item's lines without the NAME=value lines python-crontab hangs on it."""
    text, env = item.render(), str(item.env)
    return text[len(env):] if text.startswith(env) else text


def _key(item: CronItem) -> tuple[Any, ...]:
    return (item.comment, item.pre_comment, item.is_enabled(), str(item.slices), item.command,
            item.stdin)


# ---------------------------------------------------------------- reading, parsing, writing


def _crontab_command() -> str:
    found = shutil.which("crontab")
    if found is None:
        raise CronError("no `crontab` command on this machine, so the user's crontab cannot be "
                        "read or written",
                        hint="install cron (Debian/Ubuntu: apt-get install cron), "
                             "or pass --crontab-file F")
    return found


def read(source: Source) -> str | None:
    """The crontab's text as it is; None when there is none yet."""
    if source.file is not None:
        return source.file.read_text(encoding="utf-8") if source.file.exists() else None
    proc = processes.run([_crontab_command(), "-l"], timeout=30)
    if proc.returncode != 0:
        if "no crontab" in proc.stderr.lower():
            return None
        raise CronError(f"crontab -l failed: {proc.stderr.strip()}")
    return proc.stdout


def _verbatim(text: str) -> CronItem:
    """A line python-crontab renders exactly as given (it would otherwise drop it)."""
    from crontab import CronItem

    class Verbatim(CronItem):
        def render(self, *_args: Any, **_kwargs: Any) -> str:  # 3.0 passes specials=
            return text

    item = Verbatim()
    item.valid = True
    return item


@contextmanager
def _quiet() -> Iterator[None]:
    """python-crontab logs a line it cannot parse with no context; the warnings here name it
    instead."""
    log = logging.getLogger("crontab")
    was, log.disabled = log.disabled, True
    try:
        yield
    finally:
        log.disabled = was


def parse(text: str | None) -> CronTab:
    """text as a python-crontab CronTab (the same parse for a file and for the user's crontab)."""
    from crontab import CronTab, OrderedVariableList

    body = (text or "").removesuffix("\n")
    with _quiet():
        tab = CronTab(tab=body) if body else CronTab()
    # python-crontab's own attribute, which its stubs do not declare
    parked: OrderedDict[str, str] = tab._parked_env  # type: ignore[attr-defined]
    if parked:  # NAME=value lines after the last job: python-crontab would drop them
        env: OrderedVariableList[str, str] = OrderedVariableList()
        env.update(parked)
        _lines(tab).append(_verbatim(str(env).rstrip("\n")))
        tab._parked_env = OrderedDict()  # type: ignore[attr-defined]
    return tab


def _lines(tab: CronTab) -> list[str | CronItem]:
    """tab.lines: None only before python-crontab has read a tab, which parse always has."""
    assert tab.lines is not None
    return tab.lines


def _crons(tab: CronTab) -> list[CronItem]:
    """tab.crons (as _lines)."""
    assert tab.crons is not None
    return tab.crons


def _at(seq: list[Any], obj: Any) -> int:
    """Index by identity (python-crontab's items compare equal by command, comment and time)."""
    return next(i for i, x in enumerate(seq) if x is obj)


def _replace(tab: CronTab, old: CronItem, new: list[CronItem]) -> None:
    """Put `new` where `old` was; the NAME=value lines that stood above old stay where they
    were."""
    # before old leaves tab.crons: the render looks at the job above
    env = str(old.env).rstrip("\n")
    lines, crons = _lines(tab), _crons(tab)
    at = _at(lines, old)
    lines[at : at + 1] = [*([_verbatim(env)] if env else []), *new]
    at = _at(crons, old)
    crons[at : at + 1] = new
    for item in new:
        item.cron = tab


@dataclass
class Edit:
    """One planned change of a crontab: the text before and after, and how to write it."""

    source: Source
    before: str | None
    after: str
    tab: CronTab
    warnings: list[str]

    def write(self) -> None:
        """Write `after`, unless the crontab changed since it was read (then refuse)."""
        if read(self.source) != self.before:
            raise CronError(f"{self.source.label} changed since the plan was made; "
                            "nothing written there", hint="run the command again")
        if self.source.file is not None:
            self.source.file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.source.file, self.after.encode("utf-8"))
        else:
            # python-crontab shlex-splits it
            self.tab.cron_command = shlex.quote(_crontab_command())
            try:
                self.tab.write_to_user(user=True)  # `crontab FILE`
            except OSError as exc:
                raise CronError(f"could not write the crontab: {exc}") from None


def plan(source: Source, root: Path, *, at: tuple[int, int] = DEFAULT_AT, remove: bool = False,
         program: Sequence[str] | None = None, model_cmd: str | None = None) -> Edit:
    """Our two jobs for root installed (or, remove=True, removed) in the crontab at source."""
    before = read(source)
    tab = parse(before)
    found = ours(tab, root)
    wanted = [] if remove else planned_jobs(root, at, program, model_cmd)
    if [_key(i) for i in found] == [_key(i) for i in wanted]:
        # nothing of ours changes: keep the text as it is
        return Edit(source, before, before or "", tab, [])
    ours_before = [line for item in found for line in _own_text(item).splitlines()]
    if found:
        _replace(tab, found[0], wanted)
        for item in found[1:]:
            _replace(tab, item, [])
    else:
        for item in wanted:
            item.cron = tab
            tab.append(item)
    after = tab.render()
    return Edit(source, before, after, tab,
                _check_foreign(before or "", after, ours_before, source))


_ASSIGNMENT = re.compile(r"\s*([^\s=#]+)\s*=\s*(.*?)\s*")


def _assignments(text: str) -> Counter[tuple[str, str]]:
    """The NAME=value settings in a crontab's text, as cron reads them (quotes around a value
    dropped)."""
    found: Counter[tuple[str, str]] = Counter()
    for line in text.splitlines():
        match = _ASSIGNMENT.fullmatch(line)
        if match:
            value = match[2]
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            found[match[1], value] += 1
    return found


def _check_foreign(before: str, after: str, ours_before: list[str], source: Source) -> list[str]:
    """Refuse to lose an environment setting; name every other line not ours that the render
    changes."""
    lost = sorted(set(_assignments(before)) - set(_assignments(after)))
    if lost:
        shown = ", ".join(f"{name}={value}" for name, value in lost[:3])
        raise CronError(f"{source.label}: the crontab library would drop the setting(s) {shown}; "
                        "nothing changed",
                        hint="write each as NAME=value, without blanks around '=', "
                             "then run this again")
    changed = Counter(before.splitlines()) - Counter(after.splitlines()) - Counter(ours_before)
    rewritten = [line for line in changed.elements() if line.strip()]
    if not rewritten:
        return []
    shown = ("; ".join(repr(line) for line in rewritten[:3])
             + ("; ..." if len(rewritten) > 3 else ""))
    return [f"{source.label}: the crontab library rewrites {len(rewritten)} line(s) memstore did "
            f"not write ({shown}); the diff shows how"]


# ---------------------------------------------------------------- verify


def checks(text: str | None, root: Path, source: Source, *, scope: str = "") -> list[Check]:
    """`cron tick` and `cron wake`: is each of root's jobs in the crontab, enabled, with a program
    that runs?"""
    tab = parse(text)
    found = ours(tab, root)
    fix = " ".join(p for p in ("memstore", "--root", shlex.quote(str(root)), "install", "--apply",
                               scope, source.option()) if p)
    result = []
    for job in JOBS:
        name = f"cron {job}"
        items = [i for i in found if i.comment == comment(job, root)]
        if not items:
            old = job == "tick" and any(i.comment == f"{OLD_MARK} {root}" for i in found)
            detail = (f"only the older one-line tick is in {source.label}, with no wake after it"
                      if old else f"no `memstore {job}` job for {root} in {source.label}")
            result.append(Check(name, False, detail, fix))
            continue
        item = items[0]
        if not item.is_enabled():
            result.append(Check(name, False, f"the {job} job in {source.label} is commented out",
                                fix))
            continue
        try:
            program = shlex.split(item.command)[0]
        except (ValueError, IndexError):
            program = ""
        if not (Path(program).is_file() and os.access(program, os.X_OK)):
            result.append(Check(name, False,
                                f"the {job} job runs {program!r}, which is not an executable file",
                                fix))
            continue
        if job == "wake":
            model = _model_program(item.command or "")
            if model is not None and not _runs_under_cron(model):
                result.append(Check(name, False,
                                    f"the wake job's model command {model!r} is not an executable "
                                    "file cron can find (cron's PATH is /usr/bin:/bin)",
                                    fix + " --model-cmd "
                                    + shlex.quote("/abs/path/to/" + DEFAULT_MODEL_CMD)))
                continue
        result.append(Check(name, True, f"{item.slices} {item.command}"))
    return result


def _model_program(job_command: str) -> str | None:
    """The program of the wake job's --model-cmd (the default `claude` when it has none)."""
    try:
        argv = shlex.split(job_command.split(" >> ", 1)[0])
    except ValueError:
        return None
    if "--model-cmd" in argv and argv.index("--model-cmd") + 1 < len(argv):
        try:
            return shlex.split(argv[argv.index("--model-cmd") + 1])[0]
        except (ValueError, IndexError):
            return None
    return "claude"


def _runs_under_cron(program: str) -> bool:
    import shutil

    if os.path.isabs(program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program, path="/usr/bin:/bin") is not None
