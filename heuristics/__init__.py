"""Heuristic methods: list schedulers, search, partitioners x per-device schedulers."""
