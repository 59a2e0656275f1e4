"""Serving engines and collective libraries, one package each (vllm, sglang, nccl); see logdoctor.registry."""
