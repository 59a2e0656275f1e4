"""The wheel carries every package of the source tree (pyproject.toml lists them one by one)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_of_the_tree_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    in_tree = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "logdoctor").rglob("__init__.py")}
    assert in_tree - listed == set(), "packages an installed logdoctor would lack (add them to pyproject.toml)"
