"""The drift checker: do the newest vLLM / SGLang releases still print lines logdoctor understands?

`make drift` (docs/drift.md) downloads engine wheels, extracts every logger call (extract.py), keeps the
performance-relevant ones listed in relevance.yaml (relevance.py), renders each as a log line in that
version's header format (render.py), parses it and classifies the result (classify.py), and writes the
committed cases `fixtures/drift/<engine>-<version>.yaml` and the coverage report (report.py).
"""
