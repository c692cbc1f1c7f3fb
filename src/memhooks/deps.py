"""memhooks' runtime dependencies, in one place.

pyproject.toml's [project.dependencies] lists the same requirements (a test keeps the two
equal); the plugin bootstrap and `memhooks doctor` check that a Python can import MODULES.
Plain syntax and no imports: the bootstrap reads this file with any python3, even one too
old for memhooks, to tell its user so.
"""

# (requirement as pyproject.toml writes it, the module it provides)
REQUIREMENTS = (
    ("pydantic>=2.5", "pydantic"),
    ("sqlite-utils>=3.35", "sqlite_utils"),
    ("click>=8.1", "click"),
    ("mcp>=2.0,<3", "mcp"),
    ("httpx>=0.27", "httpx"),
    ("rich>=13", "rich"),
)

MODULES = tuple(module for _requirement, module in REQUIREMENTS)
