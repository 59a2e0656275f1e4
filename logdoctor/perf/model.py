"""A roofline model of decode: the tok/s a deployment can reach at most on its hardware, with its working.

    >>> from logdoctor.perf.hardware import load_hardware
    >>> table = load_hardware()
    >>> dep = Deployment(gpu=table.lookup("RTX A6000").gpu, weights_bytes_per_gpu=13.5e9)
    >>> round(expected(dep, table).per_request_tok_s, 1)   # 768 GB/s x 0.88 / 13.5 GB
    50.1

Physics (docs/expected-performance.md has every formula with its source):

* a decode step reads the weights each GPU's step uses once (W_read: those loaded less an untied input embedding
  and a drafter's own, the active experts of a MoE) plus the KV cache of every running sequence:
  `t_mem = (W_read + B·S·KV_gpu) / (BW · f)`;
* it is compute-bound instead once `2·N_gpu·B·T` FLOPs take longer at the dense tensor peak;
* tensor parallelism adds 2 all-reduces per layer per step: `2·L·(α + 2(n−1)/n · B·T·h·2 / BW_link)`;
* eager mode (no CUDA graphs) adds a launch overhead per layer that does not shrink with batch: `L·o`;
* speculative decoding emits τ(k) = 1 + Σ_{i<k} r_i tokens per step for the cost of verifying k+1
  tokens per sequence plus drafting.

Everything is an upper bound: each unknown input is left out (and listed in `Expected.unknown`), which
can only make the bound higher.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from logdoctor.facts import speculation
from logdoctor.facts.speculation import DRAFTER_KINDS, DrafterCost, DrafterKind
from logdoctor.perf.hardware import GpuSpec, HardwareTable

Link = Literal["nvlink", "pcie", "p2p-off", "unknown"]

GIB = 2**30

_SRC_ROOFLINE = "kipply, transformer inference arithmetic (https://kipp.ly/transformer-inference-arithmetic/)"
_SRC_MEGATRON = "Megatron-LM, 2 all-reduces per layer (https://arxiv.org/abs/1909.08053)"
_SRC_BUSBW = (
    "nccl-tests PERFORMANCE.md, busbw = 2(n-1)/n (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md)"
)
_SRC_OFFLOAD = (
    "vLLM engine args, --cpu-offload-gb: per GPU; part of the model is loaded from CPU memory to GPU memory on "
    "the fly in each model forward pass (https://docs.vllm.ai/en/latest/configuration/engine_args.html); "
    "PCIe per-lane bandwidth: PCI-SIG (hardware.yaml)"
)
_SRC_SPEC = (
    "Leviathan et al. (https://arxiv.org/abs/2211.17192); tau(k) = 1 + sum r_i from vLLM's per-position "
    "counters (vllm/v1/spec_decode/metrics.py)"
)


@dataclass(frozen=True)
class SpecConfig:
    """Speculative decoding as configured and measured."""

    k: int
    method: str = "unknown"
    position_acceptance: tuple[float, ...] | None = None  # r_i: share of drafts whose first i+1 tokens were accepted
    mean_acceptance_length: float | None = None  # tau as the engine reports it (bonus token included)
    draft_cost_ratio: float | None = None  # per pass (sequential: per drafted token; block: per block); None: computed
    drafter_kind: DrafterKind | None = None  # None: from the method (DRAFTER_KINDS)
    drafter_layers: int | None = None  # decoder layers of the drafter (its config); None: the method's (DRAFTER_LAYERS)
    drafter_bytes_per_gpu: float | None = None  # the drafter's own weights per GPU where its size is known
    # per-step overhead of one drafted token beyond its bytes (speculation.overhead_seconds: the engine's measured);
    # the effects and the best k count it, the bound does not
    overhead_s_per_token: float = speculation.OVERHEAD_SECONDS_DEFAULT

    @property
    def drafter(self) -> DrafterKind:
        if self.drafter_kind is not None:
            return self.drafter_kind
        return DRAFTER_KINDS.get(self.method, "sequential")

    def cost_ratio(self) -> tuple[float, bool]:
        """(draft cost ratio, whether it is the assumed default) without the deployment's sizes."""
        if self.draft_cost_ratio is not None:
            return self.draft_cost_ratio, False
        return speculation.default_draft_cost(self.method), True


