# shellcheck shell=bash
# Sourced by the hooks/ and bin/ shims: pick the Python that runs memhooks (plugin mode).
#
# Sets MEMHOOKS_ROOT (the plugin/checkout root), MEMHOOKS_ENTRY, MEMHOOKS_BOOTSTRAP,
# MEMHOOKS_STATE (where the cached answer and the plugin's venv live), PY (the python for the
# standard-library-only hot paths; empty if there is none) and MEMHOOKS_FULL (a python that
# has the dependencies; may be empty). Order: $MEMHOOKS_PYTHON, then the answer SessionStart
# cached in $MEMHOOKS_STATE/python.marker (a python3 on PATH with the dependencies, else the
# plugin's venv), then the interpreter recorded in $MEMHOOKS_STATE/hot.python, then python3 on
# PATH (whose first run records its real interpreter in hot.python). Bash builtins only on this path: it runs
# on every PostToolUse.
case "${BASH_SOURCE[0]}" in */*) _mh_bin="${BASH_SOURCE[0]%/*}" ;; *) _mh_bin=. ;; esac
MEMHOOKS_ROOT="$_mh_bin/.."
MEMHOOKS_ENTRY="$MEMHOOKS_ROOT/src/memhooks/_entry.py"
MEMHOOKS_BOOTSTRAP="$MEMHOOKS_ROOT/src/memhooks/bootstrap.py"
if [ -n "${CLAUDE_PLUGIN_DATA:-}" ]; then
  MEMHOOKS_STATE="$CLAUDE_PLUGIN_DATA"
elif [ -n "${MEMHOOKS_DB:-}" ]; then
  case "$MEMHOOKS_DB" in */*) MEMHOOKS_STATE="${MEMHOOKS_DB%/*}" ;; *) MEMHOOKS_STATE=. ;; esac
else
  case "${OSTYPE:-}" in
    darwin*) MEMHOOKS_STATE="$HOME/Library/Application Support/memhooks" ;;
    *) MEMHOOKS_STATE="${XDG_DATA_HOME:-$HOME/.local/share}/memhooks" ;;
  esac
fi
_mh_user_py="${MEMHOOKS_PYTHON:-}"

memhooks_resolve() {
  PY="" MEMHOOKS_FULL="" MEMHOOKS_MARKED=""
  if [ -n "$_mh_user_py" ] && [ -x "$_mh_user_py" ]; then
    PY="$_mh_user_py" MEMHOOKS_FULL="$_mh_user_py"
    return 0
  fi
  local k v hot="" full=""
  if [ -r "$MEMHOOKS_STATE/python.marker" ]; then
    MEMHOOKS_MARKED=1
    while IFS='=' read -r k v; do
      case "$k" in hot) hot="$v" ;; full) full="$v" ;; esac
    done <"$MEMHOOKS_STATE/python.marker"
  fi
  if [ -n "$full" ] && [ -x "$full" ]; then MEMHOOKS_FULL="$full"; fi
  if [ -n "$hot" ] && [ -x "$hot" ]; then PY="$hot"; else PY="$MEMHOOKS_FULL"; fi
  if [ -z "$PY" ] && [ -r "$MEMHOOKS_STATE/hot.python" ]; then
    # The launcher a hot path wrote on its first run: the absolute interpreter behind
    # python3, so a pyenv-style shell shim on PATH is paid once, not on every call.
    read -r hot <"$MEMHOOKS_STATE/hot.python"
    if [ -n "$hot" ] && [ -x "$hot" ]; then PY="$hot"; fi
  fi
  if [ -z "$PY" ]; then
    PY="$(command -v python3 2>/dev/null)"
    # Missing or stale: this run resolves python3 once and records what it really is.
    [ -n "$PY" ] && export MEMHOOKS_HOT_FILE="$MEMHOOKS_STATE/hot.python"
  fi
  # Children (the detached ingester, lc-cache-* refreshes) need the dependencies.
  if [ -n "$MEMHOOKS_FULL" ]; then
    export MEMHOOKS_PYTHON="$MEMHOOKS_FULL"
  elif [ -n "$MEMHOOKS_MARKED" ]; then
    export MEMHOOKS_NO_SPAWN=1  # known: no python with the dependencies yet (venv being built)
  fi
  return 0
}
memhooks_resolve
