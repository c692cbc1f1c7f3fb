"""Settings from the environment (standard library only; used on hot paths)."""

import os
import sys

from memhooks.files import APP, LOG_NAME

#: the package's stdlib-only entry script, run by detached children (ingest, warm)
ENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_entry.py")

DB_NAME = "memhooks.db"

MiB = 1024 * 1024


def _env_num(name: str, default: float, cast=float):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        val = cast(raw)
    except ValueError:
        return default
    return val if val >= 0 else default


def user_data_dir() -> str:
    """Same answer as platformdirs.user_data_dir('memhooks') without importing it."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, APP, APP)
    base = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share")
    return os.path.join(base, APP)


def _configured(name: str) -> str | None:
    """An absolute path from the environment variable `name` (`~` expanded), or None.
    A relative path would put the store wherever the hook runs (inside a project, where
    it can be committed): it is refused with a log line."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    path = os.path.expanduser(raw)
    if not os.path.isabs(path):
        _refused(name, raw)
        return None
    return os.path.normpath(path)


_REFUSED: set = set()


def _refused(name: str, raw: str) -> None:
    if name in _REFUSED:
        return
    _REFUSED.add(name)  # also guards the log, which asks for db_path() itself
    from memhooks.files import write_log_line

    write_log_line(log_path(), f"{name}={raw!r} is not an absolute path: ignored, using the default location")


def db_path() -> str:
    """`MEMHOOKS_DB`, else `$CLAUDE_PLUGIN_DATA/memhooks.db`, else the user data dir.
    `~` is expanded; a relative path is refused (logged) and the next choice used."""
    explicit = _configured("MEMHOOKS_DB")
    if explicit:
        return explicit
    plugin_data = _configured("CLAUDE_PLUGIN_DATA")
    if plugin_data:
        return os.path.join(plugin_data, DB_NAME)
    return os.path.join(user_data_dir(), DB_NAME)


JOURNAL_NAME = "journal.db"


def journal_path(db: str | None = None) -> str:
    """The raw journal beside the store: `journal.db` next to `memhooks.db` (a store with
    another name, `x.db`, has `x.journal.db`)."""
    return beside(db or db_path(), JOURNAL_NAME)


def beside(db: str, name: str) -> str:
    """A file of the store's next to it: `name` next to `memhooks.db`; `x.<name>` next to a
    store with another name, `x.db` (so two stores in one folder keep theirs apart)."""
    folder, base = os.path.split(db)
    if base == DB_NAME:
        return os.path.join(folder, name)
    stem = base[:-3] if base.endswith(".db") else base
    return os.path.join(folder, f"{stem}.{name}")


def store_exists(db: str | None = None) -> bool:
    """Whether anything was ever stored: the projections file, or a journal a capture hook
    wrote before any ingest. Read commands open (and so create) a store only then."""
    db = db or db_path()
    return os.path.isfile(db) or os.path.isfile(journal_path(db))


def log_path(db: str | None = None) -> str:
    return os.path.join(os.path.dirname(db or db_path()), LOG_NAME)


def project_dir(cwd: str | None = None) -> str:
    """Canonical project key: `CLAUDE_PROJECT_DIR`, else the given cwd, else os.getcwd()."""
    raw = os.environ.get("CLAUDE_PROJECT_DIR", "").strip() or (cwd or "")
    if not raw:
        try:
            raw = os.getcwd()
        except OSError:
            return ""
    return canonical_path(raw) or raw


def canonical_path(path: str | None) -> str | None:
    """The real path of a project folder (the key projects are stored under), or the path as
    given when it cannot be resolved; None for no path."""
    if not path:
        return None
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def tier1_ttl_s() -> float:
    return _env_num("MEMHOOKS_TIER1_TTL_S", 24 * 3600.0)


def tier1_negative_ttl_s() -> float:
    return _env_num("MEMHOOKS_TIER1_NEGATIVE_TTL_S", 6 * 3600.0)


def tier1_error_ttl_s() -> float:
    """How long a failed API search (error, timeout) is remembered before a retry."""
    return _env_num("MEMHOOKS_TIER1_ERROR_TTL_S", 600.0)


def tier2_ttl_s() -> float:
    return _env_num("MEMHOOKS_TIER2_TTL_S", 4 * 3600.0)


def max_doc_bytes() -> int:
    """Cap for one captured document (default 2 MiB)."""
    return int(_env_num("MEMHOOKS_MAX_DOC_BYTES", 2 * MiB, int))


def max_write_bytes() -> int:
    """Cap for a body written back explicitly with `lc-cache-write tier2` (default 16 MiB)."""
    return max(max_doc_bytes(), int(_env_num("MEMHOOKS_MAX_WRITE_BYTES", 16 * MiB, int)))


MAX_EVENT_BYTES = 16 * MiB
STUB_HEAD_BYTES = 64 * 1024


def offline() -> bool:
    return os.environ.get("MEMHOOKS_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def top_n(value: int | None = None) -> int:
    """How many libraries a warm resolves: `value`, else MEMHOOKS_TOP_N (default 20); at least 1."""
    return max(1, int(_env_num("MEMHOOKS_TOP_N", 20, int) if value is None else value))


def warm_budget_s() -> float:
    return _env_num("MEMHOOKS_WARM_BUDGET_S", 2.0)


def context7_api_url() -> str:
    return (os.environ.get("CONTEXT7_API_URL", "").strip() or "https://context7.com/api").rstrip("/")


_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2,
               "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4, "kib": 1024,
               "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


def parse_size(text) -> int | None:
    """Bytes from a size like `500MB`, `1GiB`, `20 mb`, `1.5G` or `1048576` (decimal units
    for KB/MB/GB, binary ones for KiB/MiB/GiB); None when it is not one."""
    if not isinstance(text, str):
        return None
    raw = text.strip().lower().replace(" ", "").replace("_", "")
    i = 0
    while i < len(raw) and (raw[i].isdigit() or raw[i] == "."):
        i += 1
    number, unit = raw[:i], raw[i:]
    if not number or number.count(".") > 1 or unit not in _SIZE_UNITS or len(raw) > 32:
        return None
    value = float(number) * _SIZE_UNITS[unit]
    return int(value) if 0 < value < 2**62 else None


DEFAULT_MAX_STORE_BYTES = 1024**3


def max_store_bytes() -> int:
    """The size cap of the store folder (`MEMHOOKS_MAX_SIZE`, e.g. `500MB`, `1GiB`; default
    1 GiB), enforced by the detached ingester after it ingests. An unreadable value is the
    default."""
    return parse_size(os.environ.get("MEMHOOKS_MAX_SIZE", "")) or DEFAULT_MAX_STORE_BYTES