@dataclass(frozen=True)
class Deployment:
    """What the model needs to know about one deployment. Sizes are bytes; `None` means unknown."""

    gpu: GpuSpec
    gpus: int = 1
    tp: int = 1
    pp: int = 1
    weights_bytes_per_gpu: float | None = None
    # where weights_bytes_per_gpu is already what a step reads (the model's parameter counts), what it was counted
    # from; "" where it is the loaded figure
    weights_read_from: str = ""
    params: float | None = None  # total parameters (used when weights_bytes_per_gpu is unknown)
    active_fraction: float = 1.0  # MoE: active / total parameters (a token reads only its experts)
    unread_bytes_per_gpu: float = 0.0  # loaded but not read by a decode step: untied input embedding, vision encoder
    lm_head_bytes_per_gpu: float | None = None  # vocab x h x 2 / TP: what a drafter computing logits reads again
    host_bytes_per_gpu: float = 0.0  # weights offloaded to host memory (vLLM --cpu-offload-gb, per GPU): over PCIe
    dtype_bytes: float = 2.0  # bytes per weight: bf16/fp16 2, fp8 1, int4 ~0.5
    kv_bytes_per_token_per_gpu: float | None = None
    context_tokens: float | None = None  # tokens of context per running request
    layers: int | None = None
    hidden_size: int | None = None
    batch: int = 1  # running requests
    link: Link = "unknown"
    custom_allreduce: bool | None = None
    cuda_graphs: bool = True
    spec: SpecConfig | None = None


@dataclass(frozen=True)
class Step:
    """One line of the working: what was computed, how, from what, and where the formula comes from."""

    what: str
    formula: str
    inputs: dict[str, str]
    result: str
    source: str

    def render(self) -> str:
        ins = ", ".join(f"{k}={v}" for k, v in self.inputs.items())
        return f"{self.what}: {self.formula} with {ins} = {self.result}  [{self.source}]"


@dataclass(frozen=True)
class StepTime:
    """One engine step (one decode or one verification) and what it is made of, in seconds."""

    memory: float
    compute: float | None
    comm: float
    launch: float | None  # eager launch overhead; None with CUDA graphs
    total: float
    bound: Literal["memory", "compute", "launch"]


@dataclass(frozen=True)
class Expected:
    """The upper bound on decode throughput, its working, and measured / expected where given."""

    per_request_tok_s: float
    aggregate_tok_s: float
    batch: int
    tokens_per_step: float
    step_seconds: float
    bound: Literal["memory", "compute", "launch"]
    working: tuple[Step, ...]
    unknown: tuple[str, ...] = ()
    measured_per_request_tok_s: float | None = None
    measured_aggregate_tok_s: float | None = None

    @property
    def ratio(self) -> float | None:
        """measured / expected: per request where measured, else aggregate."""
        if self.measured_per_request_tok_s is not None:
            return self.measured_per_request_tok_s / self.per_request_tok_s
        if self.measured_aggregate_tok_s is not None:
            return self.measured_aggregate_tok_s / self.aggregate_tok_s
        return None

    def render(self) -> str:
        lines = [f"{i}. {s.render()}" for i, s in enumerate(self.working, 1)]
        head = (
            f"expected at most {self.per_request_tok_s:.1f} tok/s per request, "
            f"{self.aggregate_tok_s:.1f} tok/s aggregate at batch {self.batch} ({self.bound}-bound)"
        )
        if self.ratio is not None:
            head += f"; measured / expected = {self.ratio:.2f}"
        tail = [f"unknown (left out, so the bound is optimistic): {u}" for u in self.unknown]
        return "\n".join([head, *lines, *tail])


