"""`memhooks doctor`: one line per check (ok / warn / fail / skip); any fail → non-zero exit.

Checks: the store (opens, integrity, permissions, pending/failed events), how memhooks is
registered (plugin layout / settings files of each scope, and that the paths they name
exist), the Python the hooks use (≥ 3.11, finds its dependencies; with `deep`, imports
them), and, with `network` only, whether the Context7 API and the team server answer
(skipped with MEMHOOKS_OFFLINE=1; the API key and passwords are never printed). Without
`network` and `deep` the checks touch only local files and take well under a second.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import sys
import time
from contextlib import closing
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit, urlunsplit

from memhooks import config
from memhooks.deps import MODULES as DEPS  # noqa: F401 - doctor.DEPS: what the checks need (tests/test_config.py)
from memhooks.doc_sources import BUILTIN, user_rows
from memhooks.files import fallback_dirs
from memhooks.setup import launcher
from memhooks.setup.install import command_paths, installed_entries
from memhooks.setup.pyprobe import plugin_pythons, probe_python
from memhooks.setup.registrations import check_registered, plugin_registrations
from memhooks.setup.writable import read_only_reason
from memhooks.store import health
from memhooks.store.connect import connect
from memhooks.store.journal import SPOOL_DIR, spool_dir
from memhooks.store.prune import cap_unmet
from memhooks.store.queries import integrity, journal_counts
from memhooks.store.sqlite_file import connect_reader
from memhooks.store.vacuum import store_files
from memhooks.team.settings import configured
from memhooks.team.status import doctor_check
from memhooks.warm.context7_api import probe

PENDING_AGE_S = 60.0
API_TIMEOUT_S = 5.0


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail | skip
    detail: str

    def as_dict(self) -> dict:
        return asdict(self)


# ----------------------------------------------------------------------------- store

def check_store(db: str | None = None) -> list[Check]:
    db = db or config.db_path()
    out: list[Check] = []
    if not os.path.exists(db):
        out += [Check("store", "warn", f"no store yet at {db} (it is created by the first ingest)"),
                Check("permissions", "skip", "no store")]
        out += _check_journal(db)
        return out + [_check_healing(db)]
    read_only = read_only_reason(db)
    try:
        conn = connect_reader(db, timeout=5)
    except sqlite3.Error as exc:
        return [Check("store", "fail", f"cannot open {db}: {read_only or exc}"),
                Check("permissions", "skip", "store unusable"), *_check_journal(db),
                _check_healing(db)]
    with closing(conn):
        try:
            rows = integrity(conn)
        except sqlite3.Error as exc:
            rows = [f"{type(exc).__name__}: {exc}"]
        if rows != ["ok"] and read_only is not None:
            out.append(Check("store", "fail", f"cannot open {db}: {read_only}"))
        elif rows == ["ok"]:
            size = os.path.getsize(db)
            out.append(Check("store", "ok", f"{db} ({size / 1024:.0f} KiB, integrity ok)"))
        else:
            out.append(Check("store", "fail", f"{db} is damaged: {'; '.join(rows[:3])}"
                             " (the next ingest or reader moves it aside and rebuilds it from"
                             " the journal; `memhooks ingest` does it now)"))
        out.append(_check_permissions(db))
    out += _check_journal(db)
    out.append(_check_size(db))
    out.append(_check_healing(db))
    return out


def _check_size(db: str) -> Check:
    """Bytes on disk per file of the store, against the size cap."""
    def mib(n: int) -> str:
        return f"{n / 1024 / 1024:.1f} MiB"

    files = store_files(db)
    total, cap = sum(n for _l, _p, n in files), config.max_store_bytes()
    detail = (f"{mib(total)} of the {mib(cap)} cap (MEMHOOKS_MAX_SIZE): "
              + ", ".join(f"{label} {mib(n)}" for label, _p, n in files if n))
    unmet = cap_unmet(db)
    if unmet is not None:
        return Check("size", "warn", f"{detail}; the cap cannot be met by eviction: {unmet['reason']}")
    if total > cap:
        return Check("size", "warn", f"{detail}; over the cap: the next ingest prunes "
                     "(or run `memhooks prune`)")
    if _keeps_free_pages(db):
        return Check("size", "warn", f"{detail}; made before incremental vacuum: run "
                     "`memhooks vacuum` once so that prunes give space back")
    return Check("size", "ok", detail)


def _keeps_free_pages(db: str) -> bool:
    for path in (db, config.journal_path(db)):
        if not os.path.exists(path):
            continue
        try:
            with closing(connect_reader(path, timeout=5)) as c:
                if c.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
                    return True
        except sqlite3.Error:
            continue
    return False


def _check_journal(db: str) -> list[Check]:
    jpath = config.journal_path(db)
    if not os.path.exists(jpath):
        return [Check("journal", "warn", f"no journal yet at {jpath} (the first hook creates it)"),
                Check("events", "skip", "no journal")]
    read_only = read_only_reason(jpath)
    try:
        conn = connect_reader(jpath, timeout=5)
    except sqlite3.Error as exc:
        return [Check("journal", "fail", f"cannot open {jpath}: {read_only or exc}"),
                Check("events", "skip", "journal unusable")]
    with closing(conn):
        try:
            rows = integrity(conn)
        except sqlite3.Error as exc:
            rows = [f"{type(exc).__name__}: {exc}"]
        if rows != ["ok"] and read_only is not None:
            return [Check("journal", "fail", f"cannot open {jpath}: {read_only} (capture "
                          "spools events elsewhere meanwhile)"),
                    Check("events", "skip", "journal unreadable here")]
        if rows != ["ok"]:
            return [Check("journal", "fail", f"{jpath} is damaged: {'; '.join(rows[:3])} (the"
                          " next hook moves it aside and captures into a fresh one)"),
                    Check("events", "skip", "journal damaged")]
        size = os.path.getsize(jpath)
        return [Check("journal", "ok", f"{jpath} ({size / 1024:.0f} KiB, integrity ok)"),
                _check_events(conn)]


def _check_healing(db: str) -> Check:
    """What self-healing did: damaged files moved aside, events rebuilt, spooled events."""
    notes = []
    for inc in health.incidents(db)[-5:]:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(inc.get("at") or 0))
        if inc.get("kind") == "store":
            notes.append(f"{when}: damaged store moved aside to {inc.get('moved_to')}"
                         f" ({inc.get('reason')}); rebuilt from {inc.get('events_reset', 0)}"
                         " journaled events")
        elif inc.get("kind") == "salvage":
            notes.append(f"{when}: {inc.get('rows', 0)} readable events copied back from"
                         f" {inc.get('of')}" + ("" if inc.get("complete") else " (some unreadable)"))
        else:
            notes.append(f"{when}: damaged journal moved aside to {inc.get('moved_to')}"
                         f" ({inc.get('reason')}); capture went on in a fresh journal")
    spooled = _spooled(db)
    if spooled:
        notes.append(f"{spooled} spooled events wait to be journaled (the next ingest does it)")
    if not notes:
        return Check("healing", "ok", "no damaged file was ever moved aside; nothing spooled")
    return Check("healing", "warn", " | ".join(notes))


def _spooled(db: str) -> int:
    """Spooled events of this store: every file of the spool beside it, and those of the
    shared fallback folders that name this store (or none), as the drain takes them."""
    n = 0
    for folder in [spool_dir(db)] + [os.path.join(d, SPOOL_DIR) for d in fallback_dirs()]:
        beside = folder == spool_dir(db)
        try:
            names = [name for name in os.listdir(folder)
                     if name.endswith(".json") and not name.startswith(".")]
        except OSError:
            continue
        n += sum(1 for name in names if beside or _spooled_for(os.path.join(folder, name), db))
    return n


def _spooled_for(path: str, db: str) -> bool:
    """Whether a spool file in a shared fallback folder is an event of the store `db`."""
    try:
        with open(path, encoding="utf-8") as fh:
            rec = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return True  # unreadable: the drain moves it to failed/; count it where it lies
    return not isinstance(rec, dict) or rec.get("db") in (None, db)


def _check_permissions(db: str) -> Check:
    problems = []
    try:
        mode = stat.S_IMODE(os.stat(db).st_mode)
        if mode & 0o077:
            problems.append(f"file is {mode:04o} (want 0600)")
        folder = os.path.dirname(db) or "."
        fmode = stat.S_IMODE(os.stat(folder).st_mode)
        if fmode & 0o077:
            problems.append(f"folder {folder} is {fmode:04o} (want 0700)")
    except OSError as exc:
        return Check("permissions", "warn", f"cannot stat: {exc}")
    read_only = read_only_reason(db)
    if read_only is not None:
        return Check("permissions", "fail", read_only)
    if problems:
        return Check("permissions", "warn", "; ".join(problems))
    return Check("permissions", "ok", "file 0600, folder 0700")


def _check_events(conn) -> Check:
    try:
        counts = journal_counts(conn, time.time() - PENDING_AGE_S)
        total, pending, failed = counts["total"], counts["pending"], counts["failed"]
        old_pending = counts["old_pending"]
    except sqlite3.Error as exc:
        return Check("events", "warn", f"cannot read the journal: {exc}")
    detail = f"{total} events, {pending} pending, {failed} failed"
    problems = []
    if old_pending:
        problems.append(f"{old_pending} pending for over a minute (run `memhooks ingest`; "
                        "see memhooks.log)")
    if failed:
        problems.append(f"{failed} failed (oversized or unreadable payloads; see the events table of the journal)")
    if problems:
        return Check("events", "warn", f"{detail}: " + "; ".join(problems))
    return Check("events", "ok", detail)


# ----------------------------------------------------------------------------- registration

def _repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def plugin_layout_problems(root: str) -> list[str]:
    """What is wrong with a plugin root (empty list: fine)."""
    problems = []
    try:
        with open(os.path.join(root, ".claude-plugin", "plugin.json"), encoding="utf-8") as fh:
            manifest = json.load(fh)
        hooks_file = os.path.normpath(os.path.join(root, manifest.get("hooks", "./hooks.json")))
        with open(hooks_file, encoding="utf-8") as fh:
            hooks = json.load(fh)["hooks"]
        with open(os.path.join(root, ".mcp.json"), encoding="utf-8") as fh:
            servers = json.load(fh)["mcpServers"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"manifest files: {exc}"]
    commands = [h.get("command", "") for groups in hooks.values() for g in groups for h in g.get("hooks", [])]
    server = servers.get("memhooks") or {}
    commands += [" ".join([server.get("command", ""), *server.get("args", [])])]
    for cmd in commands:
        for word in cmd.replace('"', " ").split():
            if "${CLAUDE_PLUGIN_ROOT}" in word:
                path = word.replace("${CLAUDE_PLUGIN_ROOT}", root)
                if not os.path.isfile(path):
                    problems.append(f"missing {path}")
                elif not os.access(path, os.X_OK):
                    problems.append(f"not executable: {path}")
    for rel in ("src/memhooks/_entry.py", "src/memhooks/bootstrap.py", "lib/python.sh", "bin/memhooks"):
        if not os.path.isfile(os.path.join(root, rel)):
            problems.append(f"missing {rel}")
    return problems


def check_plugin() -> Check:
    env_root = os.environ.get("CLAUDE_PLUGIN_ROOT", "").strip()
    root = env_root or _repo_root()
    has_layout = os.path.isfile(os.path.join(root, ".claude-plugin", "plugin.json"))
    if not has_layout:
        if env_root:
            return Check("plugin", "fail", f"CLAUDE_PLUGIN_ROOT={env_root} has no .claude-plugin/plugin.json")
        return Check("plugin", "skip", "not a plugin checkout (pip/uv install: see the install:* checks)")
    problems = plugin_layout_problems(root)
    if problems:
        return Check("plugin", "fail", f"{root}: " + "; ".join(problems[:4]))
    if env_root:
        return Check("plugin", "ok", f"running as a plugin from {root}")
    return Check("plugin", "skip", f"plugin layout at {root} is valid (load it with "
                 f"`claude --plugin-dir {root}` or from a marketplace)")


def check_installed(scope: str, project: str) -> tuple[Check, list[str]]:
    """(check, pythons named by our hook commands)."""
    name = f"install:{scope}"
    info = installed_entries(scope, project)
    if info["error"]:
        return Check(name, "warn", info["error"]), []
    hooks, server, files = info["hooks"], info["server"], info["files"]
    if not hooks and not server:
        return Check(name, "skip", f"not installed ({files.get('hooks')})"), []
    problems, pythons = [], []
    for event in ("PostToolUse", "PostToolUseFailure", "SessionStart"):
        if event not in hooks:
            problems.append(f"hook {event} missing")
    if not server:
        problems.append("MCP server missing")
    commands = list(hooks.values())
    if server:
        commands.append(" ".join(json.dumps(w) for w in [server.get("command", ""), *server.get("args", [])]))
    broken: list[str] = []
    for paths in dict.fromkeys(tuple(command_paths(cmd)[:2]) for cmd in commands):
        if paths and os.path.exists(paths[0]):
            pythons.append(paths[0])
        broken += launcher.problems(list(paths))
    pythons = list(dict.fromkeys(pythons))
    fix = launcher.reinstall_hint(scope)
    if any("directly" not in b for b in broken):
        return Check(name, "fail", "; ".join(dict.fromkeys(broken + problems)) + f": the hooks do nothing; {fix}"), pythons
    if broken or problems:
        return Check(name, "warn", "; ".join(dict.fromkeys(broken + problems)) + f" ({fix})"), pythons
    where = files["hooks"] if files["hooks"] == files["mcp"] else f"{files['hooks']} + {files['mcp']}"
    return Check(name, "ok", f"hooks and MCP server in {where}"), pythons


# ----------------------------------------------------------------------------- python

def check_pythons(hook_pythons: list[str], plugin_active: bool, *, deep: bool = True) -> list[Check]:
    checks = []
    seen = set()
    sources: list[tuple[str, str]] = [(p, "installed hooks") for p in hook_pythons]
    if plugin_active:
        pys, note = plugin_pythons()
        if not pys:
            checks.append(Check("python", "warn", f"plugin: {note} (the first SessionStart finds or builds one)"))
        sources += [(p, f"plugin, {note}") for p in pys]
    if not sources:
        sources = [(sys.executable, "this memhooks")]
    for py, why in sources:
        if py in seen:
            continue
        seen.add(py)
        status, detail = probe_python(py, deep=deep)
        checks.append(Check("python", status, f"{detail} [{why}]"))
    return checks


# ----------------------------------------------------------------------------- Context7

def _safe_url(url: str) -> str:
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def check_context7(network: bool = True) -> Check:
    if config.offline():
        return Check("context7-api", "skip", "MEMHOOKS_OFFLINE is set")
    if not network:
        return Check("context7-api", "skip", "skipped (use --network)")

    shown = _safe_url(config.context7_api_url())
    auth = " (with CONTEXT7_API_KEY)" if os.environ.get("CONTEXT7_API_KEY", "").strip() else ""
    answer = probe("react", timeout_s=API_TIMEOUT_S)
    code, n, ms = answer.status_code, answer.results, answer.ms
    if code is None:
        return Check("context7-api", "warn", f"{shown} unreachable: {answer.error} (warming uses local knowledge only)")
    if code == 429:
        return Check("context7-api", "warn", f"{shown} answered 429 (rate limited){auth}")
    if code in (401, 403):
        return Check("context7-api", "warn", f"{shown} rejected the API key (HTTP {code})")
    if code >= 400:
        return Check("context7-api", "warn", f"{shown} answered HTTP {code}")
    if n is None:
        return Check("context7-api", "warn", f"{shown} answered {code} but not the expected JSON")
    return Check("context7-api", "ok", f"{shown} answered in {ms:.0f} ms ({n} results){auth}")


# ----------------------------------------------------------------------------- all

def run_checks(project: str | None = None, *, network: bool = True, deep: bool = True,
               progress=None) -> list[Check]:
    """Every check, in order. `network`: also ask the Context7 API and the team server;
    `deep`: import the dependencies in each Python (else only find them). `progress(what)` is
    told what is being checked before each step."""
    project = project or os.getcwd()
    say = progress or (lambda what: None)
    results: list[Check] = []
    say("the store and the journal")
    results += check_store()
    say("the plugin and the settings files")
    plugin = check_plugin()
    results.append(plugin)
    plugin_active = bool(os.environ.get("CLAUDE_PLUGIN_ROOT", "").strip())
    hook_pythons: list[str] = []
    installed_any = False
    for scope in ("user", "project", "local"):
        chk, pys = check_installed(scope, project)
        results.append(chk)
        hook_pythons += pys
        installed_any = installed_any or chk.status in ("ok", "warn", "fail") and bool(pys)
    results.append(Check(*check_registered(installed_any, plugin_registrations(project))))
    say("the Python the hooks use")
    results += check_pythons(list(dict.fromkeys(hook_pythons)), plugin_active, deep=deep)
    if network:
        say(f"the Context7 API at {_safe_url(config.context7_api_url())}")
    results.append(check_sources())
    results.append(check_context7(network))
    if network and configured():
        say("the team store")
    results.append(check_team(network))
    return results


def _sample(row) -> list[str]:
    """A tool name of each of the row's patterns (`*` as `x`), on a server it covers."""
    server = "docs" if row.server == "*" else row.server
    return [f"mcp__{server}__{p.replace('*', 'x')}" for p in row.tools]


