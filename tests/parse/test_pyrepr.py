"""The Python-repr grammar: literals, enum reprs, constructor calls, truncated dumps."""

from __future__ import annotations

import doctest

import pytest

from logdoctor.parse import pyrepr
from logdoctor.parse.pyrepr import parse_kwargs, parse_value


def test_doctests() -> None:
    result = doctest.testmod(pyrepr)
    assert result.attempted >= 5
    assert result.failed == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("None", None),
        ("[1, 2.5, -3, 1e-05]", [1, 2.5, -3, 1e-05]),
        ("(2, 1)", [2, 1]),
        ('{"level":3,"use_cudagraph":true,"x":null}', {"level": 3, "use_cudagraph": True, "x": None}),
        ("{'a': 'it\\'s'}", {"a": "it's"}),
        (
            "<CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>",
            {"__enum__": "CUDAGraphMode.FULL_AND_PIECEWISE", "value": [2, 1]},
        ),
        ("<DynamicShapesType.BACKED: 'backed'>", {"__enum__": "DynamicShapesType.BACKED", "value": "backed"}),
        ("<function f at 0x7dc10ca6fba0>", "<function f at 0x7dc10ca6fba0>"),
        ("PosixPath('/x')", {"__class__": "PosixPath", "__args__": ["/x"]}),
        ("{1, 2}", [1, 2]),
    ],
)
def test_values(text: str, expected: object) -> None:
    parsed = parse_value(text)
    assert parsed.value == expected
    assert parsed.truncated is False


def test_story_truncated_non_default_args() -> None:
    text = (
        "{'model_tag': '/root/models/Qwen3.6-27B', 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.9, "
        "'speculative_config': {'method': 'dflash', 'model': '/root/models/Qwen3.6-27B-DFlash', 'num_sp..."
    )
    parsed = parse_value(text)
    assert parsed.truncated is True
    assert parsed.value["tensor_parallel_size"] == 2
    assert parsed.value["speculative_config"] == {
        "method": "dflash",
        "model": "/root/models/Qwen3.6-27B-DFlash",
    }


def test_engine_init_kwargs_with_bare_words_and_truncation() -> None:
    text = (
        "model='/model', speculative_config=SpeculativeConfig(method='mtp', model='g/x', num_spec_tokens=4), "
        "tokenizer_mode=auto, dtype=torch.bfloat16, quantization=compressed-tensors, device_config=cuda, "
        "kv_cache_dtype=fp8,  device_config=cuda, observability_config=ObservabilityConfig(a=None, ..., b=F..."
    )
    parsed = parse_kwargs(text)
    assert parsed.truncated is True
    assert parsed.value["speculative_config"]["num_spec_tokens"] == 4
    assert parsed.value["dtype"] == "torch.bfloat16"
    assert parsed.value["quantization"] == "compressed-tensors"
    assert parsed.value["observability_config"] == {"__class__": "ObservabilityConfig", "a": None}


def test_garbage_never_raises() -> None:
    for text in ["", "{", "}}}", "'unterminated", "<<<>>>", "\x00\xff", "a=b=c", "(" * 500]:
        parse_value(text)
        parse_kwargs(text)
