"""Discovery's engine hints come from the registry: process fragments, log globs and distributions."""

from __future__ import annotations

import shlex

import pytest

from logdoctor.registry import REGISTRY, EngineSpec
from logdoctor.sources import hostscripts


def test_every_serving_engine_declares_its_discovery_hints() -> None:
    for name in REGISTRY.names("serving"):
        spec = REGISTRY.get(name)
        assert spec is not None and spec.process_hints and spec.log_globs and spec.distribution, name


def test_the_scripts_carry_each_engines_hints_shell_quoted() -> None:
    for spec in hostscripts.discovered_engines():
        for hint in spec.process_hints:
            assert f"*{shlex.quote(hint)}*" in hostscripts.DISCOVERY_SCRIPT
        for glob in spec.log_globs:
            assert f"-name {shlex.quote(hostscripts._any_case(glob))}" in hostscripts.DISCOVERY_SCRIPT
        assert f"-e {shlex.quote(spec.name)} " in hostscripts.DISCOVERY_SCRIPT
        assert f'"{spec.distribution}"' in hostscripts.VERSIONS_SCRIPT
        assert hostscripts.ENGINE_RE.search(f"image-{spec.name.upper()}:latest")


def test_any_case_glob() -> None:
    assert hostscripts._any_case("*vllm*") == "*[vV][lL][lL][mM]*"
    assert hostscripts._any_case("trt-llm_*.log") == "[tT][rR][tT]-[lL][lL][mM]_*.[lL][oO][gG]"


@pytest.mark.parametrize(
    "spec",
    [
        EngineSpec(name="bad'name", label="Bad", kind="serving", process_hints=("bad serve",)),
        EngineSpec(name="trt", label="TRT", kind="serving", process_hints=("trt",), distribution='x"; rm -rf /'),
        EngineSpec(name="trt", label="TRT\nrm -rf /", kind="serving", process_hints=("trt",)),
    ],
)
def test_a_name_that_is_not_a_plain_word_is_refused(spec: EngineSpec) -> None:
    with pytest.raises(ValueError, match=repr(spec.name)):
        hostscripts.discovered_engines([*REGISTRY.specs(), spec])


def test_engines_without_process_hints_are_not_looked_for() -> None:
    spec = EngineSpec(name="collective2", label="C2", kind="collective")
    found = hostscripts.discovered_engines([*REGISTRY.specs(), spec])
    assert [s.name for s in found] == ["vllm", "sglang"]
