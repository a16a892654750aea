"""Helpers that know nothing of gpulint: safe text, globs, folder walks, files read and
written safely, a cache of JSON data by content digest, the process's start-up, JSON Schema
cost.

May import: the standard library and third-party packages only -- never another gpulint
module (``tests/test_architecture.py`` holds every package to its row).
"""
