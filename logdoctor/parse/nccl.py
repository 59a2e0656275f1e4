"""Grammars for nccl lines (filled in by the nccl parser work)."""

from __future__ import annotations

from logdoctor.parse.registry import Grammar

GRAMMARS: list[Grammar] = []
