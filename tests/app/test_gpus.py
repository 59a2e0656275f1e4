"""`logdoctor gpus` lists the GPU table; an unknown --gpu names the nearest; without a GPU the hint says what the
log says about it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.perf.hardware import load_hardware

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def test_gpus_lists_every_name_of_the_table() -> None:
    result = CliRunner().invoke(main, ["gpus"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    table = load_hardware()
    for gpu in table.gpus:
        assert gpu.name in result.output
    assert f"{len(table.gpus)} GPUs" in result.output
    assert "768" in result.output  # the RTX A6000's bandwidth, the figure the model uses


def test_unknown_gpu_names_the_nearest_and_the_command() -> None:
    result = CliRunner().invoke(main, ["diagnose", str(STORY), "--gpu", "RTX A600"])
    assert result.exit_code == 2
    assert "nearest known: RTX A6000" in result.stderr and "logdoctor gpus" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_gpu_hint_says_what_the_log_says_about_the_gpu() -> None:
    result = CliRunner().invoke(main, ["diagnose", str(STORY), "--format", "json"])
    how = next(u["how"] for u in json.loads(result.stdout)["performance"]["unknown"] if u["what"] == "GPU")
    # 2 GPUs holding 27.4 GiB of weights and 6.1 GiB of KV cache within 0.92 of their memory
    assert "2 GPU(s) (TP=2)" in how and "at least 36 GiB each" in how
    assert "logdoctor gpus" in how and "RTX A6000" not in how  # no GPU named that the log does not name
