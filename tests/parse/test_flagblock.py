"""A fenced list of engine flags, one a line, read as a launch command's options (logdoctor/parse/flagblock.py).

The real blocks are lines of fixtures/logs/realworld9 (GPUStack performance-lab documents); the others are
constructed, as marked."""

from __future__ import annotations

from pathlib import Path

from logdoctor.events import StartupConfig
from logdoctor.parse.flagblock import engine_of, flag_words
from logdoctor.parse.pipeline import parse_text

_REALWORLD9 = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld9"


def _configs(text: str, engine: str | None = None) -> list[StartupConfig]:
    return [e for e in parse_text(text, engine=engine) if isinstance(e, StartupConfig)]


def _lines(case: str, first: int, last: int) -> str:
    lines = (_REALWORLD9 / f"{case}.log").read_text().splitlines()
    return "\n".join(lines[first - 1 : last]) + "\n"


def test_an_indented_fenced_list_of_sglang_flags_is_its_launch_settings() -> None:
    # sglang-c204.log lines 5-14: a list item's "Backend Parameters:" and the fence under it
    (config,) = _configs(_lines("sglang-c204", 5, 14))
    assert config.engine == "sglang"
    assert config.origin == "command line"
    assert (config.line, config.end_line) == (4, 9)  # the flag lines, counted in the slice
    assert config.config == {
        "tp_size": 8,
        "dp_size": 8,
        "enable_dp_attention": True,
        "mem_fraction_static": 0.85,
        "moe_a2a_backend": "deepep",
        "max_running_requests": 64,
    }


def test_a_json_value_is_the_rest_of_its_line() -> None:
    # vllm-c207.log lines 4-9
    (config,) = _configs(_lines("vllm-c207", 4, 9))
    assert config.engine == "vllm"
    assert config.config["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 4}
    assert config.config["max_model_len"] == 32768


def test_the_engine_is_the_one_whose_vocabulary_alone_holds_a_flag() -> None:
    assert engine_of(["--max-num-seqs=256", "--reasoning-parser=qwen3"]) == "vllm"
    assert engine_of(["--tp-size=8", "--enable-dp-attention"]) == "sglang"
    # constructed: flags of both engines' vocabularies, or of neither, name no engine
    assert engine_of(["--max-num-seqs=256", "--max-running-requests=64"]) is None
    assert engine_of(["--reasoning-parser=qwen3"]) is None
    assert engine_of(["--reasoning-parser=qwen3"], forced="sglang") == "sglang"


def test_only_a_fence_of_flags_alone_is_read() -> None:
    # constructed: a fence that also holds prose, flags outside a fence, and a list no engine claims alone
    assert _configs("```\n--max-num-seqs=256\nthen run the client\n```\n") == []
    assert _configs("--max-num-seqs=256\n--gpu-memory-utilization=0.8\n") == []
    assert _configs("```bash\n--reasoning-parser=qwen3\n```\n") == []
    (forced,) = _configs("```bash\n--reasoning-parser=qwen3\n```\n", engine="vllm")
    assert forced.config == {"reasoning_parser": "qwen3"}


def test_flag_words_take_each_line_as_one_argument() -> None:
    # constructed
    assert flag_words(["  --max-num-seqs 256", "--enforce-eager", "--served-model-name='my model' \\"]) == [
        "--max-num-seqs=256",
        "--enforce-eager",
        "--served-model-name=my model",
    ]
    assert flag_words(["--tp-size=8", "python -m x"]) is None


def test_flags_in_a_sentences_inline_code_are_its_settings() -> None:
    # realworld11 vllm-c451.log line 5: a setup note's bullet, the flags in inline code
    (config,) = _configs("- `--quantization quark --dtype bfloat16 --enforce-eager --max-model-len 2048`,\n")
    assert config.engine == "vllm" and config.origin == "command line"
    assert config.config["enforce_eager"] is True and config.config["max_model_len"] == 2048


def test_inline_flags_the_sentence_says_did_not_run_are_not_read() -> None:
    # constructed: the same flag, said as what was not run, suggested, or wrapped in a command line
    for text in (
        "We ran without `--enforce-eager` this time.",
        "You could try `--enforce-eager` to save memory.",
        # an engine's advice in a warning pasted without its header (SGLang 0.5.23, srt/utils/numa_utils.py)
        "in this case the available memory amount of each rank cannot be determined in prior. Please set proper "
        "`--max-total-tokens` to avoid the out-of-memory error.",
        "The flag `--enforce-eager makes decode slow` here.",  # a span that is no flag list: nothing is read
    ):
        assert not _configs(text + "\n"), text
