"""Capture: hook entry points, the raw journal, replay and the detached ingester."""
