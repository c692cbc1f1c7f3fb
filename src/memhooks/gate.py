"""Whether memhooks may capture, serve or warm for a project now (standard library only; a
leaf read by every hot path before it journals or answers anything).

No, when:
* memhooks is paused: the file `paused` beside the store (`memhooks pause [DURATION]`)
  holds an expiry that has not passed (`-` or nothing: until `memhooks resume`);
* the project is excluded: a regular file `.memhooks-ignore` (never followed through a
  symlink) in its folder or in a folder above it, up to `$HOME` (for a project inside it)
  or the filesystem root; or its folder (or a folder above it) matches one of the globs of
  `MEMHOOKS_EXCLUDE` (separated like PATH), else of `exclude` in the settings file.

The project of a hook is `CLAUDE_PROJECT_DIR`, else the payload's `cwd` (`hook_project`), for
every hook.

Cost when nothing is set: one failed open (the pause file), one lstat per folder from the
project up (the ignore file), one environment read and the settings file's stat.
"""

import os
import stat
import time

from memhooks.config import beside, project_dir, setting
from memhooks.files import make_private_dirs, open_regular

PAUSE_NAME = "paused"
IGNORE_NAME = ".memhooks-ignore"
MAX_PATTERN = 1024


def pause_path(db: str) -> str:
    return beside(db, PAUSE_NAME)


def paused_until(db: str, now: float | None = None) -> float | None:
    """The pause's end (an epoch; inf: until resumed), or None when not paused."""
    fd = open_regular(pause_path(db), os.O_RDONLY)
    if fd is None:
        return None
    try:
        text = os.read(fd, 64).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    finally:
        os.close(fd)
    if not text or text == "-":
        return float("inf")
    try:
        until = float(text.split()[0])
    except ValueError:
        return float("inf")  # unreadable: paused, as asked; `memhooks resume` ends it
    now = time.time() if now is None else now
    return until if until > now else None


def pause(db: str, until: float | None) -> str:
    """Write the pause file (atomically, 0600); `until` None pauses until resumed."""
    path = pause_path(db)
    make_private_dirs(os.path.dirname(path))
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, ("-" if until is None else f"{until:.3f}").encode() + b"\n")
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return path


def resume(db: str) -> bool:
    """Remove the pause file; False when there was none."""
    try:
        os.unlink(pause_path(db))
        return True
    except FileNotFoundError:
        return False


def has_ignore_file(folder: str) -> bool:
    """Whether `folder` itself holds a regular `.memhooks-ignore` (a symlink is not one)."""
    try:
        st = os.lstat(os.path.join(folder, IGNORE_NAME))
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode)


def ignore_file_above(project: str) -> str | None:
    """The folder holding the `.memhooks-ignore` that excludes `project`: the project's own
    folder or the nearest one above it, up to `$HOME` when the project is inside it (a
    file above the home folder is not the user's to set), else up to the root."""
    raw_home = os.environ.get("HOME", "").strip()
    home = os.path.normpath(raw_home) if raw_home and os.path.isabs(raw_home) else None
    stop = home if home and (project == home or project.startswith(home.rstrip(os.sep) + os.sep)) else None
    folder = project
    while True:
        if has_ignore_file(folder):
            return folder
        parent = os.path.dirname(folder)
        if folder == stop or not parent or parent == folder:
            return None
        folder = parent


def patterns() -> list[str]:
    """The exclusion globs, `~` expanded, normalised (a trailing slash dropped)."""
    raw = setting("MEMHOOKS_EXCLUDE")
    if not raw:
        return []
    out = []
    for part in raw.split(os.pathsep):
        part = part.strip()
        if part and len(part) <= MAX_PATTERN:
            part = os.path.expanduser(part)
            if os.path.isabs(part):
                part = os.path.normpath(part)
                if not any(c in part for c in "*?["):
                    part = os.path.realpath(part)  # the key projects are stored under
                out.append(part)
    return out


