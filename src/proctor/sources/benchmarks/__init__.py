"""Public agent benchmarks as importable sources, so ``proctor eval`` can run on them."""

from proctor.sources.benchmarks.agentdojo import AgentDojoAdapter
from proctor.sources.benchmarks.agentrx import AgentRxAdapter
from proctor.sources.benchmarks.locomo import LocomoAdapter
from proctor.sources.benchmarks.r_judge import RJudgeAdapter
from proctor.sources.benchmarks.who_and_when import WhoAndWhenAdapter

__all__ = [
    "AgentDojoAdapter",
    "AgentRxAdapter",
    "LocomoAdapter",
    "RJudgeAdapter",
    "WhoAndWhenAdapter",
]
