"""The GPU table: memory bandwidth, capacity, tensor peaks and links, from `hardware.yaml` plus user files.

    >>> table = load_hardware()
    >>> table.lookup("NVIDIA RTX A6000").gpu.memory_bandwidth_gb_s
    768.0
    >>> table.lookup("Tesla V100-SXM2-32GB").gpu.name
    'V100 SXM2'

Names are matched after normalising case, separators, the `NVIDIA` / `GeForce` / `Tesla` words and
memory suffixes (`80GB`, `HBM3`), in that order, so the most specific alias wins: `A100-SXM4-40GB`
finds the 40 GB part, `A100-SXM4` (no size) the first SXM entry.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from logdoctor.errors import ConfigError
from logdoctor.records import Record, pydantic_twin
from logdoctor.records import field as record_field


class NvLink(Record):
    generation: int
    bandwidth_gb_s: float  # per GPU, as the vendor states it


class PcieLink(Record):
    generation: int
    lanes: int = 16


class GpuSpec(Record):
    name: str
    vendor: Literal["nvidia", "amd"] = "nvidia"
    aliases: list[str] = record_field(default_factory=list)
    memory_gb: float
    memory_bandwidth_gb_s: float
    bf16_tflops: float | None
    fp16_tflops: float | None = None
    fp8_tflops: float | None
    nvlink: NvLink | None
    infinity_fabric_gb_s: float | None = None
    pcie: PcieLink
    source: str
    notes: str = ""

    def tensor_tflops(self, dtype_bytes: float) -> float | None:
        """The dense peak a GEMM of this weight width runs at: FP8 for 1-byte weights, else BF16 (FP16 on GPUs
        without BF16); 4-bit weights are dequantised to 16-bit for the GEMM (Marlin), so they get the BF16 peak."""
        if dtype_bytes == 1 and self.fp8_tflops is not None:
            return self.fp8_tflops
        return self.bf16_tflops if self.bf16_tflops is not None else self.fp16_tflops


class PcieGeneration(Record):
    per_lane_gb_s: float  # per direction, after encoding
    source: str


class Constant(Record):
    value: float
    source: str


class ModelShape(Record):
    """What logs do not print about a model and the bound needs: layers (all-reduces, launch overhead), hidden
    size (the all-reduce message), and an untied input embedding (loaded, but a decode step gathers B rows of it
    instead of reading it). From the model's config.json, cited in `source`."""

    layers: int  # >= 1, like hidden_size and vocab_size (_CONSTRAINTS)
    hidden_size: int
    vocab_size: int | None = None
    tied_embeddings: bool = True  # True: no separate input embedding to discount (the safe default: W stays whole)
    # what one decode step reads for one token (the layers and the LM head: not the input embedding, a vision tower
    # or MTP layers) and the text model's total, counted from the config as `model.read_params` / `model.params` are;
    # None where the entry gives only the shape
    read_params: float | None = None
    params: float | None = None
    aliases: list[str] = record_field(default_factory=list)
    source: str

    def unread_bytes_per_gpu(self, tp: int, dtype_bytes: float) -> float:
        """The untied input embedding's share on one GPU (vocab x h x bytes / TP); 0 when tied or unknown."""
        if self.tied_embeddings or self.vocab_size is None:
            return 0.0
        return self.vocab_size * self.hidden_size * dtype_bytes / max(tp, 1)

    def lm_head_bytes_per_gpu(self, tp: int, dtype_bytes: float = 2.0) -> float | None:
        """The LM head's share on one GPU (vocab x h x bytes / TP), tied or not: a drafter that computes logits
        reads it again for every pass. None when the vocabulary is unknown."""
        if self.vocab_size is None:
            return None
        return self.vocab_size * self.hidden_size * dtype_bytes / max(tp, 1)


class HardwareFile(Record):
    """One hardware file as written: the built-in table or a user's."""

    pcie: dict[str, PcieGeneration] = record_field(default_factory=dict)
    constants: dict[str, Constant] = record_field(default_factory=dict)
    gpus: list[GpuSpec] = record_field(default_factory=list)
    models: dict[str, ModelShape] = record_field(default_factory=dict)


# What the annotations do not say, for the pydantic twins that word a user's error (and the plain check below).
_CONSTRAINTS: dict[str, dict[str, dict[str, Any]]] = {
    "ModelShape": {"layers": {"ge": 1}, "hidden_size": {"ge": 1}, "vocab_size": {"ge": 1}},
}


