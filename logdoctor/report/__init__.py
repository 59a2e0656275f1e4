"""Renderers of one result model (engine.result.Diagnosis): rich terminal, JSON, Markdown."""
