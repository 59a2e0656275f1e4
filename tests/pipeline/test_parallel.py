"""A big local file parsed in worker processes, one byte range each: the same parse as one process gives.

The inputs are bench/gen_log.py's generated vLLM serving log (a few MB here; the thresholds that keep small
files in one process are lowered for the test) and the story fixture appended to it (a second server start).
"""

from __future__ import annotations

import multiprocessing
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from logdoctor.events import EventBase
from logdoctor.parse.detect import Detection
from logdoctor.parse.keywords import candidate_keywords
from logdoctor.parse.pipeline import EventStream, SourceStats
from logdoctor.pipeline.run import Parsed, local_line_sources, parse_each
from logdoctor.pipeline.tap import run_starts
from logdoctor.sources.local import open_local
from tests.generated import generated_log

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("parallel") / "serve.log"
    generated_log(path, "3M")
    return path


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split a few-MB file as a gigabyte one is split, and warm each worker up on only the file's first 64 KiB
    (so a range's starting state is a guess that the checks must confirm)."""
    import logdoctor.pipeline.parallel as parallel
    import logdoctor.sources.local as local

    monkeypatch.setattr(local, "PREFILTER_MIN_BYTES", 0)
    monkeypatch.setattr(local, "PREFILTER_PART_BYTES", 1)
    monkeypatch.setattr(parallel, "WARMUP_BYTES", 64 * 1024)
    monkeypatch.delenv("LOGDOCTOR_PARSE_WORKERS", raising=False)


def _one_process(path: Path) -> tuple[list[EventBase], SourceStats, Detection, dict[int, str], int | None]:
    source = open_local(str(path))
    stat = SourceStats(name=source.name, kind=source.kind, path=source.path)
    stream = EventStream(source.name, source.lines(candidate_keywords(), prefilter=True), stats=stat, keep_text=True)
    events = list(stream)
    texts = dict(stream.texts.items()) if stream.texts is not None else {}
    return events, stat, stream.detection, texts, source.total_lines


def _plain(p: Parsed) -> tuple[object, ...]:
    """A parse as plain values to compare (events and texts are held compressed, compared by what they hold)."""
    return (
        list(p.events),
        p.stats,
        p.detections,
        {name: dict(t.items()) for name, t in p.texts.items()},
        run_starts(p.events),
    )


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("parts", [2, 3, 5, 8])
def test_ranges_parsed_apart_give_the_one_process_parse(
    served: Path, parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from logdoctor.pipeline.parallel import parse_in_ranges

    events, stat, detection, texts, total = _one_process(served)
    assert len(events) > 200
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", str(parts))
    source = open_local(str(served))
    ranges = source.parallel_ranges()
    assert ranges is not None and len(ranges) == parts
    apart_stat = SourceStats(name=source.name, kind=source.kind, path=source.path)
    apart = parse_in_ranges(source, candidate_keywords(), None, apart_stat)
    assert apart is not None, "a one-start log: every cut's check holds"
    apart_events, apart_detection, apart_texts = apart
    assert list(apart_events) == events
    assert apart_detection == detection
    assert dict(apart_texts.items()) == texts
    assert apart_stat == stat
    assert source.total_lines == total == served.read_bytes().count(b"\n")
    assert source.prefiltered and source.bytes_read == served.stat().st_size


def _parsed(path: Path) -> list[Parsed]:
    return list(parse_each(local_line_sources([str(path)]), None, all_runs=True))


@pytest.mark.usefixtures("small_thresholds")
def test_a_restart_mid_file_fails_a_check_and_is_parsed_in_one_process(
    served: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second server start (another version, another k) changes the state a range starts from: the guess
    from the file's head is wrong there, and the whole file is parsed in one process, as if never split."""
    from logdoctor.pipeline import parallel

    def fresh() -> EventStream:
        return EventStream(path.name, iter(()), keep_text=True)

    data = served.read_bytes()
    path = tmp_path / "restarted.log"
    path.write_bytes(data[: len(data) // 3] + STORY.read_bytes() + data[len(data) // 3 :])
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "4")
    source = open_local(str(path))
    ranges = source.parallel_ranges()
    assert ranges is not None and len(ranges) == 4
    # Each range parsed by a worker's fresh stream, warmed up on the file's head, as a worker's first range is:
    # which worker takes which range depends on timing (a worker that goes on to the next range carries the true
    # state), so the ranges are parsed here one by one to check the cut deterministically.
    shared = parallel._Shared(multiprocessing.get_context("fork"), len(ranges))
    for index, (start, end) in enumerate(ranges):
        shared.counts[index] = source.count_range_lines(start, end)
        shared.ready[index].set()
    keywords = candidate_keywords()
    merged = parallel._Merged(source, SourceStats(name=source.name))
    joined = [
        merged.add(parallel._parse_range(fresh(), source, keywords, ranges, index, shared, True))
        for index in range(len(ranges))
    ]
    assert joined[:2] == [True, True]  # the story starts inside the second range: its head state is the file's
    assert joined[2] is False  # the third starts after the restart: the head's state is the wrong guess there
    apart = _parsed(path)
    monkeypatch.setenv("LOGDOCTOR_PARSE_WORKERS", "0")
    whole = _parsed(path)
    assert len(whole) == 2  # the generated start, then the story's (with the generated lines after it)
    assert [(*_plain(p), p.notes) for p in apart] == [(*_plain(p), p.notes) for p in whole]


@pytest.mark.usefixtures("small_thresholds")
def test_what_is_parsed_in_one_process(served: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.pipeline.parallel import workers_allowed

    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "1")
    assert open_local(str(served)).parallel_ranges() is None  # one range: one grep, as before
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "3")
    gz = tmp_path / "serve.log.gz"
    subprocess.run(["gzip", "-k", "-c", str(served)], stdout=gz.open("wb"), check=True)
    assert open_local(str(gz)).parallel_ranges() is None  # gzip is read as one stream
    monkeypatch.setenv("LOGDOCTOR_PARSE_WORKERS", "0")
    assert not workers_allowed()


@pytest.mark.usefixtures("small_thresholds")
def test_workers_started_with_the_sources_give_the_same_parse(served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`local_line_sources(..., engine=)` starts a big file's workers at once (the CLI loads its rules meanwhile);
    parsed for that engine, or for another one (the workers are then stopped), the result is the one-process one."""
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "3")
    for started, asked in (("auto", "auto"), ("auto", "sglang")):
        sources = local_line_sources([str(served)], engine=started)
        assert sources[0].apart is not None
        early = list(parse_each(sources, asked))
        monkeypatch.setenv("LOGDOCTOR_PARSE_WORKERS", "0")
        whole = list(parse_each(local_line_sources([str(served)]), asked))
        monkeypatch.delenv("LOGDOCTOR_PARSE_WORKERS")
        assert [_plain(p) for p in early] == [_plain(p) for p in whole]


@pytest.mark.usefixtures("small_thresholds")
def test_the_parent_holds_the_ranges_compressed_never_their_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers send each range's events and texts as compressed batches that the parent adopts as they are:
    while it merges them it holds tens of bytes an event, where a decoded pydantic event takes about 4 KiB
    (docs/benchmarks.md, *Memory*). Traced in the parent alone (the workers are forked before tracing starts)."""
    import tracemalloc

    from logdoctor.pipeline.parallel import start_in_ranges

    path = tmp_path / "serve.log"
    generated_log(path, "12M")
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "4")
    source = open_local(str(path))
    work = start_in_ranges(source, candidate_keywords(), None)
    assert work is not None
    tracemalloc.start()
    try:
        merged = work.collect(SourceStats(name=source.name))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert merged is not None
    events = merged[0]
    assert len(events) > 500
    assert peak < 1024 * len(events), f"{peak / len(events):.0f} bytes an event held while merging"


def _dense_sglang(path: Path, lines: int) -> Path:
    """A constructed busy SGLang server's log: its server_args line, then only Decode and Prefill batch lines."""
    head = (
        "[2026-05-08 16:20:01] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', tp_size=2, "
        "speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_num_draft_tokens=4)\n"
    )
    body = []
    for i in range(lines):
        clock = f"16:{20 + i // 3600 % 40:02d}:{i // 60 % 60:02d}"
        if i % 20 == 0:
            body.append(
                f"[2026-05-08 {clock} TP{i % 2}] Prefill batch, #new-seq: 1, #new-token: {500 + i % 900}, "
                f"#cached-token: {i % 300}, token usage: 0.{10 + i % 80}, #running-req: {i % 60}, #queue-req: 0, \n"
            )
        body.append(
            f"[2026-05-08 {clock} TP{i % 2}] Decode batch, #running-req: {8 + i % 50}, #token: {1000 + 37 * i}, "
            f"token usage: 0.{10 + i % 85}, accept len: 2.{i % 97:02d}, accept rate: 0.{50 + i % 40}, "
            f"cuda graph: True, gen throughput (token/s): {500 + i % 1000}.25, #queue-req: {i % 3}, \n"
        )
    path.write_text(head + "".join(body), encoding="utf-8")
    return path


@pytest.mark.usefixtures("small_thresholds")
def test_an_event_dense_log_warms_each_worker_up_on_its_first_stats_lines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line of a busy server's log is an event: each worker warms up on the head until it has seen
    WARMUP_SERVING_EVENTS periodic events, not on WARMUP_BYTES of them, and the parse is still the one-process one."""
    from logdoctor.pipeline import parallel

    path = _dense_sglang(tmp_path / "dense.log", 6000)
    monkeypatch.setattr(parallel, "WARMUP_SERVING_EVENTS", 40)
    monkeypatch.setattr(parallel, "WARMUP_BYTES", 1024 * 1024)  # the whole file: the count must stop the warm-up
    events, stat, detection, texts, _ = _one_process(path)
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "3")
    source = open_local(str(path))
    apart_stat = SourceStats(name=source.name, kind=source.kind, path=source.path)
    apart = parallel.parse_in_ranges(source, candidate_keywords(), None, apart_stat)
    assert apart is not None, "a one-start log: every cut's check holds"
    apart_events, apart_detection, apart_texts = apart
    assert list(apart_events) == events
    assert (apart_detection, dict(apart_texts.items()), apart_stat) == (detection, texts, stat)


def test_the_warm_up_stops_at_the_periodic_events_it_wants_and_stops_its_grep() -> None:
    from logdoctor.pipeline import parallel

    closed: list[bool] = []

    def head() -> Iterator[tuple[int, str]]:
        try:
            yield from ((n, f"line {n}") for n in range(1, 1000))
        finally:
            closed.append(True)

    served = [0]
    taken = []
    for number, _ in parallel._until_serving(head(), served):
        taken.append(number)
        served[0] += 2 if number % 2 else 0  # a stats line every other line, two events each
    assert taken == list(range(1, parallel.WARMUP_SERVING_EVENTS))
    assert closed == [True]


def test_an_engine_decided_from_a_wrong_guess_at_the_lines_before_a_range_fails_the_check() -> None:
    """A warning line without an engine header takes the engine the lines before it detected; a range's worker only
    guesses those lines' detection, so the parent checks each such engine against the ranges merged before it."""
    from logdoctor.pipeline.parallel import RangeParse, _Merged

    source = open_local(str(STORY))
    nccl = Detection(header_counts={"nccl": 40})
    first = RangeParse([], SourceStats(name="a"), nccl, [], None, "state", True)
    vllm_guess = (Detection(header_counts={"c10d": 1}), "vllm")  # the worker's head said vLLM
    nccl_guess = (Detection(header_counts={"c10d": 1}), "nccl")
    merged = _Merged(source, SourceStats(name="a"))
    assert merged.add(first)
    wrong = RangeParse([], SourceStats(name="a"), Detection(), [], "state", "next", True, engines_guessed=[vllm_guess])
    assert not merged.add(wrong)
    right = RangeParse([], SourceStats(name="a"), Detection(), [], "state", "next", True, engines_guessed=[nccl_guess])
    assert merged.add(right)