def _fits_constraints(table: HardwareFile) -> bool:
    return all(
        s.layers >= 1 and s.hidden_size >= 1 and (s.vocab_size is None or s.vocab_size >= 1)
        for s in table.models.values()
    )


# Lookup and HardwareTable are plain classes, not dataclasses: creating a dataclass costs about 4 M instructions
# (its methods are generated and exec'd), a diagnosis makes both (docs/benchmarks.md, *Start-up*).
class Lookup:
    """The answer to `lookup(name)`: the GPU, or `gpu is None` and a message saying what to pass."""

    __slots__ = ("gpu", "matched", "nearest", "query")

    def __init__(
        self, query: str, gpu: GpuSpec | None, matched: str | None = None, nearest: tuple[str, ...] = ()
    ) -> None:
        self.query = query
        self.gpu = gpu
        self.matched = matched  # the name or alias that matched
        self.nearest = nearest  # unknown: the table's names closest to the query

    def __repr__(self) -> str:
        return f"Lookup(query={self.query!r}, gpu={self.gpu!r}, matched={self.matched!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lookup):
            return NotImplemented
        return (self.query, self.gpu, self.matched) == (other.query, other.gpu, other.matched)

    def __hash__(self) -> int:
        return hash((self.query, self.gpu, self.matched))

    @property
    def message(self) -> str:
        if self.gpu is None:
            near = f"nearest known: {', '.join(self.nearest)}; " if self.nearest else ""
            return f"unknown GPU: {self.query} ({near}`logdoctor gpus` lists every name --gpu takes)"
        return f"{self.query} -> {self.gpu.name}"


_VENDOR_WORDS = re.compile(r"\b(nvidia|geforce|tesla|quadro|amd|instinct)\b")
_MEMORY_WORDS = re.compile(r"\b\d+\s*gi?b?\b|\bhbm\d?e?\b|\bgddr\d?x?\b")


def _squash(text: str) -> str:
    return " ".join(re.sub(r"[-_/,()]+", " ", text.lower()).split())


def normalise(name: str, level: int = 0) -> str:
    """Level 0: case and separators; 1: also vendor words; 2: also memory sizes and types."""
    text = _squash(name)
    if level >= 1:
        text = " ".join(_VENDOR_WORDS.sub(" ", text).split())
    if level >= 2:
        text = " ".join(_MEMORY_WORDS.sub(" ", text).split())
    return text


class HardwareTable:
    __slots__ = ("constants", "gpus", "models", "pcie")

    def __init__(
        self,
        gpus: tuple[GpuSpec, ...],
        pcie: dict[str, PcieGeneration],
        constants: dict[str, Constant],
        models: dict[str, ModelShape] | None = None,
    ) -> None:
        self.gpus = gpus
        self.pcie = pcie
        self.constants = constants
        self.models: dict[str, ModelShape] = {} if models is None else models

    def __repr__(self) -> str:
        return f"HardwareTable({len(self.gpus)} GPUs, {len(self.models)} models)"

    def model_shape(self, model: str) -> tuple[str, ModelShape] | None:
        """The shape of a served model by its name or path (`/root/models/Qwen3.6-27B`,
        `meta-llama/Llama-3.1-8B-Instruct`): the last path component, then without a packaging suffix
        (`-Instruct`, `-FP8`, `-AWQ` ...). None when the table does not know it."""
        tail = model.rstrip("/").rsplit("/", 1)[-1]
        wanted = [normalise(tail), normalise(_PACKAGING.sub("", tail))]
        for level_name in wanted:
            for name, shape in self.models.items():
                if level_name in (normalise(n) for n in (name, *shape.aliases)):
                    return name, shape
        return None

    def constant(self, name: str) -> Constant:
        return self.constants[name]

    def pcie_gb_s(self, link: PcieLink) -> float | None:
        """Per-direction bandwidth of a PCIe link."""
        gen = self.pcie.get(str(link.generation))
        return None if gen is None else gen.per_lane_gb_s * link.lanes

    def require(self, name: str) -> GpuSpec:
        """The GPU of that name; an unknown name is a one-line error (`--gpu` input)."""
        found = self.lookup(name)
        if found.gpu is None:
            raise ConfigError(found.message)
        return found.gpu

    def lookup(self, name: str) -> Lookup:
        for level in (0, 1, 2):
            wanted = normalise(name, level)
            if not wanted:
                continue
            for gpu in self.gpus:
                for candidate in (gpu.name, *gpu.aliases):
                    if normalise(candidate, level) == wanted:
                        return Lookup(name, gpu, candidate)
        return Lookup(name, None, nearest=self.nearest(name))

    def nearest(self, name: str, count: int = 3) -> tuple[str, ...]:
        """The table's GPU names closest to `name` (its names and aliases compared as lookup compares them)."""
        wanted = normalise(name, 2) or name.lower()
        spelled: dict[str, str] = {}
        for gpu in self.gpus:
            for candidate in (gpu.name, *gpu.aliases):
                spelled.setdefault(normalise(candidate, 2) or candidate.lower(), gpu.name)
        close = difflib.get_close_matches(wanted, list(spelled), n=count * 3, cutoff=0.4)
        return tuple(dict.fromkeys(spelled[c] for c in close))[:count]


