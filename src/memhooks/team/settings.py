"""Team store settings (standard library only: the ingester and the warm read them before
deciding whether to start any team work).

* The connection string: `MEMHOOKS_TEAM_URL`, else the file `team.url` beside the store
  (written 0600 by `memhooks team connect`). Any libpq conninfo works (`postgresql://…`,
  `host=… dbname=…`, `service=…`); libpq reads PGPASSFILE / PGSERVICE / PGSSLMODE itself.
  The string is never logged and never printed in full: `masked()` hides the password.
* Excluded projects: `MEMHOOKS_TEAM_EXCLUDE` (globs of project paths, separated by the OS
  path separator or newlines) plus the lines of `team.exclude` beside the store
  (`memhooks team exclude DIR`). A directory excludes itself and everything under it.
"""

from __future__ import annotations

import fnmatch
import os
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from memhooks.config import db_path

URL_ENV = "MEMHOOKS_TEAM_URL"
EXCLUDE_ENV = "MEMHOOKS_TEAM_EXCLUDE"
URL_FILE = "team.url"
EXCLUDE_FILE = "team.exclude"
MASK = "***"


def _beside_store(name: str, db: str | None = None) -> str:
    return os.path.join(os.path.dirname(db or db_path()), name)


def url_file(db: str | None = None) -> str:
    return _beside_store(URL_FILE, db)


def exclude_file(db: str | None = None) -> str:
    return _beside_store(EXCLUDE_FILE, db)


def team_url(db: str | None = None) -> str | None:
    """The configured conninfo, or None when no team store is configured."""
    raw = os.environ.get(URL_ENV, "").strip()
    if raw:
        return raw
    try:
        with open(url_file(db), encoding="utf-8") as fh:
            raw = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return raw or None


def configured(db: str | None = None) -> bool:
    return team_url(db) is not None


def url_source(db: str | None = None) -> str | None:
    if os.environ.get(URL_ENV, "").strip():
        return URL_ENV
    return url_file(db) if team_url(db) else None


def _write_private(path: str, text: str) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def save_url(url: str, db: str | None = None) -> str:
    """Store the conninfo 0600 beside the store. Returns the file's path."""
    path = url_file(db)
    _write_private(path, url.strip() + "\n")
    return path


def forget_url(db: str | None = None) -> bool:
    try:
        os.unlink(url_file(db))
        return True
    except FileNotFoundError:
        return False


def password_of(url: str | None) -> str | None:
    """The password written in a conninfo (URL or key=value), for scrubbing messages."""
    if not url:
        return None
    if url.startswith(("postgresql://", "postgres://")):
        try:
            parts = urlsplit(url)
        except ValueError:
            return None
        if parts.password:
            return unquote(parts.password)
        for k, v in parse_qsl(parts.query):
            if k == "password" and v:
                return v
        return None
    for key, value in _kv_pairs(url):
        if key == "password" and value:
            return value
    return None


def _kv_pairs(conninfo: str) -> list[tuple[str, str]]:
    """`key=value key='quoted value'` pairs (libpq's keyword/value syntax)."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(conninfo)
    while i < n:
        while i < n and conninfo[i].isspace():
            i += 1
        start = i
        while i < n and conninfo[i] not in "= \t\n":
            i += 1
        key = conninfo[start:i]
        while i < n and conninfo[i].isspace():
            i += 1
        if i >= n or conninfo[i] != "=":
            if key:
                out.append((key, ""))
            continue
        i += 1
        while i < n and conninfo[i].isspace():
            i += 1
        value = []
        if i < n and conninfo[i] == "'":
            i += 1
            while i < n and conninfo[i] != "'":
                if conninfo[i] == "\\" and i + 1 < n:
                    i += 1
                value.append(conninfo[i])
                i += 1
            i += 1
        else:
            while i < n and not conninfo[i].isspace():
                if conninfo[i] == "\\" and i + 1 < n:
                    i += 1
                value.append(conninfo[i])
                i += 1
        out.append((key, "".join(value)))
    return out


def masked(url: str | None) -> str:
    """The conninfo with its password replaced by `***` (safe to print)."""
    if not url:
        return ""
    if url.startswith(("postgresql://", "postgres://")):
        try:
            parts = urlsplit(url)
        except ValueError:
            return "postgresql://(unparsable)"
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, hosts = netloc.rsplit("@", 1)
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{MASK}@{hosts}" if ":" in userinfo else f"{user}@{hosts}"
        query = [(k, MASK if k == "password" else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
        return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="/*"), ""))
    pairs = _kv_pairs(url)
    return " ".join(f"{k}={MASK if k == 'password' else _quote(v)}" for k, v in pairs)


def _quote(value: str) -> str:
    if value and not any(c.isspace() or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def scrub(text: str, url: str | None) -> str:
    """A message (an exception from the driver) with the password taken out."""
    secret = password_of(url)
    text = str(text)
    if secret:
        text = text.replace(secret, MASK)
    if url and url in text:
        text = text.replace(url, masked(url))
    return text


# ----------------------------------------------------------------------------- exclusions

def exclusions(db: str | None = None) -> list[str]:
    """Globs of project paths whose documents and tier1 entries never leave the machine."""
    globs: list[str] = []
    raw = os.environ.get(EXCLUDE_ENV, "")
    for part in raw.replace("\n", os.pathsep).split(os.pathsep):
        if part.strip():
            globs.append(os.path.expanduser(part.strip()))
    try:
        with open(exclude_file(db), encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("#"):
                    globs.append(line)
    except (OSError, UnicodeDecodeError):
        pass
    return list(dict.fromkeys(globs))


def add_exclusion(directory: str, db: str | None = None) -> str:
    """Append a project directory (canonical path) to team.exclude. Returns the glob stored."""
    path = os.path.realpath(os.path.expanduser(directory))
    current = []
    try:
        with open(exclude_file(db), encoding="utf-8") as fh:
            current = [line.rstrip("\n") for line in fh]
    except OSError:
        pass
    if path not in current:
        _write_private(exclude_file(db), "\n".join([*current, path]).strip("\n") + "\n")
    return path


def is_excluded(project: str | None, globs: list[str]) -> bool:
    """Whether a project path matches an exclusion (the path itself, any folder under it,
    or an fnmatch glob)."""
    if not project or not globs:
        return False
    candidates = {project}
    try:
        candidates.add(os.path.realpath(project))
    except (OSError, ValueError):
        pass
    for glob in globs:
        for cand in candidates:
            base = glob.rstrip("/") or "/"
            if cand == base or cand.startswith(base + "/") or fnmatch.fnmatchcase(cand, glob):
                return True
            if any(c in glob for c in "*?[") and fnmatch.fnmatchcase(cand, glob.rstrip("/") + "/*"):
                return True
    return False
