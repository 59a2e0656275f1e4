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
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from logdoctor.errors import ConfigError
from logdoctor.userfile import MAX_CONFIG_BYTES, UserFileError, load_yaml, read_user_file


class Suppression(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str | None = None
    cause: str | None = None
    reason: str = Field(min_length=1)
    expires: date | None = None

    @model_validator(mode="after")
    def _target(self) -> Suppression:
        if (self.rule is None) == (self.cause is None):
            raise ValueError("give exactly one of `rule` or `cause`")
        return self

    @property
    def target(self) -> str:
        return f"rule {self.rule}" if self.rule else f"cause {self.cause}"


class UserConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    suppress: list[Suppression] = Field(default_factory=list)


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
    try:
        config = UserConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ConfigError(f"{path}: {where}: {first['msg']}") from exc
    return Suppressions(list(config.suppress), str(path))
