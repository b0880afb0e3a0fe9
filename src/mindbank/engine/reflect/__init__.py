"""Reflect: answer a question from a bank through the memory hierarchy (mental models → observations → facts).

``tools`` (what may be read, with visibility rules), ``agent`` (the LLM tool loop, answer and document modes),
``extractive`` (the offline answer: ranked, cited quotations), ``run`` (the HTTP response shape).
"""

from mindbank.engine.reflect.agent import AgentOutcome, run_agent
from mindbank.engine.reflect.extractive import extractive_reflect
from mindbank.engine.reflect.run import ReflectNoAnswer, ReflectOptions, reflect
from mindbank.engine.reflect.tools import ReflectScope, ReflectTools

__all__ = [
    "AgentOutcome",
    "ReflectNoAnswer",
    "ReflectOptions",
    "ReflectScope",
    "ReflectTools",
    "extractive_reflect",
    "reflect",
    "run_agent",
]
