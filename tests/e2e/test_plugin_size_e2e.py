"""The plugin installs only what it needs: from a checkout holding venvs and build output,
`claude plugin install memhooks@memhooks` (the marketplace's git source, answered offline by
the checkout) copies git's tracked files only, under 5 MB (`claude plugin validate --strict`, on the pinned
and the newest CLI, is test_plugin_install_e2e's)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from test_plugin_install_e2e import checkout_copy, cli_env, install_from_marketplace

pytestmark = pytest.mark.e2e
claude_bin = harness.claude_bin
LIMIT = 8 * 1024 * 1024  # the checkout is ~6.3 MiB (docs, tests, the search benchmark corpus); the junk below is 8 MiB


def folder_bytes(root: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root) for f in files)


def test_install_copies_the_plugin_not_the_venvs(claude_bin: Path, tmp_path: Path) -> None:
    checkout = checkout_copy(tmp_path / "memhooks")
    for junk in (".venv/lib/big.bin", ".venv-test/big.bin", "build/lib/big.bin", ".hypothesis/big.bin"):
        (checkout / junk).parent.mkdir(parents=True, exist_ok=True)
        (checkout / junk).write_bytes(os.urandom(2 * 1024 * 1024))
    home = tmp_path / "home"
    home.mkdir()
    root = install_from_marketplace(claude_bin, cli_env(home), checkout)
    size = folder_bytes(root)
    print(f"\ninstalled plugin: {size / 1024 / 1024:.1f} MiB at {root}")
    assert size < LIMIT, size
    assert not (root / ".venv").exists() and not (root / "build").exists()
    assert (root / "LICENSE").is_file() and (root / "src" / "memhooks" / "_entry.py").is_file()

