"""NCCL line types: NCCL_* settings, as NCCL echoes them and as a pasted shell command sets them."""

from __future__ import annotations

import re

from logdoctor.engines.nccl import info
from logdoctor.engines.nccl.common import _grammar
from logdoctor.events import (
    EventBase,
    NcclEnv,
)
from logdoctor.parse import cmdline
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- environment echoes ----------------------------------------------------------------------------

# Integer parameters end with a period (`NCCL_NVLS_ENABLE set by environment to 0.`), string ones do not.
_ENV_RE = re.compile(r"\b(?P<name>NCCL_[A-Z0-9_]+) set by environment to (?P<value>.*?)\s*$")
_INT_WITH_PERIOD_RE = re.compile(r"^-?\d+\.$")


def parse_env(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ENV_RE.search(line.message)
    if not m:
        return None
    value = m.group("value")
    if _INT_WITH_PERIOD_RE.match(value):
        value = value[:-1]
    return [NcclEnv(**ctx.base(line, "nccl"), name=m.group("name"), value=value)]


# A pasted shell line that sets NCCL's environment (`export NCCL_P2P_DISABLE=1`, a `-e NCCL_P2P_LEVEL=LOC \\`
# continuation of a `docker run`, `NCCL_P2P_DISABLE=1 torchrun ...`): logdoctor/parse/cmdline.py `shell_env`. A line
# that also holds the launch command is the command grammar's (vllm/sglang), which reads the same settings from it.


def parse_shell_env(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if cmdline.LAUNCH_COMMAND_RE.search(line.message) or info.is_test_command(line.message):
        return None  # the launch command's grammar reads the settings with the rest of the command
    return cmdline.nccl_env_events(line, ctx, line.message) or None


GRAMMARS: list[Grammar] = [
    _grammar(
        "shell_env",
        ("-e NCCL_", "--env NCCL_", "--env=NCCL_", "export NCCL_", "env NCCL_", "NCCL_P2P_DISABLE=", "NCCL_P2P_LEVEL="),
        parse_shell_env,
        (
            case(
                "docker-run-e",
                "docker run --runtime nvidia --gpus all -e NCCL_P2P_DISABLE=1 -e NCCL_IB_DISABLE=1 -p 8000:8000 \\",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                ("nccl_env", {"name": "NCCL_IB_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "continuation-env",
                "    --env NCCL_P2P_LEVEL=LOC \\",
                ("nccl_env", {"name": "NCCL_P2P_LEVEL", "value": "LOC", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "env-equals",
                "  --env=NCCL_SHM_DISABLE=1 \\",
                ("nccl_env", {"name": "NCCL_SHM_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "export",
                "export NCCL_P2P_DISABLE=1",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
            case("a-line-of-assignments-alone-is-left-to-collect-env", "NCCL_P2P_LEVEL=LOC", exact=True),
            case("a-hint-is-not-a-setting", "WARNING: to silence this, set NCCL_P2P_DISABLE=1 before", exact=True),
            case(
                "assignments-before-the-command",
                "CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 torchrun --nproc-per-node 2 bench_allreduce.py",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
        ),
    ),
    _grammar(
        "env",
        ("set by environment to",),
        parse_env,
        (
            case("sample-1", "vm:669:669 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1", ("nccl_env", {})),
            case("sample-2", "vm:668:668 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.", ("nccl_env", {})),
            case(
                "row-1",
                "vm:669:669 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1"}),
                exact=True,
            ),
            case(
                "row-2",
                "vm:668:668 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.",
                ("nccl_env", {"name": "NCCL_NVLS_ENABLE", "value": "0"}),
                exact=True,
            ),
            case(
                "row-3",
                "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 4.",
                ("nccl_env", {"name": "NCCL_MAX_NCHANNELS", "value": "4"}),
                exact=True,
            ),
            case(
                "row-4",
                "node:1:2 [0] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0.",
                ("nccl_env", {"name": "NCCL_CUMEM_ENABLE", "value": "0"}),
                exact=True,
            ),
            case(
                "row-5",
                "node:1:2 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.",
                ("nccl_env", {"name": "NCCL_SHM_DISABLE", "value": "1"}),
                exact=True,
            ),
            case(
                "row-6",
                "node:1:2 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",
                ("nccl_env", {"name": "NCCL_P2P_LEVEL", "value": "LOC"}),
                exact=True,
            ),
            case(
                "row-7",
                "node:1:2 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0",
                ("nccl_env", {"value": "bond0"}),
                exact=True,
            ),
            case(
                "row-8",
                "node:1:2 [0] NCCL INFO NCCL_ALGO set by environment to allreduce:tree",
                ("nccl_env", {"value": "allreduce:tree"}),
                exact=True,
            ),
        ),
    ),
]