def check_sources(root: str | None = None) -> Check:
    """The declared docs sources: the user's `[[docs_source]]` rows of the settings file (a
    bad row is named and ignored), and whether the plugin's hooks.json lets their tools
    reach the hooks (it covers the known servers only; `memhooks install` writes matchers
    that cover the rows as they are when it runs)."""
    rows, problems = user_rows()
    known = sorted({r.name for r in BUILTIN})
    detail = f"known: {', '.join(known)}"
    if not rows and not problems:
        return Check("sources", "ok", detail + "; no rows of your own in the settings file")
    parts = [detail, f"yours: {', '.join(dict.fromkeys(r.name for r in rows)) or 'none'}"]
    parts += [f"row {i} ignored: {why}" for i, why in problems]
    hooks_file = os.path.join(root or os.environ.get("CLAUDE_PLUGIN_ROOT", "").strip() or _repo_root(), "hooks.json")
    try:
        with open(hooks_file, encoding="utf-8") as f:
            matcher = json.load(f)["hooks"]["PostToolUse"][0]["matcher"]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        matcher = None
    if matcher and rows:
        rx = re.compile(matcher)
        missed = [r.name for r in rows if not all(rx.search(n) for n in _sample(r))]
        if missed:
            parts.append(f"the plugin's hooks.json does not match the tools of {', '.join(dict.fromkeys(missed))}:"
                         " run `memhooks install` (its matchers cover your rows)")
    return Check("sources", "warn" if problems else "ok", "; ".join(parts))


def check_team(network: bool = True) -> Check:
    """The team store (skipped when none is configured; the password is never shown). The
    server is asked only with `network`."""
    if not configured():
        return Check("team", "skip", "no team store configured")
    try:
        with closing(connect(config.db_path())) as conn:
            status, detail = doctor_check(conn, network=network and not config.offline())
    except Exception as exc:  # noqa: BLE001 - network, auth, driver errors alike: doctor reports, never raises
        return Check("team", "warn", f"cannot check the team store: {type(exc).__name__}")
    if not network and status != "fail":
        detail += "; server not asked (use --network)"
    return Check("team", status, detail)