def excluded(project: str | None) -> str | None:
    """Why `project` (a canonical folder) is excluded, or None."""
    if not project:
        return None
    where = ignore_file_above(project)
    if where is not None:
        return f"{IGNORE_NAME} in the project" if where == project else f"{IGNORE_NAME} in {where}"
    globs = patterns()
    if not globs:
        return None
    folder = project
    while True:
        for glob in globs:
            if glob_match(glob, folder):
                return f"excluded by {glob}"
        parent = os.path.dirname(folder)
        if not parent or parent == folder:
            return None
        folder = parent


def blocked(db: str, project: str | None) -> str | None:
    """Why nothing may be captured, served or warmed for `project` now, or None."""
    if paused_until(db) is not None:
        return "paused"
    return excluded(project)


def glob_match(pattern: str, text: str) -> bool:
    """fnmatch's rules without `re` (which a hot path does not import): `*` any run of
    characters (`/` too), `?` one character, `[seq]` / `[!seq]` one of (or none of) a set
    with ranges. Case-sensitive. Greedy with one backtrack point: O(len * len) at worst."""
    p = t = 0
    star_p = star_t = -1
    while t < len(text):
        if p < len(pattern):
            c = pattern[p]
            if c == "*":
                star_p, star_t = p, t
                p += 1
                continue
            if c == "?":
                p, t = p + 1, t + 1
                continue
            if c == "[":
                matched, end = _class(pattern, p, text[t])
                if end is not None:
                    if matched:
                        p, t = end, t + 1
                        continue
                elif c == text[t]:  # an unclosed `[` is itself
                    p, t = p + 1, t + 1
                    continue
            elif c == text[t]:
                p, t = p + 1, t + 1
                continue
        if star_p < 0:
            return False
        star_t += 1
        p, t = star_p + 1, star_t
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)


def _class(pattern: str, start: int, ch: str) -> tuple[bool, int | None]:
    """Whether `ch` is in the set `[...]` opening at `start`, and the index after it (None
    when the set is not closed)."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] == "!"
    if negate:
        i += 1
    first, hit = i, False
    while i < len(pattern) and (pattern[i] != "]" or i == first):
        lo = pattern[i]
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            hit = hit or lo <= ch <= pattern[i + 2]
            i += 3
        else:
            hit = hit or lo == ch
            i += 1
    if i >= len(pattern):
        return False, None
    return hit != negate, i + 1


def top_level_string(raw: bytes, key: bytes, limit: int = 4096) -> str | None:
    """A top-level string value of a raw JSON object without parsing it: exactly one
    unescaped `"key":` followed by a plain string (no escapes) of at most `limit` bytes;
    else None. (Captured text sits inside JSON strings, where a quote is escaped.)"""
    needle = b'"' + key + b'"'
    hits: list[int] = []
    start = 0
    while len(hits) < 2:
        i = raw.find(needle, start)
        if i < 0:
            break
        start = i + len(needle)
        if i > 0 and raw[i - 1:i] == b"\\":
            continue
        hits.append(start)
    if len(hits) != 1:
        return None
    rest = raw[hits[0]:hits[0] + limit + 64].lstrip(b" \t\r\n")
    if not rest.startswith(b":"):
        return None
    rest = rest[1:].lstrip(b" \t\r\n")
    end = rest.find(b'"', 1)
    if not rest.startswith(b'"') or end < 0 or b"\\" in rest[1:end]:
        return None
    try:
        return rest[1:end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def hook_project(raw: bytes) -> str:
    """The project a hook payload belongs to: CLAUDE_PROJECT_DIR, else the payload's
    top-level `cwd` (scanned, not parsed), else the working directory; canonical."""
    if os.environ.get("CLAUDE_PROJECT_DIR", "").strip():
        return project_dir()
    return project_dir(top_level_string(raw, b"cwd"))
