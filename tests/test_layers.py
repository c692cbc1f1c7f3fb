"""The layer direction, enforced on the source: a lower layer never imports a higher one, not
even inside a function, and no room imports in a circle (docs/architecture.md)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "memhooks"
# Low to high. Leaf modules (names, files, config, redact, egress, ...) are 0; entry/ (one
# module per process) sits just above the rooms it composes, beside team/; the dispatchers
# (_entry, _launch, _console) sit on top and may import anything.
RANK = {"store": 1, "capture": 2, "ingest": 2, "recall": 2, "warm": 2, "entry": 3, "team": 3,
        "setup": 4, "cli": 4}
ENTRY = {"_entry", "_launch", "_console"}


def room(module: str) -> str:
    """`memhooks.store.queries` -> `store`; a leaf module names itself."""
    return module.split(".")[1] if module.count(".") else ""


def rank(module: str) -> int:
    name = room(module)
    if name in ENTRY:
        return 9
    return RANK.get(name, 0)


def imports(root: Path):
    """(importing module, imported memhooks module, line) for every import statement in the
    tree, function-level ones included."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        package = list(rel[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    names = [".".join(base + ([node.module] if node.module else []))]
                else:
                    names = [node.module or ""]
                if node.module is None or names[0].count(".") == 0:  # `from memhooks import x`
                    names = [f"{names[0]}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                if name.startswith("memhooks.") and room(name) != room(module):
                    yield module, name, node.lineno


def against_direction(root: Path) -> list[str]:
    return [f"{m}:{line} imports {n}" for m, n, line in imports(root) if rank(n) > rank(m)]


def room_cycles(root: Path) -> list[str]:
    """Pairs of rooms that import each other (directly or through others)."""
    graph: dict[str, set[str]] = {}
    for m, n, _ in imports(root):
        if room(m) in RANK and room(n) in RANK:
            graph.setdefault(room(m), set()).add(room(n))

    def reach(a: str) -> set[str]:
        seen, todo = set(), [a]
        while todo:
            for b in graph.get(todo.pop(), ()):
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    return sorted(f"{a} <-> {b}" for a in graph for b in reach(a) if a < b and a in reach(b))


def test_no_import_against_the_layer_direction():
    assert against_direction(SRC) == []


def test_no_room_imports_another_that_imports_it_back():
    assert room_cycles(SRC) == []


def test_a_planted_back_import_is_caught(tmp_path):
    tree = tmp_path / "memhooks"
    shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
    target = tree / "store" / "queries.py"
    target.write_text(target.read_text(encoding="utf-8")
                      + "\n\ndef planted():\n    from memhooks.cli.main import main\n\n    return main\n",
                      encoding="utf-8")
    before = set(against_direction(SRC))
    found = sorted(set(against_direction(tree)) - before)
    assert len(found) == 1 and found[0].startswith("memhooks.store.queries:")
    assert found[0].endswith("imports memhooks.cli.main")
    (tree / "recall" / "planted.py").write_text("from memhooks.team import store\n", encoding="utf-8")
    assert sorted(set(against_direction(tree)) - before) == sorted(
        found + ["memhooks.recall.planted:1 imports memhooks.team"])


def test_a_planted_room_cycle_is_caught(tmp_path):
    tree = tmp_path / "memhooks"
    shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "warm" / "planted.py").write_text("import memhooks.recall.search\n", encoding="utf-8")
    (tree / "recall" / "planted.py").write_text("def f():\n    import memhooks.warm.rank\n", encoding="utf-8")
    assert "recall <-> warm" in room_cycles(tree)


# Where an import inside a function is allowed: the process entry points (entry/, the
# dispatchers _entry and _launch, bootstrap), which load each process's path only; and the
# optional-dependency spots, which import an optional extra only where it is used.
DEFERRING = {"memhooks._entry", "memhooks._launch", "memhooks.bootstrap"}
OPTIONAL_SPOTS = {  # module -> the optional distributions it may import inside a function
    "memhooks.team.store": {"psycopg"},  # driver(): the team database's optional driver
    # The one standard-library module read late: only a config.toml that is not flat `key =
    # value` lines needs tomllib, which costs several ms (re, datetime) on every hook.
    "memhooks.config_file": {"tomllib"},
    # The migration runner is built on sqlite-utils, which no hot path may load: connect()
    # reaches it only when it migrates (hooks connect with migrate=False).
    "memhooks.store.connect": {"memhooks.store.migrate"},
    # The capture hook's rare branches: what a captured answer with no secret in it never
    # needs (json and re ~6 ms, hashlib ~3 ms, the packs ~2 ms, with python -c pass at 17 ms).
    "memhooks.redact": {"re"},  # a rule is compiled only when its triggers are present
    "memhooks.egress": {"re"},  # a text holding ESC, or a large one
    "memhooks.capture.payload": {"json"},  # a stub
    "memhooks.capture.tool_calls": {"json", "hashlib"},  # metadata only
    "memhooks.sections": {"json"},  # the sections SQL function: only where documents are written
    "memhooks.store.journal": {"json"},  # spooling an event, draining the spool
    "memhooks.store.health": {"json", "memhooks.store.packs"},  # incidents; a damaged journal's packs
    # The hybrid ranking's extra (`memhooks[semantic]`): half a second to import, only when on.
    "memhooks.recall.semantic": {"numpy"},
}
MAX_FUNCTION_IMPORTS = 58  # a ratchet: lower it as they go


def function_imports(root: Path) -> dict[str, list[tuple[int, str]]]:
    """module -> [(line, imported name)] for every import statement inside a function."""
    found: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("").parts
        module = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
        seen: set[int] = set()
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in seen:
                    seen.add(id(node))
                    name = node.module or "" if isinstance(node, ast.ImportFrom) else node.names[0].name
                    found.setdefault(module, []).append((node.lineno, "." * getattr(node, "level", 0) + name))
    return found


def misplaced_imports(found: dict[str, list[tuple[int, str]]]) -> list[str]:
    """Function-level imports outside the places allowed above."""
    out = []
    for module, rows in sorted(found.items()):
        if module in DEFERRING or module == "memhooks.entry" or module.startswith("memhooks.entry."):
            continue
        allowed = OPTIONAL_SPOTS.get(module, set())
        out += [f"{module}:{line} imports {name}" for line, name in rows
                if not any(name == a or name.startswith(a + ".") for a in allowed)]
    return out


def test_library_code_imports_at_the_module_top():
    found = function_imports(SRC)
    total = sum(len(rows) for rows in found.values())
    print(f"\nfunction-level imports: {total} in {len(found)} modules")
    for module, rows in sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {len(rows):4d} {module}")
    misplaced = misplaced_imports(found)
    assert misplaced == [], f"{len(misplaced)} misplaced: " + "\n".join(misplaced)
    assert total < MAX_FUNCTION_IMPORTS, total


def test_a_planted_function_import_is_caught(tmp_path):
    tree = tmp_path / "memhooks"
    tree.mkdir()
    (tree / "entry").mkdir()
    (tree / "team").mkdir()
    (tree / "entry" / "hook.py").write_text("def main():\n    import json\n", encoding="utf-8")
    (tree / "team" / "store.py").write_text(
        "def connect():\n    import psycopg\n    from memhooks import names\n", encoding="utf-8")
    (tree / "names.py").write_text("import os\n\n\ndef f():\n    from os import path\n", encoding="utf-8")
    found = function_imports(tree)
    assert sum(len(v) for v in found.values()) == 4
    assert misplaced_imports(found) == ["memhooks.names:5 imports os", "memhooks.team.store:3 imports memhooks"]