# Packaging suffixes of a model name that do not change its shape (quantised and instruct variants).
_PACKAGING = re.compile(
    r"([-_](instruct|chat|it|base|hf|fp8|dynamic|awq|gptq|int4|int8|w4a16|w8a8|bf16|nvfp4|mxfp4|\d{4}))+$",
    re.I,
)

_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_BUILTIN = "hardware.yaml"


def _locate(tree: yaml.Node | None, loc: Sequence[str | int]) -> int:
    """1-based line of the node at a pydantic error location (the nearest existing parent)."""
    node = tree
    line = 1 if tree is None else tree.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = next(
                (v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)),
                None,
            )
            if nxt is None:
                key = next((k for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None)
                return line if key is None else key.start_mark.line + 1
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def parse_hardware_file(text: str, display: str) -> HardwareFile:
    """Validate one hardware file; a problem is one line `FILE:LINE: message` (ConfigError, exit 2)."""
    try:
        # the C safe loader where PyYAML has it (the built-in table is read on every diagnosis with a GPU);
        # the node tree, for error lines, only when there is an error to place
        data: Any = yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader (CSafeLoader / SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise ConfigError(f"{display}:{line}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{display}:1: a hardware file is a mapping with `gpus:` (and optionally `pcie:`, `constants:`, `models:`)"
        )
    try:  # the records' own conversion: no pydantic for a table that is right (the built-in one, each diagnosis)
        table = HardwareFile(**data)
        if _fits_constraints(table):
            return table
    except (ValueError, TypeError):
        pass
    from pydantic import BaseModel, ValidationError

    twins: dict[type[Record], type[BaseModel]] = {}
    try:
        checked = pydantic_twin(HardwareFile, twins, _CONSTRAINTS).model_validate(data)
    except ValidationError as exc:
        tree = yaml.compose(text, Loader=yaml.SafeLoader)
        # A misspelt key explains the "missing" errors that come with it: report it first.
        order = {"extra_forbidden": 0, "missing": 2}
        err = sorted(exc.errors(), key=lambda e: order.get(e["type"], 1))[0]
        where = ".".join(str(p) for p in err["loc"])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ConfigError(f"{display}:{_locate(tree, err['loc'])}: {where}: {err['msg']}{more}") from None
    return HardwareFile(**checked.model_dump())  # what pydantic accepted, as it converted it


def load_hardware(extra_paths: Iterable[str | Path] = ()) -> HardwareTable:
    """The built-in table, extended or overridden by each user file in turn (a GPU of the same name replaces it)."""
    builtin = resources.files("logdoctor.perf").joinpath(_BUILTIN).read_text(encoding="utf-8")
    files = [parse_hardware_file(builtin, _BUILTIN)]
    for path in extra_paths:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{p}: cannot read hardware file: {exc.__class__.__name__}") from None
        files.append(parse_hardware_file(text, str(p)))
    gpus: dict[str, tuple[int, int, GpuSpec]] = {}
    pcie: dict[str, PcieGeneration] = {}
    constants: dict[str, Constant] = {}
    models: dict[str, ModelShape] = {}
    for file_index, f in enumerate(files):
        for position, gpu in enumerate(f.gpus):
            gpus[normalise(gpu.name, 1)] = (file_index, position, gpu)
        pcie.update(f.pcie)
        constants.update(f.constants)
        models.update(f.models)
    # A user's GPUs are looked up first (so their aliases win), each file in its own order.
    ordered = tuple(g for _, _, g in sorted(gpus.values(), key=lambda t: (-t[0], t[1])))
    return HardwareTable(ordered, pcie, constants, models)
