"""Merging memhooks' entries into settings data and taking them out again: hook groups,
the MCP server, the allow rules. Pure functions on parsed JSON; a step that is not the
JSON type it should be raises InstallError (nothing is written)."""

from __future__ import annotations

from memhooks.setup.entries import (
    SERVER_NAME,
    Entries,
    is_our_command,
    is_our_rule,
    is_our_server,
    mcp_container_path,
)
from memhooks.setup.settings_file import InstallError, container


def add_hooks(data: dict, entries: Entries, where: str) -> list[str]:
    """Add or refresh our hook groups. Returns the events changed."""
    hooks = data.get("hooks")
    if hooks is None:
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError(f"{where}: `hooks` is not a JSON object; left unchanged")
    changed = []
    for event, (matcher, command, timeout) in entries.hooks().items():
        groups = hooks.get(event)
        if groups is None:
            groups = hooks[event] = []
        if not isinstance(groups, list):
            raise InstallError(f"{where}: `hooks.{event}` is not a JSON array; left unchanged")
        wanted = {"type": "command", "command": command, "timeout": timeout}
        found = False
        new_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                new_groups.append(group)
                continue
            keep, touched = [], False
            shared = any(not (isinstance(h, dict) and is_our_command(h.get("command")))
                         for h in group["hooks"])
            for h in group["hooks"]:
                if isinstance(h, dict) and is_our_command(h.get("command")):
                    if found or (shared and group.get("matcher") != matcher):
                        # a duplicate of ours, or ours inside someone else's group with
                        # another matcher: drop it (a group of our own is added below)
                        touched = True
                        continue
                    found = True
                    if h != wanted or group.get("matcher") != matcher:
                        h = dict(wanted)
                        group["matcher"] = matcher
                        touched = True
                keep.append(h)
            if touched:
                changed.append(event)
                if not keep:
                    continue
                group["hooks"] = keep
            new_groups.append(group)
        groups[:] = new_groups
        if not found:
            groups.append({"matcher": matcher, "hooks": [wanted]})
            changed.append(event)
    return sorted(set(changed), key=list(entries.hooks()).index)


def remove_hooks(data: dict, where: str) -> list[str]:
    hooks = data.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict):
        raise InstallError(f"{where}: `hooks` is not a JSON object; left unchanged")
    changed = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        new_groups = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                kept = [h for h in group["hooks"]
                        if not (isinstance(h, dict) and is_our_command(h.get("command")))]
                if len(kept) != len(group["hooks"]):
                    changed.append(event)
                    if not kept:
                        continue  # the group held only ours: it was ours
                    group = {**group, "hooks": kept}
            new_groups.append(group)
        if event in changed:
            if new_groups:
                hooks[event] = new_groups
            else:
                del hooks[event]
    if changed and not hooks:
        del data["hooks"]
    return changed


def add_server(data: dict, scope: str, project: str, entries: Entries, where: str) -> tuple[bool, str]:
    path = mcp_container_path(scope, project)
    servers = container(data, path, create=True, where=where)
    spec = entries.server(scope)
    current = servers.get(SERVER_NAME)
    if current is not None and not is_our_server(current):
        return False, f"{where}: an MCP server named {SERVER_NAME!r} that memhooks did not add exists; left it alone"
    if current == spec:
        return False, ""
    servers[SERVER_NAME] = spec
    return True, ""


def remove_server(data: dict, scope: str, project: str, where: str) -> bool:
    path = mcp_container_path(scope, project)
    servers = container(data, path, create=False, where=where)
    if not servers or not is_our_server(servers.get(SERVER_NAME)):
        return False
    del servers[SERVER_NAME]
    # Drop the containers our removal emptied (walking back up).
    for depth in range(len(path), 0, -1):
        parent = container(data, path[: depth - 1], create=False, where=where)
        child = parent.get(path[depth - 1])
        if isinstance(child, dict) and not child:
            del parent[path[depth - 1]]
        else:
            break
    return True


def add_rules(data: dict, rules: list[str], where: str) -> list[str]:
    perms = container(data, ["permissions"], create=True, where=where)
    allow = perms.get("allow")
    if allow is None:
        allow = perms["allow"] = []
    if not isinstance(allow, list):
        raise InstallError(f"{where}: `permissions.allow` is not a JSON array; left unchanged")
    added = [r for r in rules if r not in allow]
    allow.extend(added)
    return added


def remove_rules(data: dict, where: str, plugin: bool = False) -> list[str]:
    perms = data.get("permissions")
    if not isinstance(perms, dict) or not isinstance(perms.get("allow"), list):
        return []
    removed = [r for r in perms["allow"] if is_our_rule(r, plugin)]
    if removed:
        perms["allow"] = [r for r in perms["allow"] if not is_our_rule(r, plugin)]
        if not perms["allow"]:
            del perms["allow"]
        if not perms:
            del data["permissions"]
    return removed

