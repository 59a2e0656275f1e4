"""A model's (or a drafter's) Hugging Face `config.json` given beside a log: its shape as a configuration dump.

    {                                          the block opens on the `"architectures"` key line (the first or
      "architectures": [                       nearly the first key of every config.json: transformers writes
        "Qwen3MoeForCausalLM"                  the keys sorted, `_name_or_path` aside) and reads to the
      ],                                       document's closing brace; a one-line (minified) document is read
      "hidden_size": 2048,                     from the line itself
      "num_hidden_layers": 48,
      ...
    }
                                               -> StartupConfig(engine="modelconfig", origin="model config",
                                                                config={"layers": 48, "hidden_size": 2048, ...})

The document is parsed with `json.loads` once it is whole (config.json files are a few kB; one past
`_MAX_CHARS` or `_MAX_LINES` is not a model config and is dropped). A document without `architectures` and
`num_hidden_layers` / `hidden_size` (top level or under `text_config`) gives no event: a JSON file that is not a
model config is not misread as one. The shape it gives is in shape.py; the facts in `__init__.py`.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from logdoctor.events import EventBase, StartupConfig
from logdoctor.inputs.modelconfig.shape import shape_of
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_OPEN_RE = re.compile(r'^\s*"architectures"\s*:')
_MAX_CHARS = 1 << 20  # a config.json is kilobytes; a document past this is not one
_MAX_LINES = 50_000
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass
class _Doc:
    first: LogLine
    parts: list[str] = field(default_factory=list)
    depth: int = 1  # inside the top-level object the architectures key belongs to
    chars: int = 0


def _depth_change(text: str) -> int:
    bare = _STRING_RE.sub('""', text)
    return bare.count("{") + bare.count("[") - bare.count("}") - bare.count("]")


def _events(doc_text: str, line: LogLine, end: int, ctx: ParseContext) -> list[EventBase]:
    try:
        cfg, _ = json.JSONDecoder().raw_decode(doc_text)
    except ValueError:
        return []
    if not isinstance(cfg, dict):
        return []
    shape = shape_of(cfg)
    if shape is None:
        return []
    base = ctx.base(line, "modelconfig")
    base["end_line"] = end
    config: dict[str, Any] = {k: v for k, v in asdict(shape).items() if v is not None}
    name = cfg.get("_name_or_path")
    if isinstance(name, str) and name:
        config["name_or_path"] = name
    return [StartupConfig(**base, origin="model config", config=config)]


def _read_block(doc: _Doc) -> Any:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        doc.parts.append(line.text)
        doc.chars += len(line.text) + 1
        doc.depth += _depth_change(line.text)
        if doc.chars > _MAX_CHARS or len(doc.parts) > _MAX_LINES:
            ctx.block = None
            return []
        if doc.depth > 0:
            return []
        ctx.block = None
        return _events("{\n" + "\n".join(doc.parts), doc.first, line.number, ctx)

    return read


def parse_config_json(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    text = line.text
    stripped = text.lstrip()
    if stripped.startswith("{") and '"architectures"' in stripped:
        # a minified document on one line (or its opening line with the key on it)
        if _depth_change(stripped) == 0:
            return _events(stripped, line, line.number, ctx)
        doc = _Doc(line, depth=_depth_change(stripped))
        doc.parts.append(stripped[1:])
        ctx.block = _read_block(doc)
        return []
    if not _OPEN_RE.match(text):
        return None
    doc = _Doc(line)
    doc.parts.append(text)
    doc.depth += _depth_change(text)
    ctx.block = _read_block(doc)
    return []


_LLAMA = """\
{
  "architectures": [
    "LlamaForCausalLM"
  ],
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "tie_word_embeddings": false,
  "vocab_size": 128256
}"""

GRAMMARS: list[Grammar] = [
    Grammar(
        "modelconfig.config_json",
        "modelconfig",
        ('"architectures"',),
        parse_config_json,
        (
            # keys of meta-llama/Llama-3.1-8B's config.json (fixtures/inputs/modelconfig has the whole file)
            case(
                "pretty",
                _LLAMA,
                ("startup_config", {"origin": "model config", "config": {"layers": 32, "hidden_size": 4096}}),
            ),
            case(
                "minified",
                '{"architectures": ["DFlashDraftModel"], "block_size": 16, "dflash_config": {"target_layer_ids": '
                '[1, 9, 17, 25, 33]}, "hidden_size": 4096, "intermediate_size": 12288, "num_attention_heads": 32, '
                '"num_hidden_layers": 5, "num_key_value_heads": 8, "head_dim": 128, "num_target_layers": 36, '
                '"vocab_size": 151936}',
                (
                    "startup_config",
                    {"config": {"layers": 5, "drafter": "dflash", "drafter_block_size": 16, "target_layers": 36}},
                ),
            ),
            case("not-a-model", '{"architectures": ["X"], "foo": 1}', exact=True),
        ),
    ),
]