class ModelError(ValueError):
    """The deployment lacks what the bound needs (no weight size at all)."""


def _fmt_bytes(n: float) -> str:
    return f"{n / 1e9:.2f} GB"


def _ms(t: float) -> str:
    return f"{t * 1e3:.3f} ms"


@dataclass
class _Work:
    steps: list[Step] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    prefix: str = ""  # "as deployed: " / "fixed: " when one working holds two cases

    def add(self, what: str, formula: str, inputs: dict[str, str], result: str, source: str) -> None:
        self.steps.append(Step(self.prefix + what, formula, inputs, result, source))

    def miss(self, text: str) -> None:
        if text not in self.unknown:
            self.unknown.append(text)


def weights_per_gpu(dep: Deployment, work: _Work | None = None) -> float:
    """Weight bytes one step reads on each GPU (MoE: the active share only, the least a step can read)."""
    held = _weights_held(dep, work)
    if dep.unread_bytes_per_gpu:
        loaded = held
        held -= dep.unread_bytes_per_gpu
        if work is not None:
            work.add(
                "weights a decode step reads per GPU",
                "W_read = W_gpu - W_unread (loaded but not read by a target step: an untied input embedding, "
                "gathered B rows of vocab x h; a drafter's own weights)",
                {"W_gpu": _fmt_bytes(loaded), "W_unread": _fmt_bytes(dep.unread_bytes_per_gpu)},
                _fmt_bytes(held),
                _SRC_ROOFLINE,
            )
    if dep.active_fraction >= 1.0:
        return held
    read = held * dep.active_fraction
    if work is not None:
        work.add(
            "MoE weights read per step per GPU",
            "W_read = W_gpu * active / total",
            {"W_gpu": _fmt_bytes(held), "active/total": f"{dep.active_fraction:.3f}"},
            _fmt_bytes(read),
            "../shared/research-users-tools-roofline.md §3.1 item 3 (at B=1 a token reads its top-k experts; "
            "more at larger batch, so this is the least)",
        )
    return read


def _weights_held(dep: Deployment, work: _Work | None) -> float:
    if dep.weights_bytes_per_gpu is not None:
        w = dep.weights_bytes_per_gpu
        if work is not None:
            # counted from the model's parameters, W is what a step reads; else it is the loaded figure
            what, formula, name, source = (
                (
                    "weights a decode step reads per GPU",
                    "W_read (the layers and the LM head: not the input embedding, a vision tower or MTP layers)",
                    "W_read",
                    dep.weights_read_from,
                )
                if dep.weights_read_from
                else (
                    "weights loaded per GPU",
                    "W_gpu (given)",
                    "W_gpu",
                    "the deployment (e.g. vLLM `Model loading took X GiB`, per worker)",
                )
            )
            work.add(what, formula, {name: _fmt_bytes(w)}, _fmt_bytes(w), source)
        return w
    if dep.params is None:
        raise ModelError("the weights per GPU are unknown (no `Model loading took X GiB` line, no parameter count)")
    w = dep.params * dep.dtype_bytes / (dep.tp * dep.pp)
    if work is not None:
        work.add(
            "weights held per GPU",
            "W_gpu = N * b / (TP * PP)",
            {"N": f"{dep.params / 1e9:.2f}e9", "b": f"{dep.dtype_bytes:g}", "TP": str(dep.tp), "PP": str(dep.pp)},
            _fmt_bytes(w),
            _SRC_ROOFLINE,
        )
    return w


def _interp_host_us(table: HardwareTable, n: int) -> float:
    """All-reduce latency through host memory at n ranks: affine through the 2- and 8-rank measurements."""
    a2 = table.constant("allreduce_host_2gpu_us").value
    a8 = table.constant("allreduce_host_8gpu_us").value
    return a2 + (a8 - a2) * (n - 2) / 6


