"""Whatever bytes arrive, the parser never raises: arbitrary bytes, invalid UTF-8, NUL bytes, a 20 MB
single line, empty input, and config dumps cut at every possible point."""

from __future__ import annotations

import gzip
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from logdoctor.errors import InputError
from logdoctor.events import StartupConfig
from logdoctor.parse.pipeline import EventStream, parse_text
from logdoctor.parse.pyrepr import parse_kwargs, parse_value
from logdoctor.sources.local import MAX_LINE_BYTES, open_local

STORY_ARGS = (
    "(APIServer pid=2961) INFO 05-08 14:02:11 [utils.py:233] non-default args: {'model_tag': '/root/models/Qwen3.6-27B', "
    "'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.92, 'compilation_config': {'mode': "
    "<CompilationMode.VLLM_COMPILE: 3>, 'cudagraph_mode': <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>}, "
    "'speculative_config': {'method': 'dflash', 'model': '/root/models/Qwen3.6-27B-DFlash', 'num_speculative_tokens': 15}}"
)


def _parse_file(path: Path) -> list[object]:
    source = open_local(str(path))
    return list(EventStream(source.name, source.lines()))


def _parse_file_or_input_error(path: Path) -> None:
    """A corrupt .gz is a clear input error (exit 2), never a crash; anything else must parse."""
    try:
        _parse_file(path)
    except InputError as exc:
        assert path.read_bytes()[:2] == b"\x1f\x8b", exc
        assert "x.log" in str(exc)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=4096))
def test_arbitrary_bytes_never_raise(tmp_path_factory: object, data: bytes) -> None:
    path = Path(str(tmp_path_factory.mktemp("b"))) / "x.log"  # type: ignore[attr-defined]
    path.write_bytes(data)
    _parse_file_or_input_error(path)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                STORY_ARGS,
                "\x00",
                "\xff",
                "\r",
                "\n",
                "\x1b[1;36m",
                "INFO ",
                "[",
                "SpecDecoding metrics: ",
                "NCCL INFO Channel 00 : ",
            ]
        ),
        max_size=30,
    )
)
def test_mixtures_of_real_fragments_never_raise(parts: list[str]) -> None:
    parse_text("".join(parts))


def test_invalid_utf8_and_nul_bytes(tmp_path: Path) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(
        b"\xff\xfe(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 "
        b"tokens/s, Avg generation throughput: 74.7 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache "
        b"usage: 7.4%, Prefix cache hit rate: 0.0%\x00\n\x80\x81\n"
    )
    events = _parse_file(path)
    assert len(events) == 1


def test_empty_inputs(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert _parse_file(empty) == []
    gz = tmp_path / "empty.log.gz"
    gz.write_bytes(gzip.compress(b""))
    assert _parse_file(gz) == []
    assert parse_text("") == []


def test_twenty_megabyte_single_line(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    head = b"(APIServer pid=1) INFO 05-08 14:02:11 [utils.py:233] non-default args: {"
    body = b"'k': 'v', " * (20 * 1024 * 1024 // 10)
    path.write_bytes(head + body + b"\n" + STORY_ARGS.encode() + b"\n")
    assert path.stat().st_size > 20 * 1024 * 1024
    source = open_local(str(path))
    stream = EventStream(source.name, source.lines())
    events = list(stream)
    # The over-long line is cut at MAX_LINE_BYTES (and parsed as a truncated dump); the next line is intact.
    assert source.bytes_read == path.stat().st_size
    assert stream.stats.lines == 2
    configs = [e for e in events if isinstance(e, StartupConfig)]
    assert configs[-1].config["tensor_parallel_size"] == 2
    assert configs[-1].line == 2
    assert MAX_LINE_BYTES < 20 * 1024 * 1024


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=len(STORY_ARGS)))
def test_dumps_cut_anywhere_keep_what_came_before(cut: int) -> None:
    text = STORY_ARGS[:cut]
    events = parse_text(text)
    dump = STORY_ARGS.split("non-default args: ", 1)[1]
    start = len(STORY_ARGS) - len(dump)
    configs = [e for e in events if isinstance(e, StartupConfig)]
    if cut > start + len("{'model_tag': '/root/models/Qwen3.6-27B', 'tensor_parallel_size': 2,"):
        assert configs and configs[0].config.get("tensor_parallel_size") == 2
    if configs and cut < len(STORY_ARGS):
        assert configs[0].truncated is True


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_repr_grammar_never_raises(text: str) -> None:
    parse_value(text)
    parse_kwargs(text)
