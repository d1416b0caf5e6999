"""Evaluation on public benchmarks (SPEC EVAL-1, EVAL-2): the benchmark's own metric, with counts.

Rules-only evaluations run in process; model-based ones take a ``ModelCaller`` (any saved
connection behind the pool) and record the model, prompt versions, tokens and wall time.
"""

from proctor.evals._common import RunInfo
from proctor.evals._locomo_answers import LocomoAnswers, answer_locomo
from proctor.evals.agentdojo import AgentDojoReport, evaluate_agentdojo
from proctor.evals.agentrx import AgentRxReport, evaluate_agentrx
from proctor.evals.locomo import LocomoReport, evaluate_locomo
from proctor.evals.r_judge import RJudgeReport, evaluate_r_judge, evaluate_r_judge_with_model
from proctor.evals.who_and_when import WhoAndWhenReport, evaluate_who_and_when

__all__ = [
    "AgentDojoReport",
    "AgentRxReport",
    "LocomoAnswers",
    "LocomoReport",
    "RJudgeReport",
    "RunInfo",
    "WhoAndWhenReport",
    "answer_locomo",
    "evaluate_agentdojo",
    "evaluate_agentrx",
    "evaluate_locomo",
    "evaluate_r_judge",
    "evaluate_r_judge_with_model",
    "evaluate_who_and_when",
]