def allreduce_latency_us(
    dep: Deployment, table: HardwareTable, *, link: Link | None = None, custom: bool | None = None
) -> tuple[float, str]:
    """α for one small all-reduce: (microseconds, the source line)."""
    link = dep.link if link is None else link
    custom = dep.custom_allreduce if custom is None else custom
    n = dep.tp
    c = table.constant
    if link == "nvlink":
        name = "allreduce_nvlink_custom_us" if custom is not False else "allreduce_nvlink_nccl_us"
        return c(name).value, c(name).source
    if link == "pcie":
        if custom is not False:
            return c("allreduce_pcie_custom_us").value, c("allreduce_pcie_custom_us").source
        ref = c("allreduce_pcie_nccl_4gpu_us").value
        slope = (c("allreduce_host_8gpu_us").value - c("allreduce_host_2gpu_us").value) / 6
        return max(ref + slope * (n - 4), 0.5 * ref), (
            f"{c('allreduce_pcie_nccl_4gpu_us').source}; scaled to {n} ranks with the slope of the host-memory "
            f"measurements ({slope:.2f} us a rank, derived)"
        )
    if link == "p2p-off":
        return _interp_host_us(table, n), (
            f"{c('allreduce_host_2gpu_us').source}; {c('allreduce_host_8gpu_us').source}; affine in ranks (derived)"
        )
    # unknown link: the fastest the hardware could have, so the bound stays an upper bound
    if dep.gpu.nvlink is not None:
        return allreduce_latency_us(dep, table, link="nvlink", custom=custom if custom is not None else True)
    return allreduce_latency_us(dep, table, link="pcie", custom=custom if custom is not None else True)


def _link_gb_s(dep: Deployment, table: HardwareTable, link: Link) -> float | None:
    if link == "nvlink" and dep.gpu.nvlink is not None:
        return dep.gpu.nvlink.bandwidth_gb_s / 2  # vendor figures are bidirectional totals
    return table.pcie_gb_s(dep.gpu.pcie)


