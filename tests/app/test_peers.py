"""Hosts whose GPUs differ from their peers' are named with what differs and their speed."""

from __future__ import annotations

from typing import Any

from logdoctor.app.peers import host_outliers, outlier_lines
from logdoctor.engine.result import Diagnosis, Performance, unread_diagnosis


def _host(name: str, per_request: float | None = None, **facts: Any) -> Diagnosis:
    d = unread_diagnosis(name, "constructed")
    performance = Performance(known=True, measured_per_request_tok_s=per_request) if per_request else None
    return d.model_copy(
        update={"facts": {k.replace("_", ".", 1): v for k, v in facts.items()}, "performance": performance}
    )


def test_the_host_whose_link_and_clock_differ_is_named() -> None:
    hosts = ["node1", "node2", "node3", "node4"]
    same = {"gpu_pcie_link_ratio": 1.0, "gpu_sm_clock_ratio": 0.73, "gpu_hardware_error_count": 0.0}
    diagnoses = [
        _host("node1", 30.5, **same),
        _host("node2", 31.0, **same),
        _host(
            "node3",
            12.1,
            gpu_pcie_link_ratio=0.25,
            gpu_pcie_link="GPU 0: gen4 x4 of gen4 x16 (busy)",
            gpu_sm_clock_ratio=0.40,
            gpu_sm_clock="GPU 0 800 of 1980 MHz",
            gpu_hardware_error_count=0.0,
        ),
        _host("node4", 29.0, **same),
    ]
    [odd] = host_outliers(hosts, diagnoses)
    assert odd.host == "node3" and odd.per_request == 12.1 and odd.median == 29.75
    assert odd.differences[0].startswith("PCIe link GPU 0: gen4 x4 of gen4 x16 (busy), 25% of its bandwidth")
    assert "SM clock GPU 0 800 of 1980 MHz busy, 0.40 of max (peers: 0.73)" in odd.differences[1]
    lines = outlier_lines([odd], 4)
    assert lines[0] == "host-state outliers: 1 of 4 hosts differs from their peers"
    assert lines[1].endswith("12.1 tok/s per request (fleet median 29.8)")


def test_identical_hosts_and_a_lone_reading_name_none() -> None:
    same = {"gpu_pcie_link_ratio": 0.5, "gpu_sm_clock_ratio": 0.73}
    assert host_outliers(["a", "b"], [_host("a", **same), _host("b", **same)]) == []
    # only one host reports a hardware fault count: nothing to compare it with
    assert host_outliers(["a", "b"], [_host("a", gpu_hardware_error_count=2.0), _host("b")]) == []


def test_a_faulty_host_among_clean_peers() -> None:
    diagnoses = [
        _host("a", gpu_hardware_error_count=0.0),
        _host("b", gpu_hardware_error_count=1.0, gpu_hardware_errors=["Xid 79 (PCI 0000:3b:00): fallen off the bus"]),
        _host("c", gpu_hardware_error_count=0.0),
    ]
    [odd] = host_outliers(["a", "b", "c"], diagnoses)
    assert odd.host == "b" and odd.per_request is None
    assert odd.reason == "1 hardware fault(s): Xid 79 (PCI 0000:3b:00): fallen off the bus (peers: none)"
