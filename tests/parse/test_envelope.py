"""Envelope stripping for every SGLang and NCCL envelope shape of catalogue/sglang-nccl.md §1 and §11.1."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logdoctor.parse.envelope import (
    PROC_RE,
    VLLM_HEADER_RE,
    clean_physical,
    parse_cleaned,
    parse_envelope,
    strip_outer,
    vllm_process,
)


@dataclass(frozen=True)
class Case:
    raw: str
    header: str | None
    message: str
    timestamp: str | None = None
    level: str | None = None
    role: str | None = None
    tp: int | None = None
    dp: int | None = None
    ep: int | None = None
    pp: int | None = None
    host: str | None = None
    pid: int | None = None
    device: int | None = None


CASES = [
    # §1.2 rank prefixes, all orders
    Case(
        "[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5",
        "sglang",
        "sglang is using nccl==2.21.5",
        "2025-03-04 00:36:46",
        role="Scheduler",
        tp=0,
    ),
    Case(
        "[2025-05-09 11:14:36 DP1 TP1] Decode batch. #running-req: 4",
        "sglang",
        "Decode batch. #running-req: 4",
        "2025-05-09 11:14:36",
        role="Scheduler",
        tp=1,
        dp=1,
    ),
    Case(
        "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24",
        "sglang",
        "Decode batch, #running-req: 24",
        role="Scheduler",
        tp=0,
        ep=0,
    ),
    Case(
        "[2026-07-21 15:00:13 DP1 PP0 ATTN_CP1 MOE_DP1 TP7 EP7] Decode batch, #running-req: 1",
        "sglang",
        "Decode batch, #running-req: 1",
        role="Scheduler",
        tp=7,
        dp=1,
        ep=7,
        pp=0,
    ),
    Case(
        "[2026-06-26 01:33:52 ATTN_CP7 TP7] Prefill batch, #new-seq: 1",
        "sglang",
        "Prefill batch, #new-seq: 1",
        role="Scheduler",
        tp=7,
    ),
    # tp=1 from 0.4.6 on: no suffix (and the main process never has one)
    Case(
        "[2025-11-11 04:06:27] Decode batch, #running-req: 46",
        "sglang",
        "Decode batch, #running-req: 46",
        "2025-11-11 04:06:27",
        role="Main",
    ),
    # §1.1 SGLANG_LOG_MS=1
    Case(
        "[2026-03-01 10:00:00.123 TP0] Decode batch, #running-req: 5",
        "sglang",
        "Decode batch, #running-req: 5",
        "2026-03-01 10:00:00",
        role="Scheduler",
        tp=0,
    ),
    # §1.1 glued to a streamed completion
    Case(
        "1. Country:[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 57",
        "sglang",
        "Decode batch. #running-req: 1, #token: 57",
        "2025-01-23 19:35:34",
        tp=0,
    ),
    # a paste that lost the leading `[` (corpus sglang-002) and a time-only paste
    Case(
        "2026-05-24 03:51:44 TP0] Decode batch, #running-req: 4",
        "sglang",
        "Decode batch, #running-req: 4",
        "2026-05-24 03:51:44",
        tp=0,
    ),
    Case("[03:51:54] Decode batch, #running-req: 6", "sglang", "Decode batch, #running-req: 6", "03:51:54"),
    # §1.4 uvicorn through SGLang's LOGGING_CONFIG
    Case(
        "[2025-01-23 19:35:27] INFO:     Started server process [889167]",
        "uvicorn",
        "INFO:     Started server process [889167]",
        "2025-01-23 19:35:27",
    ),
    Case(
        "[2025-01-23 19:35:33] The server is fired up and ready to roll!",
        "sglang",
        "The server is fired up and ready to roll!",
    ),
    # §1.5 Python basicConfig before configure_logger
    Case(
        "WARNING:sglang.srt.server_args:Attention backend not explicitly specified. Use flashinfer backend by default.",
        "sglang-plain",
        "Attention backend not explicitly specified. Use flashinfer backend by default.",
        level="WARNING",
    ),
    # §1.5 `[ts] LEVEL file.py:LINE: msg`
    Case(
        "[2026-02-26 05:19:58] WARNING server_args.py:1245: DSA with TP mode is active, dp_size=1, tp_size=8",
        "sglang-plain",
        "DSA with TP mode is active, dp_size=1, tp_size=8",
        "2026-02-26 05:19:58",
        level="WARNING",
    ),
    Case(
        "[2026-03-21 03:31:56] INFO engine.py:177: server_args=ServerArgs(model_path='x')",
        "plain",
        "server_args=ServerArgs(model_path='x')",
        level="INFO",
    ),
    # a Python-logging host application (corpus sglang-003)
    Case(
        "2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Decode batch. #running-req: 48",
        "sglang-plain",
        "Decode batch. #running-req: 48",
        "2025-12-04 20:35:53",
        level="INFO",
    ),
    # §1.5 docker logs -t around SGLang
    Case(
        "2026-09-22T06:49:56.336833841Z [2026-09-22 06:49:56] server_args={'model_path': 'x'}",
        "sglang",
        "server_args={'model_path': 'x'}",
        "2026-09-22 06:49:56",
    ),
    # a host application's logging of some other module stays generic
    Case(
        "2025-05-22 12:33:26 INFO 4242 [core.py:58] Starting the job",
        "plain",
        "Starting the job",
        level="INFO",
    ),
    # §1.5 log shipper that dropped SGLang's bracket: no header is recognised, the message keeps the text
    Case(
        "2026-09-26T19:55:58.468Z zw21lesh-67pt5 INFO server_args={'model_path': '/repository'}",
        None,
        "zw21lesh-67pt5 INFO server_args={'model_path': '/repository'}",
    ),
    # §1.5 Ray actor with ANSI colour codes, and with the ESC byte lost in a copy
    Case(
        "\x1b[36m(CommandActor pid=105447)\x1b[0m [2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13",
        "sglang",
        "Decode batch, #running-req: 13",
        "2026-10-06 11:01:01",
        tp=0,
        ep=0,
    ),
    Case(
        " [36m(CommandActor pid=105447) [0m [2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13",
        "sglang",
        "Decode batch, #running-req: 13",
        tp=0,
    ),
    # docker compose, and a pasted table whose first cell must not be taken for a service name
    Case(
        "sglang-1  | [2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1",
        "sglang",
        "Decode batch. #running-req: 1",
        tp=0,
    ),
    Case("C | Agg tok/s | Per-req tok/s | TTFT(s)", None, "C | Agg tok/s | Per-req tok/s | TTFT(s)"),
    Case("1 | 18.0 | 18.0 | 0.21", None, "1 | 18.0 | 18.0 | 0.21"),
    # §1.5 tqdm redraws with carriage returns: the last state wins
    Case(
        "Capturing batches (bs=4 avail_mem=2.95 GB):  25%|██▌       | 1/4\r"
        "Capturing batches (bs=1 avail_mem=2.91 GB): 100%|██████████| 4/4 [00:00<00:00,  5.37it/s]",
        None,
        "Capturing batches (bs=1 avail_mem=2.91 GB): 100%|██████████| 4/4 [00:00<00:00,  5.37it/s]",
    ),
    # §8.4 torch c10d, bare and behind a multi-node launcher's `0: `
    Case(
        "[rank0]:[W305 03:55:35.235035264 socket.cpp:462] [c10d] The client socket has failed to connect",
        "c10d",
        "[c10d] The client socket has failed to connect",
        level="WARNING",
        tp=0,
    ),
    Case(
        "0: [rank0]:[W305 03:55:35.235035264 socket.cpp:462] [c10d] The client socket has failed to connect",
        "c10d",
        "[c10d] The client socket has failed to connect",
        level="WARNING",
        tp=0,
    ),
    Case(
        "0: [2025-03-05 03:55:35 TP0] Init torch distributed begin.",
        "sglang",
        "Init torch distributed begin.",
        tp=0,
    ),
    # §11.1 NCCL <= 2.25 INFO and WARN
    Case(
        "node5:236:236 [2] NCCL INFO cudaDriverVersion 12080",
        "nccl",
        "cudaDriverVersion 12080",
        level="INFO",
        role="NCCL",
        host="node5",
        pid=236,
        device=2,
    ),
    Case(
        "42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",
        "nccl",
        "Call to bind failed : Address already in use",
        level="WARN",
        host="42692884fcba",
        pid=140,
        device=0,
    ),
    # §11.1 NCCL >= 2.26 WARN: SGLang-shaped timestamp, but NCCL
    Case(
        "[2026-01-05 10:00:00] host:123:456 [0] transport/p2p.cc:944 NCCL WARN rank 0 failed to IPC register userbuff",
        "nccl",
        "rank 0 failed to IPC register userbuff",
        "2026-01-05 10:00:00",
        level="WARN",
        host="host",
        pid=123,
        device=0,
    ),
    # §11.1 NCCL 2.30: function name in parentheses
    Case(
        "gpu7:3884652:3884747 [1] transport/p2p.cc:944 (p2pSendSetup) NCCL WARN P2P is disabled between NVLINK "
        "connected GPUs 0 and 1.",
        "nccl",
        "P2P is disabled between NVLINK connected GPUs 0 and 1.",
        level="WARN",
        device=1,
    ),
    # §11.1 TRACE (timestamp and func:line) and CALL (no device)
    Case(
        "node1:12:13 [0] 1234.567890 ncclCommInitRank:1780 NCCL TRACE comm 0x5566 rank 0 nranks 2",
        "nccl",
        "comm 0x5566 rank 0 nranks 2",
        level="TRACE",
        device=0,
    ),
    Case("node1:12:13 NCCL CALL ncclAllReduce(0x1, 0x2)", "nccl", "ncclAllReduce(0x1, 0x2)", level="CALL", pid=12),
    # §11.1 wrappers: Ray, docker/k8s RFC 3339 with ` | `, mpirun --tag-output, multi-node `0: `
    Case(
        "(RayWorkerWrapper pid=4129, ip=10.0.0.2) host1:4129:4200 [1] NCCL INFO Using network IB",
        "nccl",
        "Using network IB",
        host="host1",
        pid=4129,
        device=1,
    ),
    Case(
        "2024-12-04T05:27:44.079Z | algo-1:18063:18133 [6] NCCL INFO Channel 03/0 : 6[6] -> 5[5] via P2P/CUMEM/read",
        "nccl",
        "Channel 03/0 : 6[6] -> 5[5] via P2P/CUMEM/read",
        host="algo-1",
        device=6,
    ),
    Case(
        "[1,2]<stdout>:aiplatform-wlf2-hdd:102986:102997 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1",
        "nccl",
        "Trees [0] 1/-1/-1->0->-1",
        host="aiplatform-wlf2-hdd",
        pid=102986,
        device=0,
    ),
    Case(
        "0: node5:236:236 [2] NCCL INFO Bootstrap : Using bond0:10.0.0.3<0>",
        "nccl",
        "Bootstrap : Using bond0:10.0.0.3<0>",
        host="node5",
        device=2,
    ),
    # §11.2 the bare version line has no envelope at all
    Case("NCCL version 2.21.5+cuda12.4", None, "NCCL version 2.21.5+cuda12.4"),
    # a log quoted in a GitHub comment or an e-mail (`> `, nested `> > `), and line-number gutters
    Case(
        "> (APIServer pid=1) INFO 05-08 16:20:01 [loggers.py:271] Engine 000: Avg prompt throughput",
        "vllm",
        "Engine 000: Avg prompt throughput",
        role="APIServer",
    ),
    Case("> > [2025-05-09 11:14:36 TP0] Decode batch. #running-req: 4", "sglang", "Decode batch. #running-req: 4"),
    Case("> 2025-12-04 20:35:53 INFO 151972 [server_args.py:287] hi", "sglang-plain", "hi"),
    Case("   118\tINFO 10-16 19:05:47 metrics.py:367] Speculative metrics: x", "vllm-old", "Speculative metrics: x"),
    Case("  12 | (VllmWorker rank=1 pid=2) WARNING 05-08 16:20:01 [a.py:1] x", "vllm", "x", role="Worker", tp=1),
    Case("12 │ host1:1:2 [0] NCCL INFO Using network IB", "nccl", "Using network IB", host="host1"),
    Case("1234:(APIServer pid=1) INFO 05-08 16:20:01 [a.py:1] x", "vllm", "x", role="APIServer"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.raw[:60])
def test_envelope(case: Case) -> None:
    line = parse_envelope("t", 1, case.raw)
    assert line.header == case.header
    assert line.message == case.message
    if case.timestamp is not None:
        assert line.timestamp == case.timestamp
    if case.level is not None:
        assert line.level == case.level
    expected = {
        "role": case.role,
        "tp_rank": case.tp,
        "dp_rank": case.dp,
        "ep_rank": case.ep,
        "pp_rank": case.pp,
        "host": case.host,
        "pid": case.pid,
        "device": case.device,
    }
    for attr, value in expected.items():
        if value is not None:
            assert line.process is not None
            assert getattr(line.process, attr) == value, attr


def test_ray_actor_is_kept_for_sglang_lines() -> None:
    line = parse_envelope("t", 1, "\x1b[36m(CommandActor pid=105447)\x1b[0m [2026-10-06 11:01:01 TP0 EP0] Decode batch")
    assert line.extras["actor"] == "CommandActor"


# --- fast paths give what the plain regexes gave ---------------------------------------------------

# Whole vLLM headers and what can surround them, glued at random: several headers on a line, broken ones.
_HEADERS = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["INFO ", "WARNING ", "ERROR "]),
        st.sampled_from(["05-08 ", "5-08 "]),
        st.sampled_from(["16:20:01 ", "16:20:01.5 "]),
        st.sampled_from(["[x.py:12] ", "x.py:3]", "[x.py:]"]),
    ),
)
_FILLERS = st.sampled_from(
    ["(APIServer pid=1) ", "(Worker_TP1 pid=7)", "pid=3 ", "xINFO ", "INFO ", "msg ", ")", "*", " "]
)


def _plain_vllm_header(text: str) -> tuple[str, str, str | None] | None:
    """The former lookup: the first header by a plain search, then the last of any that follow."""
    m = VLLM_HEADER_RE.search(text)
    if m is None:
        return None
    for later in VLLM_HEADER_RE.finditer(text, m.end()):
        m = later
    procs = list(PROC_RE.finditer(text[: m.start()]))
    name = vllm_process(procs[-1].group("name"), None).name if procs else None
    return text[m.end() :], f"{m.group('md')} {m.group('hms')}", name


@given(st.lists(_HEADERS | _FILLERS, max_size=8))
def test_vllm_header_search_from_first_level_word(pieces: list[str]) -> None:
    text = "".join(pieces)
    line = parse_cleaned("t", 1, text)
    expected = _plain_vllm_header(text)
    if line.header in ("vllm", "vllm-old"):
        assert expected == (line.message, line.timestamp, line.process.name if line.process else None)
    elif not line.skip and "NCCL " not in text:
        assert expected is None


def test_parse_cleaned_is_parse_envelope_of_a_clean_line() -> None:
    raw = "\x1b[36m(APIServer pid=1)\x1b[0m INFO 05-08 16:20:01 [loggers.py:271] Engine 000: Avg prompt throughput"
    assert parse_cleaned("t", 1, clean_physical(raw)) == parse_envelope("t", 1, raw)


def test_strip_outer_skips_lines_no_wrapper_starts_like() -> None:
    assert (
        strip_outer("(APIServer pid=1) INFO 05-08 16:20:01 [a.py:1] x")
        == "(APIServer pid=1) INFO 05-08 16:20:01 [a.py:1] x"
    )
    assert strip_outer("2025-05-08T16:20:01.123Z vllm-1  | (APIServer pid=1) x") == "(APIServer pid=1) x"
    assert strip_outer("") == ""


def test_quotes_and_gutters_leave_prompts_times_and_table_rows_alone() -> None:
    assert strip_outer(">>> import vllm") == ">>> import vllm"  # a Python prompt: a skipped artefact
    assert parse_envelope("t", 1, ">>> import vllm").skip
    assert strip_outer("10:00:00 worker started") == "10:00:00 worker started"
    assert strip_outer("1 | 18.0 | 18.0 | 2.1") == "1 | 18.0 | 18.0 | 2.1"  # a pasted table's row
    assert strip_outer(">") == ""
    assert strip_outer("[pod/vllm-0/server] > x") == "x"


def test_a_launch_command_behind_a_prompt_is_kept_other_commands_are_skipped() -> None:
    assert not parse_envelope("t", 1, "$ vllm serve Qwen/Qwen3-8B --enforce-eager").skip
    assert not parse_envelope("t", 1, "root@box:~# CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server --tp 2").skip
    assert not parse_envelope("t", 1, "$ docker run --gpus all vllm/vllm-openai:latest --model m").skip
    assert parse_envelope("t", 1, 'root@box:~# grep "SpecDecoding metrics" vllm.log').skip
    assert parse_envelope("t", 1, "$ docker run --gpus all lmsysorg/sglang:latest bash").skip


def test_markdown_bold_around_a_value_or_a_setting_is_dropped() -> None:
    # the setting line is realworld9/nccl-c202's; the others are constructed
    line = parse_envelope(
        "t", 1, "**NCCL_P2P_DISABLE=1** NCCL_DEBUG=TRACE  ./all_reduce_perf -b 8 -e 2G -w 2 -n 10 -f 2 -g 2"
    )
    assert line.message == "NCCL_P2P_DISABLE=1 NCCL_DEBUG=TRACE  ./all_reduce_perf -b 8 -e 2G -w 2 -n 10 -f 2 -g 2"
    assert (
        parse_envelope("t", 1, "torch.compile takes **7.51 s** in total").message
        == "torch.compile takes 7.51 s in total"
    )
    for kept in ("f(**kwargs) and **bold words**", "**lower_case=1** x", "**NCCL_P2P_DISABLE = 1** x"):
        assert parse_envelope("t", 1, kept).message == kept
