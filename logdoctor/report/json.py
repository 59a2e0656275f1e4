"""`--format json`: one JSON object a run, whatever it read (docs/json.md; schema docs/schema/report.schema.json).

    diagnose x.log               {"schema_version": 1, "sources": [...], "verdict": {...}, "findings": [...], ...}
    diagnose host1 host2         {"schema_version": 1, "report": "fleet", "hosts": [{"host": "host1", ...}, ...]}
    diff a.log b.log             {"schema_version": 1, "report": "diff", "baseline": {...}, ...}

A run over several hosts is one object with the hosts as a list inside, each a diagnosis with its `host`,
so a reader never has to guess whether the top level is an object or an array.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from logdoctor.engine.diffresult import DiffReport
from logdoctor.engine.result import SCHEMA_VERSION, Diagnosis
from logdoctor.sanitize import clean


class HostDiagnosis(Diagnosis):
    """One host's diagnosis in a fleet report: the diagnosis and the target it was collected from."""

    host: str


class FleetReport(BaseModel):
    """Several hosts diagnosed in one run (`diagnose HOST HOST`, `--hosts FILE`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    report: Literal["fleet"] = "fleet"
    tool: dict[str, str] = Field(default_factory=dict)
    hosts: list[HostDiagnosis]


Report = Diagnosis | FleetReport | DiffReport


def diagnosis_dict(diagnosis: Diagnosis) -> dict[str, Any]:
    return diagnosis.model_dump(mode="json")


def fleet_report(hosts: Sequence[str], diagnoses: Sequence[Diagnosis]) -> FleetReport:
    entries = [HostDiagnosis(**d.model_dump(), host=host) for host, d in zip(hosts, diagnoses, strict=True)]
    tool = next((d.tool for d in diagnoses if d.tool), {})
    return FleetReport(tool=tool, hosts=entries)


def render_json(report: Report) -> str:
    """The report as one JSON object; every string is `sanitize.clean`-ed first (ensure_ascii=False would pass
    C1 raw)."""
    data = clean(report).model_dump(mode="json")
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of every report `--format json` prints, from the pydantic models."""
    schema = TypeAdapter(Report).json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "logdoctor --format json report",
        "description": "A diagnosis (one deployment), a fleet report (several hosts) or a diff. See docs/json.md.",
        **schema,
    }


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # `python -m logdoctor.report.json > docs/schema/report.schema.json` (make schema)
    print(schema_text(), end="")
