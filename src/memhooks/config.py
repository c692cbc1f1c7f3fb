"""Settings from the environment (standard library only; used on hot paths)."""

import os
import sys

from memhooks.config_file import load
from memhooks.config_file import parse_size as parse
from memhooks.files import APP, LOG_NAME, write_log_line

#: the package's stdlib-only entry script, run by detached children (ingest, warm)
ENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_entry.py")

DB_NAME = "memhooks.db"

MiB = 1024 * 1024


def _env_num(name: str, default: float, cast=float):
    raw = setting(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        val = cast(raw)
    except ValueError:
        return default
    return val if val >= 0 else default


def number(env: str, default: float) -> float:
    """A number >= 0 from the setting `env` (the environment, else the settings file), else
    `default`."""
    return _env_num(env, default)


def user_data_dir() -> str:
    """Same answer as platformdirs.user_data_dir('memhooks') without importing it (but a
    relative or `~` XDG_DATA_HOME is read as the XDG rule asks)."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP)
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, APP, APP)
    # A relative XDG_DATA_HOME is ignored (the XDG rule; relative to a hook's working folder,
    # it would put the store inside a project), as lib/python.sh does.
    base = os.path.expanduser(os.environ.get("XDG_DATA_HOME", "").strip())
    if not base or not os.path.isabs(base):
        base = os.path.expanduser("~/.local/share")
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


CONFIG_NAME = "config.toml"


def config_path(db: str | None = None) -> str:
    """The settings file beside the store (`memhooks config path`)."""
    return beside(db or db_path(), CONFIG_NAME)


_FILE: list = [None, {}]  # (the file's identity when read, its values)


def file_settings(db: str | None = None) -> dict:
    """The settings file's values ({} when there is none: one stat). Read again only when
    the file changed (its size, mtime or inode); a broken file counts as empty (logged)."""
    path = config_path(db)
    try:
        st = os.stat(path)
    except OSError:
        return {}
    ident = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    if _FILE[0] == ident:
        return _FILE[1]

    try:
        values = load(path)
    except (OSError, ValueError) as exc:
        write_log_line(log_path(db), f"settings file ignored: {exc}")
        values = {}
    _FILE[:] = [ident, values]
    return values


def setting(env: str) -> str | None:
    """A setting as text: the environment variable `env` (`MEMHOOKS_X`) when set and not
    blank, else key `x` of the settings file (a list joined with os.pathsep, a boolean as
    1 or 0), else None."""
    raw = os.environ.get(env)
    if raw is not None and raw.strip() != "":
        return raw
    value = file_settings().get(env[9:].lower()) if env.startswith("MEMHOOKS_") else None
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        return os.pathsep.join(str(v) for v in value)
    return str(value)


def switched_off(name: str) -> bool:
    """Whether the on/off setting `name` is off (`0`, `false`, `no`, `off`)."""
    return (setting(name) or "").strip().lower() in ("0", "false", "no", "off")


def store_exists(db: str | None = None) -> bool:
    """Whether anything was ever stored: the projections file, or a journal a capture hook
    wrote before any ingest. Read commands open (and so create) a store only then."""
    db = db or db_path()
    # (anything there: a directory in the file's place is damage the opening heals)
    return os.path.exists(db) or os.path.exists(journal_path(db))


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
#: the PreToolUse hook's stdin cap: a payload over it is not served (the call runs)
MAX_SERVE_STDIN = MiB
STUB_HEAD_BYTES = 64 * 1024


def offline() -> bool:
    return (setting("MEMHOOKS_OFFLINE") or "").strip().lower() in ("1", "true", "yes", "on")


def top_n(value: int | None = None) -> int:
    """How many libraries a warm resolves: `value`, else MEMHOOKS_TOP_N (default 20); at least 1."""
    return max(1, int(_env_num("MEMHOOKS_TOP_N", 20, int) if value is None else value))


def warm_budget_s() -> float:
    return _env_num("MEMHOOKS_WARM_BUDGET_S", 2.0)


def context7_api_url() -> str:
    return (os.environ.get("CONTEXT7_API_URL", "").strip() or "https://context7.com/api").rstrip("/")


# `memhooks add` / `refresh` (sources you add): limits of one run, each with an env override.

def add_max_pages() -> int:
    """Pages one `memhooks add`/`refresh` run visits at most, the index included (default 200)."""
    return max(1, int(_env_num("MEMHOOKS_ADD_MAX_PAGES", 200, int)))


def add_max_page_bytes() -> int:
    """Body bytes read from one response before it is cut off (default 4 MiB)."""
    return max(1024, int(_env_num("MEMHOOKS_ADD_MAX_PAGE_BYTES", 4 * MiB, int)))


def add_max_bytes() -> int:
    """Body bytes one run downloads in all (default 64 MiB)."""
    return max(1024, int(_env_num("MEMHOOKS_ADD_MAX_BYTES", 64 * MiB, int)))


def add_budget_s() -> float:
    """Wall time of one run, in seconds (default 300)."""
    return max(0.1, _env_num("MEMHOOKS_ADD_BUDGET_S", 300.0))


def add_timeout_s() -> float:
    """Time one request may take, connect to last byte, in seconds (default 20)."""
    return max(0.1, _env_num("MEMHOOKS_ADD_TIMEOUT_S", 20.0))


def parse_size(text) -> int | None:
    """Bytes from a size like `500MB`, `1GiB` or `1048576` (memhooks.config_file's rule);
    None when it is not one."""
    if not isinstance(text, str):
        return None

    return parse(text)


DEFAULT_MAX_STORE_BYTES = 1024**3


def max_store_bytes() -> int:
    """The size cap of the store's files (`MEMHOOKS_MAX_SIZE`, else `max_size` in the settings
    file; e.g. `500MB`, `1GiB`; default 1 GiB), enforced by the detached ingester after it
    ingests. An unreadable value is the default."""
    return parse_size(setting("MEMHOOKS_MAX_SIZE") or "") or DEFAULT_MAX_STORE_BYTES
