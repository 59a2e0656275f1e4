"""`--format json`: the Diagnosis model as versioned JSON (schema in docs/json.md)."""

from __future__ import annotations

import json
from typing import Any

from logdoctor.engine.result import Diagnosis
from logdoctor.sanitize import clean


def diagnosis_dict(diagnosis: Diagnosis) -> dict[str, Any]:
    return diagnosis.model_dump(mode="json")


def render_json(diagnosis: Diagnosis | list[Diagnosis] | dict[str, Any]) -> str:
    """The report as JSON; every string is `sanitize.clean`-ed first (ensure_ascii=False would pass C1 raw)."""
    diagnosis = clean(diagnosis)
    if isinstance(diagnosis, Diagnosis):
        data: Any = diagnosis_dict(diagnosis)
    elif isinstance(diagnosis, list):
        data = [diagnosis_dict(d) for d in diagnosis]
    else:
        data = diagnosis
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)
