"""`--format json` is one object a run, valid against the published docs/schema/report.schema.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.engine.rules import load_rules
from logdoctor.pipeline.run import diagnose_parsed, local_line_sources, parse_sources
from logdoctor.report.json import fleet_report, render_json, schema_text

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "schema" / "report.schema.json"
STORY = ROOT / "fixtures" / "logs" / "story"


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_published_schema_is_the_models() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == schema_text(), "run `make schema` and commit the result"


@pytest.mark.parametrize("name", sorted(p.name for p in STORY.glob("*.log")))
def test_diagnose_json_is_valid(name: str) -> None:
    result = CliRunner().invoke(main, ["diagnose", str(STORY / name), "--format", "json"])
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    _validator().validate(data)


def test_diff_json_is_valid() -> None:
    args = ["diff", str(STORY / "sglang-mtp-tp2-a6000.log"), str(STORY / "vllm-dflash-tp2-a6000.log")]
    data = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    assert data["report"] == "diff"
    _validator().validate(data)


def test_fleet_json_is_one_object_with_the_hosts_inside() -> None:
    rules = load_rules(())
    diagnoses = []
    for name in ("vllm-dflash-tp2-a6000.log", "vllm-mtp-tp2-a6000-healthy.log"):
        parsed = parse_sources(local_line_sources([str(STORY / name)]))
        diagnoses.append(diagnose_parsed(parsed, rules)[0])
    data: dict[str, Any] = json.loads(render_json(fleet_report(["kpro5", "kpro6"], diagnoses)))
    assert data["report"] == "fleet" and [h["host"] for h in data["hosts"]] == ["kpro5", "kpro6"]
    assert data["hosts"][0]["findings"][0]["cause"] == "spec-low-acceptance"
    _validator().validate(data)


def test_schema_rejects_what_no_report_is() -> None:
    data = json.loads(
        CliRunner().invoke(main, ["diagnose", str(STORY / "vllm-dflash-tp2-a6000.log"), "--format", "json"]).stdout
    )
    broken = {**data, "findings": [{**data["findings"][0], "score": "high"}]}
    assert not _validator().is_valid(broken)
    assert not _validator().is_valid([data])  # an array is never a report
