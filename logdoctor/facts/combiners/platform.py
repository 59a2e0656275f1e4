"""The platform, the model, and its quantization: method, kernel, fallbacks to slower kernels.

`Automatically detected platform cuda.`              -> platform = cuda
`Using default MoE config. Performance might be ...`  -> quant.default_kernel_config = True, model.moe = True
"""

from __future__ import annotations

from logdoctor.events import EventBase, ModelInfo, PerfWarning, Platform, Quantization, WarningTopic
from logdoctor.facts.combiner import Combiner

_DEFAULT_KERNEL_CONFIG: tuple[WarningTopic, ...] = ("moe-config", "fp8-block-config", "int8-block-config")


class PlatformModel(Combiner):
    reads = (Platform, ModelInfo, Quantization, PerfWarning)
    produces = (
        "platform",
        "model",
        "model.dtype",
        "model.max_len",
        "model.architecture",
        "spec.draft_architecture",
        "hybrid.is_hybrid",
        "quant.method",
        "quant.kernel",
        "quant.fallback",
        "quant.fallback_reason",
        "quant.default_kernel_config",
        "model.moe",
    )

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, Platform):
            if ev.platform:
                b.set("platform", ev.platform.lower(), ev, "platform line")
        elif isinstance(ev, ModelInfo):
            if ev.model:
                b.set("model", ev.model, ev, "model line", keep_first=True)
            if ev.dtype:
                b.set("model.dtype", ev.dtype.removeprefix("torch."), ev, "model line")
            if ev.max_model_len:
                b.set("model.max_len", float(ev.max_model_len), ev, "model line")
            if ev.is_hybrid:
                b.set("hybrid.is_hybrid", True, ev, "model line")
            if ev.architecture:
                # the first `Resolved architecture` is the target's; a later, different one the drafter's (vLLM
                # resolves the draft model's config after the target's: DFlashLagunaForCausalLM, Qwen3_5MTP)
                first = b.value("model.architecture")
                if first is None:
                    b.set("model.architecture", ev.architecture, ev, "Resolved architecture")
                elif ev.architecture != first:
                    b.set("spec.draft_architecture", ev.architecture, ev, "a second Resolved architecture")
        elif isinstance(ev, Quantization):
            if "MoE" in ev.message or (ev.kernel or "").endswith("Experts"):
                # the engine chose kernels for routed experts (vLLM `Using 'MARLIN' WNA16 MoE backend`): a MoE
                b.set("model.moe", True, ev, ev.message)
            if ev.method:
                b.set("quant.method", ev.method.lower(), ev, ev.message, keep_first=True)
            if ev.kernel:
                b.set("quant.kernel", ev.kernel, ev, ev.message)
            if ev.fallback:
                b.set("quant.fallback", True, ev, ev.message)
                b.set("quant.fallback_reason", ev.message, ev, ev.message)
        elif isinstance(ev, PerfWarning) and ev.topic in _DEFAULT_KERNEL_CONFIG:
            b.set("quant.default_kernel_config", True, ev, ev.message)
            if ev.topic == "moe-config":
                b.set("model.moe", True, ev, ev.message)