def step_time(dep: Deployment, table: HardwareTable, tokens_per_seq: int = 1, work: _Work | None = None) -> StepTime:
    """One engine step processing `tokens_per_seq` tokens for each of `dep.batch` sequences."""
    w_gpu = weights_per_gpu(dep, work)
    f = table.constant("bandwidth_fraction")
    bw = dep.gpu.memory_bandwidth_gb_s * 1e9 * f.value
    b = dep.batch
    kv_read = 0.0
    if dep.kv_bytes_per_token_per_gpu is not None and dep.context_tokens is not None:
        kv_read = b * dep.context_tokens * dep.kv_bytes_per_token_per_gpu
        if work is not None:
            work.add(
                "KV cache read per step per GPU",
                "B * S * KV_gpu",
                {
                    "B": str(b),
                    "S": f"{dep.context_tokens:.0f}",
                    "KV_gpu": f"{dep.kv_bytes_per_token_per_gpu / 1e3:.1f} kB",
                },
                _fmt_bytes(kv_read),
                _SRC_ROOFLINE,
            )
    elif work is not None:
        work.miss("KV cache read (KV bytes per token or context length): the step reads only the weights")
    t_mem = (w_gpu + kv_read) / bw
    if work is not None:
        work.add(
            "memory time per step",
            "t_mem = (W_read + KV read) / (BW * f)",
            {
                "BW": f"{dep.gpu.memory_bandwidth_gb_s:g} GB/s ({dep.gpu.name}, {dep.gpu.source})",
                "f": f"{f.value:g}",
            },
            _ms(t_mem),
            f"{_SRC_ROOFLINE}; f: {f.source}",
        )
    peak = dep.gpu.tensor_tflops(dep.dtype_bytes)
    t_comp: float | None = None
    if peak is not None:
        n_gpu = w_gpu / dep.dtype_bytes
        flops = 2 * n_gpu * b * tokens_per_seq
        cf = table.constant("compute_fraction").value
        t_comp = flops / (peak * 1e12 * cf)
        if work is not None:
            work.add(
                "compute time per step",
                "t_comp = 2 * N_gpu * B * T / peak",
                {
                    "N_gpu": f"{n_gpu / 1e9:.2f}e9",
                    "B": str(b),
                    "T": str(tokens_per_seq),
                    "peak": f"{peak:g} TFLOP/s dense",
                },
                _ms(t_comp),
                f"{_SRC_ROOFLINE}; peak: {dep.gpu.source}",
            )
    elif work is not None:
        work.miss(f"tensor peak of {dep.gpu.name} (none published for this dtype): compute bound not checked")
    t_host = 0.0
    if dep.host_bytes_per_gpu:
        pcie = table.pcie_gb_s(dep.gpu.pcie)
        if pcie is not None:
            t_host = dep.host_bytes_per_gpu / (pcie * 1e9)
            if work is not None:
                work.add(
                    "offloaded weights over PCIe per step",
                    "t_host = offloaded bytes per GPU / BW_PCIe (read from host memory in every forward pass)",
                    {
                        "offloaded": _fmt_bytes(dep.host_bytes_per_gpu),
                        "BW_PCIe": f"{pcie:g} GB/s (PCIe {dep.gpu.pcie.generation} x{dep.gpu.pcie.lanes})",
                    },
                    _ms(t_host),
                    _SRC_OFFLOAD,
                )
        elif work is not None:
            work.miss("PCIe bandwidth of the GPU: the offloaded weights' transfer left out")
    t_gpu = max(t_mem, t_comp or 0.0) + t_host
    bound: Literal["memory", "compute", "launch"] = "compute" if t_comp is not None and t_comp > t_mem else "memory"

    t_comm = 0.0
    if dep.tp > 1:
        if dep.gpu.vendor != "nvidia":
            if work is not None:
                work.miss(f"all-reduce latency on {dep.gpu.vendor} GPUs (no measured figure in the table)")
        elif dep.layers is None:
            if work is not None:
                work.miss("layers (num_hidden_layers in the model's config.json): TP all-reduce time left out")
        else:
            alpha_us, alpha_src = allreduce_latency_us(dep, table)
            per = alpha_us * 1e-6
            link_bw = _link_gb_s(dep, table, dep.link)
            bw_term = 0.0
            if dep.hidden_size is not None and link_bw is not None:
                msg = b * tokens_per_seq * dep.hidden_size * 2
                bw_term = 2 * (dep.tp - 1) / dep.tp * msg / (link_bw * 1e9)
            elif work is not None:
                work.miss("hidden size: the all-reduce's bandwidth term left out (latency only)")
            t_comm = 2 * dep.layers * (per + bw_term)
            if work is not None:
                link = dep.link if dep.link != "unknown" else ("nvlink" if dep.gpu.nvlink else "pcie")
                impl = "custom" if dep.custom_allreduce is not False else "NCCL"
                if dep.link == "unknown":
                    work.miss("link between the GPUs (`nvidia-smi topo -m`): the fastest the GPU supports is assumed")
                work.add(
                    "TP all-reduce time per step",
                    "t_comm = 2 * L * (alpha + 2(n-1)/n * B*T*h*2 / BW_link)",
                    {
                        "L": str(dep.layers),
                        "alpha": f"{alpha_us:.1f} us ({link}, {impl})",
                        "n": str(dep.tp),
                        "h": str(dep.hidden_size) if dep.hidden_size else "unknown",
                    },
                    _ms(t_comm),
                    f"{_SRC_MEGATRON}; {_SRC_BUSBW}; alpha: {alpha_src}",
                )
    launch: float | None = None
    total = t_gpu + t_comm
    if not dep.cuda_graphs:
        if dep.layers is None:
            if work is not None:
                work.miss("layers: the eager launch overhead left out")
        else:
            per_layer = table.constant("eager_overhead_per_layer_us")
            launch = dep.layers * per_layer.value * 1e-6
            # Eager, the CPU launches each kernel while the GPU runs the ones before it: a step takes the longer of
            # the two, not their sum. The microbenchmark's 112 us a layer is the least its launches took (its
            # eager - graph difference; read as launch-bound, 272 us), so the max stays an upper bound on a host
            # whose CPU launches faster (vllm-r004: 48 layers at 6.6 ms a step, under the sum's 9.3 ms).
            if launch > total:
                total = launch
                bound = "launch"
            if work is not None:
                work.add(
                    "eager launch time (no CUDA graphs)",
                    "t_step = max(t_gpu + t_comm, L * launch_per_layer) (the CPU launches while the GPU runs; "
                    "the GPU time grows with batch, the launch time does not)",
                    {"L": str(dep.layers), "launch_per_layer": f"{per_layer.value:g} us"},
                    _ms(launch),
                    per_layer.source,
                )
    total *= dep.pp
    if dep.pp > 1 and work is not None:
        work.add(
            "pipeline stages",
            "t_step * PP (a token passes every stage in turn)",
            {"PP": str(dep.pp)},
            _ms(total),
            "pipeline parallelism",
        )
    return StepTime(memory=t_mem, compute=t_comp, comm=t_comm, launch=launch, total=total, bound=bound)


