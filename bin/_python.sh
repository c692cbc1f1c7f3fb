# Sourced by the hooks/ and bin/ shims: pick the Python that runs memhooks.
# Order: $MEMHOOKS_PYTHON, the plugin's own venv in $CLAUDE_PLUGIN_DATA, python3 on PATH.
# Sets MEMHOOKS_ROOT (the plugin/checkout root), MEMHOOKS_ENTRY and PY (empty if none).
MEMHOOKS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." 2>/dev/null && pwd)"
MEMHOOKS_ENTRY="$MEMHOOKS_ROOT/src/memhooks/_entry.py"
PY=""
if [ -n "${MEMHOOKS_PYTHON:-}" ] && [ -x "${MEMHOOKS_PYTHON}" ]; then
  PY="$MEMHOOKS_PYTHON"
elif [ -n "${CLAUDE_PLUGIN_DATA:-}" ] && [ -x "${CLAUDE_PLUGIN_DATA}/venv/bin/python" ]; then
  PY="${CLAUDE_PLUGIN_DATA}/venv/bin/python"
else
  PY="$(command -v python3 2>/dev/null || true)"
fi
