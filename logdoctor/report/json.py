"""`--format json`: one JSON object a run, whatever it read (docs/json.md; schema docs/schema/report.schema.json).

    diagnose x.log               {"schema_version": 1, "sources": [...], "verdict": {...}, "findings": [...], ...}
    diagnose host1 host2         {"schema_version": 1, "report": "fleet", "hosts": [{"host": "host1", ...}, ...]}
    diagnose a.log b.log         {"schema_version": 1, "report": "deployments", "deployments": [{"deployment": ...}]}
                                 (files of two deployments, or --all-runs over a log with several server starts)
    diff a.log b.log             {"schema_version": 1, "report": "diff", "baseline": {...}, ...}

A run over several hosts is one object with the hosts as a list inside, each a diagnosis with its `host`,
so a reader never has to guess whether the top level is an object or an array.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from logdoctor.engine.diffresult import DiffReport
from logdoctor.engine.result import SCHEMA_VERSION, Diagnosis
from logdoctor.records import Record, field, pydantic_twin
from logdoctor.sanitize import clean

if TYPE_CHECKING:
    from pydantic import BaseModel


class HostDiagnosis(Diagnosis):
    """One host's diagnosis in a fleet report: the diagnosis and the target it was collected from."""

    host: str


class FleetOutlier(Record):
    """An instance far below its peers (a Prometheus fleet): generated tok/s per running request, the fleet
    median of the same, and why (its top finding)."""

    host: str
    per_request: float
    median: float
    reason: str


class FleetReport(Record):
    """Several hosts diagnosed in one run (`diagnose HOST HOST`, `--hosts FILE`, a Prometheus server's instances)."""

    schema_version: int = SCHEMA_VERSION
    report: Literal["fleet"] = "fleet"
    tool: dict[str, str] = field(default_factory=dict)
    hosts: list[HostDiagnosis]
    outliers: list[FleetOutlier] = field(default_factory=list)


class DeploymentDiagnosis(Diagnosis):
    """One deployment's diagnosis when local files (or the server starts of one log) are of several."""

    deployment: str


class DeploymentsReport(Record):
    """Several deployments diagnosed in one run (`diagnose a.log b.log` of different ones, `--all-runs`)."""

    schema_version: int = SCHEMA_VERSION
    report: Literal["deployments"] = "deployments"
    tool: dict[str, str] = field(default_factory=dict)
    deployments: list[DeploymentDiagnosis]


Report = Diagnosis | FleetReport | DeploymentsReport | DiffReport


def diagnosis_dict(diagnosis: Diagnosis) -> dict[str, Any]:
    return diagnosis.model_dump(mode="json")


def fleet_report(
    names: Sequence[str], diagnoses: Sequence[Diagnosis], noun: str = "hosts", outliers: Sequence[Any] = ()
) -> FleetReport | DeploymentsReport:
    """Several diagnoses as one object: hosts (`noun="hosts"`, with the fleet's `outliers`: objects with
    name, per_request, median and reason) or deployments of local files."""
    tool = next((d.tool for d in diagnoses if d.tool), {})
    pairs = list(zip(names, diagnoses, strict=True))
    if noun == "deployments":
        return DeploymentsReport(
            tool=tool, deployments=[DeploymentDiagnosis(**_fields(d), deployment=name) for name, d in pairs]
        )
    slow = [FleetOutlier(host=o.name, per_request=o.per_request, median=o.median, reason=o.reason) for o in outliers]
    return FleetReport(tool=tool, hosts=[HostDiagnosis(**_fields(d), host=name) for name, d in pairs], outliers=slow)


def _fields(record: Record) -> dict[str, Any]:
    return {name: getattr(record, name) for name in record.model_fields}


def render_json(report: Report) -> str:
    """The report as one JSON object; every string is `sanitize.clean`-ed first (ensure_ascii=False would pass
    C1 raw)."""
    data = clean(report).model_dump(mode="json")
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def _list_causes(schema: Any) -> None:
    """Every `cause` string of the schema names one of the causes (docs/causes.md): give them as its enum."""
    from logdoctor.engine.rules import CAUSES

    if isinstance(schema, dict):
        cause = schema.get("properties", {}).get("cause")
        if isinstance(cause, dict) and cause.get("type") == "string":
            cause["enum"] = list(CAUSES)
        for value in schema.values():
            _list_causes(value)
    elif isinstance(schema, list):
        for value in schema:
            _list_causes(value)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of every report `--format json` prints, from pydantic twins of the report records."""
    from pydantic import TypeAdapter

    twins: dict[type[Record], type[BaseModel]] = {}
    union = tuple(pydantic_twin(cls, twins) for cls in (Diagnosis, FleetReport, DeploymentsReport, DiffReport))
    report: Any = union[0] | union[1] | union[2] | union[3]
    schema = TypeAdapter(report).json_schema(mode="serialization")
    _list_causes(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "logdoctor --format json report",
        "description": "A diagnosis (one deployment), a fleet report (several hosts), several deployments or a diff. See docs/json.md.",
        **schema,
    }


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # `python -m logdoctor.report.json > docs/schema/report.schema.json` (make schema)
    print(schema_text(), end="")
