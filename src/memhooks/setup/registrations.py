"""How memhooks is registered with Claude Code, for `memhooks doctor`: the settings files
that `memhooks install` writes (memhooks.setup.install reads those), and the plugin: a
plugin session (CLAUDE_PLUGIN_ROOT), installed_plugins.json and `enabledPlugins`."""

from __future__ import annotations

import json
import os

from memhooks.setup.entries import claude_config_dir, targets


def plugin_registrations(project: str) -> list[str]:
    """Every way the memhooks plugin is loaded into Claude Code here, in words: this process
    runs inside a plugin session (CLAUDE_PLUGIN_ROOT: a marketplace install or `--plugin-dir`),
    and each `memhooks@<marketplace>` in installed_plugins.json that no settings file's
    `enabledPlugins` turns off (a slash command's shell has no CLAUDE_PLUGIN_ROOT, so the
    files are what tell)."""
    found: list[str] = []
    env_root = os.environ.get("CLAUDE_PLUGIN_ROOT", "").strip()
    if env_root:
        found.append(f"this session runs the plugin from {env_root}")
    enabled: dict[str, bool] = {}
    for scope in ("user", "project", "local"):
        try:
            path = targets(scope, project)["hooks"]
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            continue
        plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(plugins, dict):
            for key, on in plugins.items():
                if isinstance(key, str) and key.startswith("memhooks@"):
                    enabled[key] = bool(on)  # user, then project, then local: the last wins
    record = os.path.join(claude_config_dir(), "plugins", "installed_plugins.json")
    try:
        with open(record, encoding="utf-8") as fh:
            installed = json.load(fh).get("plugins") or {}
    except (OSError, ValueError, AttributeError):
        installed = {}
    for key, entries in (installed.items() if isinstance(installed, dict) else ()):
        if not (isinstance(key, str) and key.startswith("memhooks@")) or enabled.get(key) is False:
            continue
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict):
                where = entry.get("installPath") or "?"
                found.append(f"plugin {key} ({entry.get('scope') or '?'} scope, {where})")
    for key, on in enabled.items():
        if on and key not in installed and not env_root:
            found.append(f"plugin {key} enabled in settings (not installed yet)")
    return found


def check_registered(installed_any: bool, plugins: list[str]) -> tuple[str, str, str]:
    """How memhooks is registered: settings-file entries (`memhooks install`), the plugin,
    both (every hook runs twice), or neither."""
    if installed_any and plugins:
        return ("registered", "warn", "registered twice, so every hook runs twice: "
                     "`memhooks install` entries and " + "; ".join(plugins)
                     + " (keep one: `memhooks uninstall`, or `claude plugin uninstall memhooks`)")
    if plugins:
        return ("registered", "ok", "; ".join(plugins))
    if installed_any:
        return ("registered", "ok", "settings files (`memhooks install`)")
    hint = ("run `memhooks install` (pip/uv install), or load the plugin "
            "(`claude --plugin-dir <repo>` / a marketplace)")
    return ("registered", "warn", f"memhooks is not registered with Claude Code here: {hint}")
