"""The import contracts of pyproject.toml (run by `lint-imports` in `make lint`) name every module of ours.

A new top-level module (or package) must be placed: forbidden to `logdoctor.events` and `logdoctor.records`,
below the application unless it is part of it, and one of the core modules that may not import a named engine
package, unless it is an engine or input package itself."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NAMED_ENGINE_PACKAGES = {"logdoctor.engines", "logdoctor.inputs"}


def _top_level_modules() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "logdoctor").iterdir():
        if path.suffix == ".py" and path.stem not in ("__init__", "__main__"):
            names.add(f"logdoctor.{path.stem}")
        elif path.is_dir() and (path / "__init__.py").exists():
            names.add(f"logdoctor.{path.name}")
    return names


def _contract(words: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if words in c["name"])


def test_events_is_forbidden_every_other_module() -> None:
    contract = _contract("are the shared vocabulary")
    assert contract["source_modules"] == ["logdoctor.events", "logdoctor.records"]
    missing = _top_level_modules() - {"logdoctor.events", "logdoctor.records"} - set(contract["forbidden_modules"])
    assert not missing, f"add {sorted(missing)} to the events contract's forbidden_modules in pyproject.toml"


def test_every_module_below_the_application_is_kept_from_it() -> None:
    contract = _contract("the application")
    application = {"logdoctor.app", "logdoctor.testing"}
    assert contract["forbidden_modules"] == sorted(application)
    missing = _top_level_modules() - application - set(contract["source_modules"])
    assert not missing, f"add {sorted(missing)} to the application contract's source_modules in pyproject.toml"


def test_every_core_module_is_kept_from_named_engines() -> None:
    contract = _contract("never imports a named one")
    assert contract["forbidden_modules"] == ["logdoctor.engines.*", "logdoctor.inputs.*"]
    missing = _top_level_modules() - NAMED_ENGINE_PACKAGES - set(contract["source_modules"])
    assert not missing, f"add {sorted(missing)} to the named-engine contract's source_modules in pyproject.toml"


# --- engine names -------------------------------------------------------------------------------------------------
# Outside engines/ and the registry, code asks the registry (kind, label, capabilities) rather than spelling an
# engine's name. What remains is data or text, not a decision about which engine a log is from: each file's count of
# literal names, and why they stay. A new literal fails here; a removed one too, so that the list only shrinks.
ENGINE_LITERAL_RE = re.compile(r"[\"'](vllm|sglang|nccl)[\"']")
ENGINE_LITERALS_ALLOWED: dict[str, tuple[int, str]] = {
    "logdoctor/app/stores.py": (2, "a ClickHouse --where example in help text"),
    "logdoctor/app/urltargets.py": (1, "a Prometheus selector example in the docstring"),
    "logdoctor/diff/compare.py": (1, "an example in the docstring"),
    "logdoctor/engine/advisories.py": (
        6,
        "advisory files name the package they apply to: facts and labels per package",
    ),
    "logdoctor/events.py": (4, "stats format ids and a client backend name, as the logs print them"),
    "logdoctor/facts/combiners/communication.py": (2, "torch.distributed's backend name `nccl`, not the engine"),
    "logdoctor/facts/combiners/config.py": (1, "an example in the docstring"),
    "logdoctor/facts/combiners/derived.py": (
        2,
        "an evidence kind named for NCCL lines; SGLang's CUDA graph capture step",
    ),
    "logdoctor/facts/combiners/environment.py": (4, "host facts named for the packages an environment dump lists"),
    "logdoctor/facts/combiners/identity.py": (2, "an example in the docstring; the nccl.version fact"),
    "logdoctor/facts/combiners/speculative.py": (1, "a stats format id (SGLang's accept rate meaning)"),
    "logdoctor/facts/combiners/stats.py": (1, "a stats format id prefix"),
    "logdoctor/facts/partial.py": (1, "a stats format id prefix"),
    "logdoctor/facts/speculation.py": (2, "measured per-engine drafting overhead: a table keyed by engine"),
    "logdoctor/inputs/bench/jsondoc.py": (7, "benchmark JSON's `backend` values, in examples and cases"),
    "logdoctor/inputs/env/grammars.py": (8, "package names as environment dumps print them, in the table and cases"),
    "logdoctor/inputs/metrics/grammars.py": (3, "metric families per engine, and cases"),
    "logdoctor/inputs/metrics/names.py": (2, "Prometheus metric prefix table keyed by engine"),
    "logdoctor/parse/cmdline.py": (1, "NCCL_* variables in a pasted command are NCCL's events"),
    "logdoctor/parse/detect.py": (3, "header shape names (EngineSpec.headers keys) and a process prefix"),
    "logdoctor/parse/envelope.py": (7, "header shape names (EngineSpec.headers keys) the envelope recognises"),
    "logdoctor/parse/failures.py": (8, "which engine printed a traceback, from its header and its words"),
    "logdoctor/parse/grammar.py": (1, "an example in the docstring"),
    "logdoctor/parse/warning_vocabulary.py": (4, "header shape names; NCCL's own warnings"),
    "logdoctor/perf/adapter.py": (1, "vLLM's weight-memory line read for the model size"),
    "logdoctor/perf/fixes.py": (2, "SGLang's spelling of the speculative-decoding flags"),
    "logdoctor/perf/nogpu.py": (1, "SGLang's flag that drops speculation"),
    "logdoctor/inputs/bench/specexample.py": (1, "vLLM's speculative-decoding example prints vLLM's own counters"),
    "logdoctor/redact.py": (2, "a redaction example: an argv"),
    "logdoctor/sources/clickhouse.py": (1, "an example in the docstring"),
    "logdoctor/sources/prometheus.py": (2, "examples in the docstring"),
    "logdoctor/sources/scrape.py": (5, "default metrics port per engine: a table keyed by engine"),
    "logdoctor/sources/urls.py": (2, "a Prometheus selector example"),
}


def test_engine_names_are_spelled_only_in_engines_and_the_registry() -> None:
    found: dict[str, int] = {}
    for path in sorted((ROOT / "logdoctor").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name.startswith("logdoctor/engines/") or name == "logdoctor/registry.py":
            continue
        count = len(ENGINE_LITERAL_RE.findall(path.read_text(encoding="utf-8")))
        if count:
            found[name] = count
    allowed = {name: count for name, (count, _) in ENGINE_LITERALS_ALLOWED.items()}
    assert found == allowed, "ask logdoctor.registry instead of naming an engine; counts per file: " + str(
        {
            name: (found.get(name, 0), allowed.get(name, 0))
            for name in sorted(set(found) | set(allowed))
            if found.get(name, 0) != allowed.get(name, 0)
        }
    )


MAX_MODULE_LINES = 800


def test_no_module_is_over_800_lines() -> None:
    """A module a reader can hold in mind: past 800 lines, split it by concept (one module a stage's idea)."""
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted((ROOT / "logdoctor").rglob("*.py"))
    }
    assert len(sizes) > 100
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}
