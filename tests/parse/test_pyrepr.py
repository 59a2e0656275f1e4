"""The Python-repr grammar: literals, enum reprs, constructor calls, truncated dumps."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logdoctor.parse import pyrepr
from logdoctor.parse.pyrepr import parse_kwargs, parse_value, scan_top_level


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


# --- the plain reader answers what the grammar answers --------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet="ab '\"/.:_-{}[](),=<>…é\\", max_size=8)
)
_literals = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=4).map(tuple)
        | st.dictionaries(_scalars, children, max_size=4)
    ),
    max_leaves=12,
)


def _by_grammar(text: str) -> object:
    import pyparsing as pp

    try:
        result = pyrepr._grammar("value").parse_string(text, parse_all=True)
    except (pp.ParseBaseException, RecursionError):
        return pyrepr.FAILED
    return result[0] if len(result) else None


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and repr(a) == repr(b)  # 1 == 1.0 == True: compare types as well, nested too


@settings(max_examples=300)
@given(value=_literals, data=st.data())
def test_plain_reader_agrees_with_the_grammar(value: object, data: st.DataObject) -> None:
    text = repr(value)
    cut = data.draw(st.integers(0, len(text)))
    spaced = data.draw(st.booleans())
    for candidate in (text, text[:cut], text.replace(", ", " ,\n ") if spaced else text):
        plain = pyrepr._plain_value(candidate)
        if plain is pyrepr.OUTSIDE:
            continue
        assert _same(plain, _by_grammar(candidate)), candidate
    assert pyrepr._plain_value(text) is not pyrepr.FAILED  # a whole repr is never called cut off


@settings(max_examples=200)
@given(value=_literals, data=st.data())
def test_cut_dumps_parse_as_before(value: object, data: st.DataObject) -> None:
    # parse_value with the plain reader against the grammar alone (the repair loop included).
    text = repr(value)
    text = text[: data.draw(st.integers(0, len(text)))] + data.draw(st.sampled_from(["", "...", "…"]))
    original = pyrepr._attempt

    def grammar_only(kind: str, candidate: str, convert: object) -> object:
        import pyparsing as pp

        try:
            return convert(pyrepr._grammar(kind).parse_string(candidate, parse_all=True))  # type: ignore[operator]
        except (pp.ParseBaseException, RecursionError):
            return pyrepr.FAILED

    try:
        pyrepr._attempt = grammar_only  # type: ignore[assignment]
        expected = parse_value(text)
    finally:
        pyrepr._attempt = original
    got = parse_value(text)
    assert got.truncated == expected.truncated and _same(got.value, expected.value), text


def test_plain_reader_reads_the_story_dump_without_pyparsing() -> None:
    line = (
        "{'model_tag': '/root/models/Qwen3.6-27B', 'port': 8000, 'gpu_memory_utilization': 0.92, "
        "'enable_prefix_caching': True, 'speculative_config': {'method': 'dflash', 'num_sp..."
    )
    assert pyrepr._plain_value(line) is pyrepr.FAILED
    assert pyrepr._plain_value("{'a': auto}") == {"a": "auto"}  # a bare word, as the grammar reads it
    assert pyrepr._plain_value("{'a', 'b'}") is pyrepr.OUTSIDE  # a set: the grammar's to read
    parsed = parse_value(line)
    assert parsed.truncated and parsed.value["speculative_config"] == {"method": "dflash"}


def test_scan_top_level_skips_quoted_strings() -> None:
    # brackets and commas inside a string, escaped quote and all, are the value's, not the dump's
    top = scan_top_level('a=\'x, (y\', b="q\\", [", c=[1, 2]')
    assert (top.depth, top.quoted, top.commas) == (0, False, [9, 21])
    # a dump cut inside a list, or inside a string: still open
    assert scan_top_level("a=1, b=[1, 2").depth == 1
    assert scan_top_level("a=1, b='cut, off").quoted
    # an over-closed dump goes below 0 unless clamped, where the stray closer is ignored
    assert scan_top_level("a=1), b=2").depth == -1
    assert scan_top_level("a=1), b=2").commas == []
    assert scan_top_level("a=1), b=2", clamp=True).commas == [4]


# --- the plain reader on the rest of the dump syntax: bare words, calls, enum and opaque reprs, elisions, kwargs ----

_WORDS = st.sampled_from(
    ["auto", "torch.bfloat16", "Qwen/Qwen3-8B", "cuda:0", "a-b", "x.", "inf", "nan", "-inf", "null", "true", "None"]
)
_NAMES = st.sampled_from(["SpeculativeConfig", "CUDAGraphMode.FULL", "a", "x_1", "Mode.B"])
_KEYS = st.sampled_from(["model", "num_spec_tokens", "x", "a_b", "mode"])
_SPACES = st.sampled_from(["", " ", "  ", "\n "])


def _join(items: list[str], spaces: str, trailing: bool) -> str:
    return f"{spaces},{spaces}".join(items) + ("," if trailing and items else "")


def _dump_text(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    items = st.lists(children, max_size=3)
    kwarg = st.tuples(_KEYS, _SPACES, children).map(lambda t: f"{t[0]}{t[1]}={t[1]}{t[2]}")
    return st.one_of(
        st.tuples(items, _SPACES, st.booleans()).map(lambda t: "[" + _join(*t) + "]"),
        st.tuples(items, _SPACES, st.booleans()).map(lambda t: "(" + _join(*t) + ")"),
        st.tuples(st.lists(st.tuples(_literal_key, children), max_size=3), _SPACES).map(
            lambda t: "{" + _join([f"{k}:{t[1]}{v}" for k, v in t[0]], t[1], False) + "}"
        ),
        st.tuples(items, _SPACES).map(lambda t: "{" + _join(t[0], t[1], False) + "}"),  # a set, or `{}`
        st.tuples(_NAMES, _SPACES, st.lists(kwarg | children, max_size=3), st.booleans()).map(
            lambda t: f"{t[0]}{t[1]}(" + _join(t[2], t[1], t[3]) + ")"
        ),
        st.tuples(_NAMES, _SPACES, children).map(lambda t: f"<{t[1]}{t[0]}{t[1]}:{t[1]}{t[2]}{t[1]}>"),
    )


_literal_key = st.one_of(st.integers(-5, 5).map(str), st.text(alphabet="ab :", max_size=3).map(repr), _WORDS)
_leaf = st.one_of(
    _literal_key,
    _WORDS,
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["...", "…", "<function f at 0x7f>", "<class 'x'>", "'a\\'b'", "'x>'", "<a>b>", "=", "x y"]),
)
_dumps = st.recursive(_leaf, _dump_text, max_leaves=10)
_kwarg_dumps = st.tuples(
    st.lists(st.tuples(_KEYS, _dumps).map(lambda t: f"{t[0]}={t[1]}") | st.just("..."), max_size=4),
    _SPACES,
    st.booleans(),
).map(lambda t: _join(*t))


def _grammar_reads(kind: str, text: str) -> object:
    import pyparsing as pp

    try:
        result = pyrepr._grammar(kind).parse_string(text, parse_all=True)
    except (pp.ParseBaseException, RecursionError):
        return pyrepr.FAILED
    if kind == "kwargs":
        return pyrepr._kwargs_to_dict(result)
    return result[0] if len(result) else None


@settings(max_examples=400)
@given(kind=st.sampled_from(["value", "kwargs"]), data=st.data())
def test_plain_reader_agrees_with_the_grammar_on_the_whole_dump_syntax(kind: str, data: st.DataObject) -> None:
    text = data.draw(_dumps if kind == "value" else _kwarg_dumps)
    read = pyrepr._plain_value if kind == "value" else pyrepr._plain_kwargs
    cut = data.draw(st.integers(0, len(text)))
    for candidate in (text, text[:cut]):
        plain = read(candidate)
        if plain is not pyrepr.OUTSIDE:
            assert _same(plain, _grammar_reads(kind, candidate)), candidate


def test_the_engine_init_dump_is_read_without_the_grammar() -> None:
    # the bench log's V1 engine-init line (a real vLLM 0.20 dump's shape): calls, bare words, enums, nested dicts
    dump = (
        "model='Qwen/Qwen3-8B', speculative_config=SpeculativeConfig(method='dflash', model='z-lab/Qwen3-8B-DFlash-b16',"
        " num_spec_tokens=15), tokenizer_mode=auto, dtype=torch.bfloat16, device_config=cuda, seed=0, "
        "served_model_name=Qwen/Qwen3-8B, compilation_config={'mode': <CompilationMode.VLLM_COMPILE: 3>, "
        "'cudagraph_mode': <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, 'custom_ops': ['none']}"
    )
    plain = pyrepr._plain_kwargs(dump)
    assert plain is not pyrepr.OUTSIDE and plain is not pyrepr.FAILED
    assert _same(plain, _grammar_reads("kwargs", dump))
    assert plain["speculative_config"]["num_spec_tokens"] == 15  # type: ignore[index]
    assert plain["compilation_config"]["cudagraph_mode"] == {  # type: ignore[index]
        "__enum__": "CUDAGraphMode.FULL_AND_PIECEWISE",
        "value": [2, 1],
    }