def tokens_per_step(positions: Sequence[float], k: int) -> float:
    """τ(k) = 1 + Σ_{i<k} r_i: the bonus token plus the expected accepted prefix of k drafts."""
    return speculation.tokens_per_step(positions, k)


def iid_positions(mean_acceptance_length: float, k: int) -> tuple[float, ...]:
    """Per-position rates r_i = α^(i+1) whose τ(k) equals the measured mean acceptance length (α by bisection)."""
    return speculation.iid_positions(mean_acceptance_length, k)


def spec_positions(spec: SpecConfig) -> tuple[tuple[float, ...] | None, str]:
    if spec.position_acceptance:
        return tuple(spec.position_acceptance), "measured per-position acceptance"
    if spec.mean_acceptance_length is not None:
        return iid_positions(spec.mean_acceptance_length, spec.k), (
            "per-position rates alpha^(i+1) fitted to the mean acceptance length (i.i.d. assumption)"
        )
    return None, "no acceptance measured"


def draft_cost(dep: Deployment) -> DrafterCost:
    """The drafter's cost per pass in target steps: given (`draft_cost_ratio`), else from the deployment's sizes
    (`speculation.drafter_cost`: its layers and the LM head over what one target step reads), else the method's
    assumed default."""
    spec = dep.spec
    assert spec is not None
    if spec.draft_cost_ratio is not None:
        return DrafterCost(spec.draft_cost_ratio, False, "c (given)", {}, "the deployment")
    try:
        target = weights_per_gpu(dep)
    except ModelError:
        target = None
    return speculation.drafter_cost(
        spec.method,
        target_read_bytes=target,
        target_layers=dep.layers,
        lm_head_bytes=dep.lm_head_bytes_per_gpu,
        drafter_layers=spec.drafter_layers,
        drafter_bytes=spec.drafter_bytes_per_gpu,
        # the adapter takes a drafter that the loaded figure counted out of the weights a target step reads
        drafter_in_load=False,
    )


