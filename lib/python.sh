# shellcheck shell=sh
# Sourced by the hooks/ and bin/ shims (kept out of bin/, which Claude Code puts on the agent's PATH): pick the Python that runs memhooks (plugin mode).
# POSIX sh (the hooks run under sh, which is dash on Debian: about 1 ms less per hook than
# bash); the bin/ shims that bash runs source it too. The caller sets _mh_d, its own folder.
#
# Sets MEMHOOKS_ROOT (the plugin/checkout root), MEMHOOKS_ENTRY, MEMHOOKS_BOOTSTRAP,
# MEMHOOKS_STATE (where the cached answer and the plugin's venv live), PY (the python for the
# standard-library-only hot paths; empty if there is none) and MEMHOOKS_FULL (a python that
# has the dependencies; may be empty). Order: $MEMHOOKS_PYTHON, then the answer SessionStart
# cached in $MEMHOOKS_STATE/python.marker (a python3 on PATH with the dependencies, else the
# plugin's venv), then the interpreter recorded in $MEMHOOKS_STATE/hot.python, then python3 on
# PATH (whose first run records its real interpreter in hot.python). Shell builtins only on this path: it runs
# on every PostToolUse.
MEMHOOKS_ROOT="${_mh_d:-.}/.."
MEMHOOKS_ENTRY="$MEMHOOKS_ROOT/src/memhooks/_entry.py"
MEMHOOKS_BOOTSTRAP="$MEMHOOKS_ROOT/src/memhooks/bootstrap.py"

# A path setting read as memhooks.config reads one: blanks trimmed, a leading `~` or `~user`
# expanded; "" when unset or relative (relative to the hook's working folder, the project,
# where nothing of memhooks may be created). Sets _mh_p.
_mh_abs() {
  _mh_p="$1"
  case "$_mh_p" in
    "") return 0 ;;
    [[:space:]]* | *[[:space:]])  # (the trimming idiom is slow: only when needed)
      _mh_p="${_mh_p#"${_mh_p%%[![:space:]]*}"}"
      _mh_p="${_mh_p%"${_mh_p##*[![:space:]]}"}" ;;
  esac
  case "$_mh_p" in
    "~" | "~/"*)
      if [ -n "${HOME+x}" ]; then _mh_h="$HOME"; else eval "_mh_h=~"; fi
      _mh_p="$_mh_h${_mh_p#"~"}" ;;
    "~"?*)
      _mh_u="${_mh_p%%/*}"
      _mh_u="${_mh_u#"~"}"
      case "$_mh_u" in
        "" | [!A-Za-z0-9._]* | *[!A-Za-z0-9._-]*) ;;  # not a plain user name: left as it is
        *)
          eval "_mh_h=~$_mh_u"  # a checked user name: tilde expansion only
          if [ "$_mh_h" != "~$_mh_u" ]; then _mh_p="$_mh_h${_mh_p#"~$_mh_u"}"; fi ;;
      esac ;;
  esac
  case "$_mh_p" in /*) ;; *) _mh_p="" ;; esac
}

# An executable `$1` in an absolute folder of PATH (never the working folder). Sets _mh_p.
_mh_which() {
  _mh_p=""
  local rest="${PATH:-}:" dir
  while [ -n "$rest" ]; do
    dir="${rest%%:*}"
    rest="${rest#*:}"
    case "$dir" in
      /*) if [ -f "$dir/$1" ] && [ -x "$dir/$1" ]; then _mh_p="$dir/$1"; return 0; fi ;;
    esac
  done
  return 0
}

# The state folder: $CLAUDE_PLUGIN_DATA, else the folder of $MEMHOOKS_DB, else the user data
# dir (as memhooks.bootstrap.default_state_dir); a relative setting counts as unset.
_mh_abs "${CLAUDE_PLUGIN_DATA:-}"
_mh_plugin_data="$_mh_p"
_mh_abs "${MEMHOOKS_DB:-}"
_mh_db="$_mh_p"
if [ -n "$_mh_plugin_data" ]; then
  MEMHOOKS_STATE="$_mh_plugin_data"
elif [ -n "$_mh_db" ]; then
  MEMHOOKS_STATE="${_mh_db%/*}"
  [ -n "$MEMHOOKS_STATE" ] || MEMHOOKS_STATE=/
else
  case "${OSTYPE:-}" in
    darwin*) _mh_abs "~/Library/Application Support" ;;
    *) _mh_abs "${XDG_DATA_HOME:-}"; [ -n "$_mh_p" ] || _mh_abs "~/.local/share" ;;
  esac
  MEMHOOKS_STATE="$_mh_p/memhooks"
fi
# MEMHOOKS_PYTHON: `~` expanded; a bare name is looked up on PATH; a relative path (which
# would run a program from the project) is ignored, for the Python children too.
_mh_user_py="${MEMHOOKS_PYTHON:-}"
case "$_mh_user_py" in
  "" | */* | "~"*) _mh_abs "$_mh_user_py"; _mh_user_py="$_mh_p" ;;
  *) _mh_which "$_mh_user_py"; _mh_user_py="$_mh_p" ;;
esac
[ -n "$_mh_user_py" ] || unset MEMHOOKS_PYTHON

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
