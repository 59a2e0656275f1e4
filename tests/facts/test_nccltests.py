"""nccl-tests runs (logdoctor/facts/combiners/nccltests.py): each run's large-message bus bandwidth, the P2P setting
that differs between two runs, whether a table reached its last size, and the rules that read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.facts import helpers

REALWORLD8 = Path(__file__).parents[2] / "fixtures" / "logs" / "realworld8"


def _text(case: str) -> str:
    return (REALWORLD8 / f"{case}.log").read_text()


def test_a_run_with_p2p_disabled_is_compared_with_the_run_without() -> None:
    # real: a DGX A100 at 234.7 GB/s, then the same command with NCCL_P2P_DISABLE=1 at 5.2 GB/s
    text = _text("nccl-b202")
    profile = helpers.profile(text)
    assert profile.value("nccl.test_busbw") == pytest.approx(5.2)
    assert profile.value("nccl.test_busbw_ratio") == pytest.approx(5.2 / 234.74)
    assert profile.value("nccl.test_slow_run_p2p_off") is True
    assert helpers.findings_by_rule(text)["nccl-test-p2p-slower"].score >= 80
    # constructed: the setting is on the fast run instead: P2P is not what made the slow run slow
    lines = text.split("\n")
    command = next(i for i, line in enumerate(lines) if line.startswith("NCCL_P2P_DISABLE=1"))
    moved = "\n".join([lines[command], *lines[:command], *lines[command + 1 :]])
    assert helpers.profile(moved).value("nccl.test_slow_run_p2p_off") is False
    assert "nccl-test-p2p-slower" not in helpers.findings_by_rule(moved)


def test_a_run_far_below_the_nvlink_it_has_is_no_p2p() -> None:
    # real: NV18 between every pair of a DGX H100; the second run (NVLink disabled) at 24 GB/s
    text = _text("nccl-b203")
    profile = helpers.profile(text)
    assert profile.value("topology.nvlink_links") == 18
    assert profile.value("nccl.test_busbw") == pytest.approx(24.27)
    assert "nccl-test-below-nvlink" in helpers.findings_by_rule(text)
    # the NVLink run alone, at 370 GB/s, is what NV18 gives
    nvlink_only = text[: text.index("Disabling NVLink")]
    assert helpers.profile(nvlink_only).value("nccl.test_busbw") == pytest.approx(370.75)
    assert "nccl-test-below-nvlink" not in helpers.findings_by_rule(nvlink_only)
    # constructed: the same runs with a second host in the rank lines may be bound by the network instead
    ranks = "#  Rank  0 Group  0 Pid 1 on node-a device  0 [0x0f] NVIDIA H100 80GB HBM3\n" + (
        "#  Rank  1 Group  0 Pid 1 on node-b device  0 [0x0f] NVIDIA H100 80GB HBM3\n"
    )
    two_hosts = text.replace("Disabling NVLink", ranks + "Disabling NVLink")
    assert helpers.profile(two_hosts).value("nccl.test_hosts") == 2
    assert "nccl-test-below-nvlink" not in helpers.findings_by_rule(two_hosts)


def test_gpus_without_peer_access_are_named_with_the_measured_bandwidth() -> None:
    # real: two RTX 2080 Ti on one PCIe switch, `nvidia-smi topo -p2p p` NS, busbw 4.00 GB/s from 32 MiB up
    text = _text("nccl-b201")
    finding = helpers.findings_by_rule(text)["nccl-test-p2p-unsupported"]
    assert "4.0 GB/s" in finding.explanation
    assert "not in the log" in finding.explanation
    assert "nccl-test-p2p-unsupported" not in helpers.findings_by_rule(
        text.replace(" NS ", " OK ").replace("NS\n", "OK\n")
    )


def test_small_messages_do_not_measure_the_link() -> None:
    # real rows of nccl-b201 up to 16 MiB only: latency-bound, no large-message figure
    text = _text("nccl-b201")
    cut = text[: text.index("    33554432")]
    assert helpers.profile(cut).value("nccl.test_busbw") is None


def test_a_table_that_reaches_its_last_size_is_an_excerpt_not_a_hang() -> None:
    # real: `sendrecv_perf -b 128M -e 1G -f 2` with rows up to 1 GiB and no summary lines after them
    text = _text("nccl-bh23")
    assert helpers.profile(text).value("nccl.test_rows_complete") is True
    assert helpers.profile(text).value("nccl.test_unfinished") is False
    assert "nccl-test-unfinished" not in helpers.findings_by_rule(text)
    # the same table stopped before 1 GiB: nccl-tests prints a row when a size completes, so it stopped inside one
    stopped = text[: text.index("  1073741824")]
    assert helpers.profile(stopped).value("nccl.test_rows_complete") is False
    assert helpers.profile(stopped).value("nccl.test_unfinished") is True
    # a row cut in the middle is no row: the table stopped before its last size too
    cut = text[: text.index("  1073741824") + 40]
    assert helpers.profile(cut).value("nccl.test_unfinished") is True
    # without the command, the sizes the run sweeps are not known: a table without its summary stays unfinished
    headless = text[text.index("\n") + 1 :]
    assert helpers.profile(headless).value("nccl.test_rows_complete") is None
    assert helpers.profile(headless).value("nccl.test_unfinished") is True
