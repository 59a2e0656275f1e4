"""logdoctor/inputs/metrics: scrapes become events; what the line-type cases do not pin down."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.events import EventBase, SchedulerStats, SpecDecodeStats
from logdoctor.parse.pipeline import parse_text

LABELS = 'engine="0",model_name="m"'


def scrape(running: int, tokens: int, drafts: int, accepted: int, ts: int | None = None, labels: str = LABELS) -> str:
    stamp = f" {ts}" if ts is not None else ""
    return "\n".join(
        (
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{{{labels}}} {running}.0{stamp}",
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
            "# TYPE vllm:generation_tokens_total counter",
            f"vllm:generation_tokens_total{{{labels}}} {tokens}.0{stamp}",
            f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts}.0{stamp}",
            f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {drafts * 2}.0{stamp}",
            f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {accepted}.0{stamp}",
        )
    )


def of(events: list[EventBase], kind: type[EventBase]) -> list[EventBase]:
    return [e for e in events if isinstance(e, kind)]


def test_without_timestamps_counters_give_ratios_but_no_rates() -> None:
    events = parse_text(scrape(2, 100, 50, 50) + "\n" + scrape(2, 400, 150, 250))
    stats = of(events, SchedulerStats)
    assert [s.generation_throughput for s in stats if isinstance(s, SchedulerStats)] == [None, None]
    (spec,) = of(events, SpecDecodeStats)
    assert isinstance(spec, SpecDecodeStats)
    assert spec.mean_acceptance_length == 3.0  # 1 + 200 accepted / 100 drafts in the interval
    assert spec.acceptance_rate == 1.0  # 200 of 200 drafted tokens


def test_a_counter_reset_is_not_a_negative_rate() -> None:
    events = parse_text(scrape(1, 5000, 100, 10, ts=1_000_000) + "\n" + scrape(1, 40, 10, 5, ts=1_010_000))
    later = [s for s in of(events, SchedulerStats) if isinstance(s, SchedulerStats)][-1]
    assert later.generation_throughput is None  # the server restarted: no rate over the interval
    assert not of(events, SpecDecodeStats)


def test_data_parallel_replicas_add_up_and_tp_ranks_do_not() -> None:
    text = "\n".join(
        (
            'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
            'vllm:num_requests_running{engine="1",model_name="m"} 5.0',
            'sglang:num_running_reqs{model_name="m",tp_rank="0"} 4.0',
        )
    )
    stats = [s for s in of(parse_text(text), SchedulerStats) if isinstance(s, SchedulerStats)]
    assert [s.running for s in stats] == [8, 4]
    tp = 'sglang:num_running_reqs{model_name="m",tp_rank="0"} 4.0\nsglang:num_running_reqs{model_name="m",tp_rank="1"} 4.0'
    (only,) = [s for s in of(parse_text(tp), SchedulerStats) if isinstance(s, SchedulerStats)]
    assert only.running == 4


def test_sglang_gauges_of_an_idle_server_are_not_read_as_acceptance() -> None:
    def sg(tokens: int, ts: int) -> str:
        return (
            f'sglang:generation_tokens_total{{model_name="m"}} {tokens}.0 {ts}\n'
            f'sglang:spec_accept_length{{model_name="m"}} 1.1 {ts}\n'
            f'sglang:num_running_reqs{{model_name="m"}} 0.0 {ts}'
        )

    events = parse_text(sg(100, 1_000_000) + "\n" + sg(100, 1_010_000))
    assert not of(events, SpecDecodeStats)  # nothing generated: the 1.1 is a stale value (sglang#4244)


def test_metrics_and_a_log_are_one_deployment(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics.txt"
    metrics.write_text(scrape(1, 100, 50, 5, ts=1_000_000) + "\n" + scrape(1, 290, 150, 15, ts=1_010_000) + "\n")
    result = CliRunner().invoke(main, ["diagnose", str(metrics), "--format", "json"])
    assert result.exit_code in (0, 1), result.stderr
    assert '"name": "vllm"' in result.stdout
    assert '"spec.acceptance_length"' in result.stdout


def test_malformed_exposition_text_is_not_understood_and_the_other_file_is_kept(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text(scrape(1, 100, 50, 5, ts=1_000_000) + "\n" + scrape(1, 290, 150, 15, ts=1_010_000) + "\n")
    bad = tmp_path / "bad.txt"
    bad.write_text('vllm:num_requests_running{model_name="m" 3.0\nvllm:generation_tokens_total{} three\n')
    result = CliRunner().invoke(main, ["diagnose", str(good), str(bad)])
    assert result.exit_code in (0, 1), result.stderr
    assert "2 line(s) not understood" in result.stdout
    alone = CliRunner().invoke(main, ["diagnose", str(bad)])
    assert alone.exit_code == 2
    assert alone.stderr.count("\n") == 1 and "not a log" in alone.stderr


def test_two_files_of_one_scrape_each_give_the_acceptance_between_them(tmp_path: Path) -> None:
    before = tmp_path / "before.txt"
    before.write_text(scrape(1, 1000, 500, 100) + "\n")  # since start: 1 + 100/500 = 1.2
    after = tmp_path / "after.txt"
    after.write_text(scrape(1, 2000, 1000, 1100) + "\n")  # between them: 1 + 1000/500 = 3.0
    result = CliRunner().invoke(main, ["diagnose", str(before), str(after), "--format", "json"])
    assert result.exit_code in (0, 1), result.stderr
    import json

    facts = json.loads(result.stdout)["facts"]
    assert facts["spec.acceptance_length"] == [1.2, 3.0]


def test_vllm_v0_minus_one_hit_rate_is_no_rate() -> None:
    # fixtures/logs/metrics/aibrix-vllm-v0-runtime-doc.log: V0 reports -1.0 when prefix caching is off
    text = (Path(__file__).parents[2] / "fixtures/logs/metrics/aibrix-vllm-v0-runtime-doc.log").read_text()
    assert 'vllm:gpu_prefix_cache_hit_rate{model_name="Qwen/Qwen2.5-Coder-1.5B-Instruct"} -1.0' in text
    (stats,) = of(parse_text(text), SchedulerStats)
    assert isinstance(stats, SchedulerStats)
    assert stats.prefix_cache_hit_rate is None
    assert stats.running == 0 and stats.kv_cache_usage == 0.0
