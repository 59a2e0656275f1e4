"""Envelopes and engine grammars: physical log lines in, typed events out (see pipeline.py)."""
