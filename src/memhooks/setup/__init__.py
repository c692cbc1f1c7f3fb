"""Setup: install/uninstall into Claude Code's settings, doctor."""
