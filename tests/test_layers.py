"""The layer direction, enforced on the source: a lower layer never imports a higher one, not
even inside a function, and no room imports in a circle (docs/architecture.md)."""

from __future__ import annotations

import ast
import io
import shutil
import tokenize
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "memhooks"
# Low to high. Leaf modules (names, files, config, redact, egress, ...) are 0; the entry
# points (_entry, _launch, _console) sit on top and may import anything.
RANK = {"store": 1, "capture": 2, "ingest": 2, "recall": 2, "warm": 2, "team": 3, "setup": 4, "cli": 4}
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


def unexplained_lazy_imports(root: Path) -> list[str]:
    """Functions that import inside their body with no `# lazy: <why>` comment anywhere in
    them (the hot paths import lazily on purpose; everything else imports at the top)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        reasons = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                   if tok.type == tokenize.COMMENT and "lazy:" in tok.string}
        for fn in ast.walk(ast.parse(text)):
            if (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(fn))
                    and not any(fn.lineno <= line <= (fn.end_lineno or fn.lineno) for line in reasons)):
                found.append(f"{path.relative_to(root).as_posix()}:{fn.lineno} {fn.name}")
    return found


def test_every_import_inside_a_function_says_why():
    assert unexplained_lazy_imports(SRC) == []


def test_a_planted_unexplained_lazy_import_is_caught(tmp_path):
    tree = tmp_path / "memhooks"
    shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "recall" / "planted.py").write_text(
        "def bare():\n    import json\n\n    return json\n\n\n"
        "def in_a_string():\n    import json\n\n    return 'lazy: not a comment', json\n\n\n"
        "def explained():\n    # lazy: the hot path imports only what this call needs\n    import json\n\n"
        "    return json\n", encoding="utf-8")
    assert unexplained_lazy_imports(tree) == ["recall/planted.py:1 bare", "recall/planted.py:7 in_a_string"]

