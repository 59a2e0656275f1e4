"""The import contracts of pyproject.toml (run by `lint-imports` in `make lint`) name every module of ours.

A new top-level module (or package) must be placed: forbidden to `logdoctor.events` and `logdoctor.records`,
below the application unless it is part of it, and one of the core modules that may not import a named engine
package, unless it is an engine or input package itself."""

from __future__ import annotations

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
