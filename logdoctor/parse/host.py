"""Grammars for host lines (filled in by the host parser work)."""

from __future__ import annotations

from logdoctor.parse.registry import Grammar

GRAMMARS: list[Grammar] = []
