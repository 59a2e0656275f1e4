"""logdoctor: ranked diagnosis of slow vLLM and SGLang deployments from their logs."""

__version__ = "0.1.0"
