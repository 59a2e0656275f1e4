"""User suppressions from `.logdoctor.yaml`: structured, with a reason and an optional expiry.

    suppress:
      - rule: vllm-custom-allreduce-disabled
        reason: "4x L40S on PCIe; accepted until the NVLink boxes arrive"
        expires: 2027-03-31
      - cause: torch-compile-or-warmup
        reason: "we restart often; compile time is known"

An expired suppression no longer applies and is reported; so is one that matched nothing.
"""

from __future__ import annotations

from datetime import date
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logdoctor.errors import ConfigError
from logdoctor.records import Record, field
from logdoctor.userfile import MAX_CONFIG_BYTES, UserFileError, load_yaml, read_user_file

if TYPE_CHECKING:
    from pydantic import BaseModel


class Suppression(Record):
    """One validated entry of `suppress:` (validated by the pydantic model `_config_model` builds)."""

    rule: str | None = None
    cause: str | None = None
    reason: str
    expires: date | None = None

    @property
    def target(self) -> str:
        return f"rule {self.rule}" if self.rule else f"cause {self.cause}"


class UserConfig(Record):
    suppress: list[Suppression] = field(default_factory=list)


@cache
def _config_model() -> type[BaseModel]:
    """The pydantic model `.logdoctor.yaml` is validated with (its error messages are the user's), built only when
    such a file is read: diagnose does not import pydantic otherwise (docs/benchmarks.md)."""
    from pydantic import BaseModel, ConfigDict, Field, model_validator

    class SuppressionModel(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")

        rule: str | None = None
        cause: str | None = None
        reason: str = Field(min_length=1)
        expires: date | None = None

        @model_validator(mode="after")
        def _target(self) -> SuppressionModel:
            if (self.rule is None) == (self.cause is None):
                raise ValueError("give exactly one of `rule` or `cause`")
            return self

    class UserConfigModel(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")

        suppress: list[SuppressionModel] = Field(default_factory=list)

    return UserConfigModel


def parse_user_config(data: Any) -> UserConfig:
    """`.logdoctor.yaml`'s data validated (pydantic.ValidationError when it does not fit)."""
    model = _config_model().model_validate(data)
    return UserConfig(suppress=[Suppression(**entry) for entry in model.model_dump()["suppress"]])


class Suppressions:
    def __init__(self, entries: list[Suppression], path: str = ".logdoctor.yaml") -> None:
        self.entries = entries
        self.path = path
        self.used: set[int] = set()

    def match(self, rule: str, cause: str, today: date | None = None) -> str | None:
        today = today or date.today()
        for index, entry in enumerate(self.entries):
            if entry.rule not in (None, rule) or entry.cause not in (None, cause):
                continue
            if entry.expires is not None and entry.expires < today:
                continue
            self.used.add(index)
            return f"suppressed by {self.path}: {entry.reason}"
        return None

    def warnings(self, today: date | None = None) -> list[str]:
        today = today or date.today()
        out: list[str] = []
        for index, entry in enumerate(self.entries):
            if entry.expires is not None and entry.expires < today:
                out.append(
                    f"{self.path}: suppression of {entry.target} expired on {entry.expires} and no longer applies"
                )
            elif index not in self.used:
                out.append(f"{self.path}: suppression of {entry.target} matched no finding (unused)")
        return out


def load_suppressions(path: Path | None) -> Suppressions | None:
    """Read `.logdoctor.yaml` (the given path, or ./.logdoctor.yaml when present)."""
    if path is None:
        default = Path(".logdoctor.yaml")
        if not default.is_file():
            return None
        path = default
    try:
        data, _ = load_yaml(read_user_file(path, max_bytes=MAX_CONFIG_BYTES))
    except UserFileError as exc:
        raise ConfigError(f"{path}:{exc.line}:{exc.column}: {exc}") from None
    data = data or {}
    from pydantic import ValidationError

    try:
        config = parse_user_config(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"{path}: {where}: {first['msg']}") from exc
    return Suppressions(list(config.suppress), str(path))
