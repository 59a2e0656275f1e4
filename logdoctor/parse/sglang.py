"""Grammars for sglang lines (filled in by the sglang parser work)."""

from __future__ import annotations

from logdoctor.parse.registry import Grammar

GRAMMARS: list[Grammar] = []
