"""The combiners, one a topic, in the order each event is offered to them (and they finish).

To add a fact: declare it in logdoctor/facts/declarations.py, then write it from the combiner of its
topic (add the name to that combiner's `produces`, and the event type to its `reads` if it is new);
tests/facts/test_combiners.py checks both.
"""

from __future__ import annotations

from logdoctor.facts.combiner import Combiner
from logdoctor.facts.combiners.attention import Attention
from logdoctor.facts.combiners.benchmarks import Benchmarks
from logdoctor.facts.combiners.communication import Communication
from logdoctor.facts.combiners.compilation import Compilation
from logdoctor.facts.combiners.config import Config
from logdoctor.facts.combiners.cuda_graphs import CudaGraphs
from logdoctor.facts.combiners.derived import Derived
from logdoctor.facts.combiners.disaggregation import Disaggregation
from logdoctor.facts.combiners.environment import Environment
from logdoctor.facts.combiners.failures import Failures
from logdoctor.facts.combiners.gpustate import GpuState
from logdoctor.facts.combiners.host import Host
from logdoctor.facts.combiners.hybrid import Hybrid
from logdoctor.facts.combiners.identity import Identity
from logdoctor.facts.combiners.memory import Memory
from logdoctor.facts.combiners.nccltests import NcclTests
from logdoctor.facts.combiners.platform import PlatformModel
from logdoctor.facts.combiners.scheduling import Scheduling
from logdoctor.facts.combiners.speculative import Speculation
from logdoctor.facts.combiners.stats import Stats
from logdoctor.facts.combiners.warnings import Warned

COMBINERS: tuple[type[Combiner], ...] = (
    Identity,
    Config,
    Speculation,
    Stats,
    CudaGraphs,
    Compilation,
    Communication,
    NcclTests,
    Attention,
    Memory,
    Hybrid,
    Scheduling,
    Failures,
    Disaggregation,
    PlatformModel,
    Host,
    GpuState,
    Environment,
    Benchmarks,
    Warned,
    Derived,  # last: it builds on the facts the others wrote
)
