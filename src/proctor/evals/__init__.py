"""Evaluation on public benchmarks (SPEC EVAL-1, EVAL-2): the benchmark's own metric, with counts."""

from proctor.evals.agentdojo import AgentDojoReport, evaluate_agentdojo
from proctor.evals.r_judge import RJudgeReport, evaluate_r_judge

__all__ = ["AgentDojoReport", "RJudgeReport", "evaluate_agentdojo", "evaluate_r_judge"]
