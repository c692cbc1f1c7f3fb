"""Private folders, the fallback folders, and the log line writer (standard library only;
a leaf: memhooks.config and memhooks.log both build on it)."""

import os
import stat
import time

APP = "memhooks"
LOG_NAME = "memhooks.log"
MAX_LOG_BYTES = 1024 * 1024


def make_private_dirs(folder: str) -> None:
    """Create `folder` and its missing parents 0700 whatever the umask (os.makedirs gives
    intermediate folders the umask's default)."""
    missing = []
    cur = os.path.abspath(folder)
    while cur and not os.path.isdir(cur):
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            continue
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask


def fallback_dirs() -> list[str]:
    """Per-user folders for a spool and a log when the store's folder is unwritable:
    `$XDG_STATE_HOME/memhooks` (default `~/.local/state/memhooks`), then a 0700 folder
    under the system temp dir."""
    state = os.path.expanduser(os.environ.get("XDG_STATE_HOME", "").strip())
    if not state or not os.path.isabs(state):
        state = os.path.join(os.path.expanduser("~"), ".local", "state")
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    return [os.path.join(state, APP), os.path.join(temp_dir(), f"{APP}-{uid}")]


def temp_dir() -> str:
    """The folder tempfile.gettempdir() picks ($TMPDIR, $TEMP, $TMP, then /tmp, /var/tmp,
    /usr/tmp, the current folder: the first that is a writable folder), without importing
    tempfile (re, random, shutil: ~4 ms on a hot path)."""
    names = [os.environ.get(n, "") for n in ("TMPDIR", "TEMP", "TMP")]
    for d in [n for n in names if n] + ["/tmp", "/var/tmp", "/usr/tmp"]:
        d = os.path.abspath(d)
        if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return d
    try:
        return os.getcwd()
    except OSError:
        return "/tmp"


def _write(path: str, data: bytes) -> None:
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        make_private_dirs(folder)
    try:
        if os.path.getsize(path) > MAX_LOG_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def write_log_line(path: str, message: str) -> None:
    """Append one stamped line to the log at `path` (rotated at 1 MiB, one old file kept,
    created 0600), or in a fallback folder when that one is unwritable; never raises."""
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        line = f"{stamp} pid={os.getpid()} {message}".replace("\x00", "")
        if not line.endswith("\n"):
            line += "\n"
        data = line.encode("utf-8", "replace")
        try:
            _write(path, data)
            return
        except OSError:
            pass
        for folder in fallback_dirs():
            try:
                _write(os.path.join(folder, LOG_NAME), data)
                return
            except OSError:
                continue
    except Exception:  # noqa: BLE001 - the log must never break a hook
        pass


def read_capped(stream, cap: int) -> tuple[bytes, int]:
    """Read up to `cap` bytes; drain and count the rest. Returns (data, total). (Here, a
    leaf, so that SessionStart reads its stdin before it imports the journal.)"""
    data = stream.read(cap + 1)
    if data is None:
        return b"", 0
    total = len(data)
    if total <= cap:
        return data, total
    while True:
        chunk = stream.read(1024 * 1024)
        if not chunk:
            break
        total += len(chunk)
    return data[:cap], total


def escape_field(text: str) -> str:
    """One tab-separated field of memhooks' own line files (the reads log, the answers file):
    `%`, tab, LF and CR percent-escaped, so no value can break a line or a field."""
    return text.replace("%", "%25").replace("\t", "%09").replace("\n", "%0A").replace("\r", "%0D")


def unescape_field(text: str) -> str:
    # Every `%` of the original became `%25`, so each code is decoded exactly once.
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%09", "\t").replace("%25", "%")


def open_regular(path: str, flags: int, mode: int = 0o600) -> int | None:
    """A file descriptor for `path` when it is a regular file, never through a symlink and
    never blocking on a FIFO (memhooks' own files beside the store); None when it is missing,
    cannot be opened, or is anything but a regular file."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None