def spec_step(
    dep: Deployment, table: HardwareTable, k: int, positions: Sequence[float], work: _Work | None = None
) -> tuple[float, float]:
    """(tokens per step, seconds per step) with k drafted tokens; k=0 is plain decode."""
    if k == 0 or dep.spec is None:
        return 1.0, step_time(replace(dep, spec=None), table, 1, work).total
    spec = dep.spec
    tau = tokens_per_step(positions, k)
    verify = step_time(dep, table, k + 1, work).total
    plain = step_time(dep, table, 1).total
    cost = draft_cost(dep)
    drafter = spec.drafter
    n = speculation.passes(drafter, k)
    if drafter == "sequential":
        draft = n * cost.ratio * plain
        formula = "t_draft = k * c * t_step(T=1)"
        base = {"t_step(T=1)": _ms(plain)}
    elif drafter == "block":
        # one pass over the block's k+1 positions: as dear as verifying them, scaled by the drafter's size
        draft = n * cost.ratio * verify
        formula = "t_draft = c_block * t_step(T=k+1)"
        base = {"t_step(T=k+1)": _ms(verify)}
    else:
        draft = 0.0
        formula = "t_draft = 0 (lookup drafter)"
        base = {}
    if work is not None:
        work.add(
            "speculative tokens per step",
            "tau(k) = 1 + sum_{i<k} r_i",
            {"k": str(k), "r": "[" + ", ".join(f"{r:.3f}" for r in positions[:k]) + "]"},
            f"{tau:.3f}",
            _SRC_SPEC,
        )
        if drafter != "lookup":
            work.add(
                f"drafter cost per pass ({spec.method}, {drafter})",
                cost.formula,
                cost.inputs,
                f"{cost.ratio:.3f}{' (assumed)' if cost.assumed else ''}",
                cost.source,
            )
        work.add(
            "drafting time per step",
            formula,
            {"c": f"{cost.ratio:.3f}", **base},
            _ms(draft),
            "../shared/research-users-tools-roofline.md §3.1 item 5",
        )
        if cost.assumed:
            work.miss(
                f"the {spec.method} drafter's size (its config.json num_hidden_layers, or the target's layers): "
                f"drafter cost per pass assumed {cost.ratio:.3f}"
            )
    return tau, verify + draft


def expected(
    dep: Deployment,
    table: HardwareTable,
    *,
    measured_per_request: float | None = None,
    measured_aggregate: float | None = None,
) -> Expected:
    """The upper bound on decode tok/s per request and in aggregate at `dep.batch`, with its working."""
    work = _Work()
    if dep.spec is not None and dep.spec.k > 0:
        positions, how = spec_positions(dep.spec)
        if positions is None:
            work.miss("speculative acceptance: the bound assumes every draft is accepted")
            positions = tuple(1.0 for _ in range(dep.spec.k))
            how = "all drafts accepted (no acceptance measured)"
        tau, t = spec_step(dep, table, dep.spec.k, positions, work)
        work.add("acceptance used", "r_i", {"from": how}, f"tau={tau:.3f}", _SRC_SPEC)
        # the engine's per-step cost of a drafted token beyond its bytes (sampling, draft bookkeeping): the one
        # speculative step cost the effects, the best k and the break-even use too, so as deployed and every
        # alternative (no speculation, another k, another method) stand on one basis
        overhead = dep.spec.overhead_s_per_token * dep.spec.k
        work.add(
            "per-step overhead of the drafted tokens",
            "o * k (o: the engine's measured overhead a drafted token, logdoctor.facts.speculation)",
            {"o": _ms(dep.spec.overhead_s_per_token), "k": str(dep.spec.k)},
            _ms(overhead),
            "vLLM / SGLang speculative step timings (logdoctor/facts/speculation.py OVERHEAD_SECONDS_PER_DRAFTED_TOKEN)",
        )
        t += overhead
    else:
        tau, t = spec_step(dep, table, 0, (), work)
    bound = step_time(dep, table, int(dep.spec.k + 1) if dep.spec else 1).bound
    per_request = tau / t
    aggregate = per_request * dep.batch
    work.add(
        "decode throughput",
        "per request = tau / t_step; aggregate = B * per request",
        {"tau": f"{tau:.3f}", "t_step": _ms(t), "B": str(dep.batch)},
        f"{per_request:.1f} tok/s per request, {aggregate:.1f} tok/s aggregate",
        _SRC_ROOFLINE,
    )
    return Expected(
        per_request_tok_s=per_request,
        aggregate_tok_s=aggregate,
        batch=dep.batch,
        tokens_per_step=tau,
        step_seconds=t,
        bound=bound,
        working=tuple(work.steps),
        unknown=tuple(work.unknown),
        measured_per_request_tok_s=measured_per_request,
        measured_aggregate_tok_s=measured_aggregate,
    )
