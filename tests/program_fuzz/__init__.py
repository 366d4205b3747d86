"""A differential program fuzzer for nx_rune's transformations (issue 26).

Random programs (generator.py, over the op table in ops.py) run eagerly and under jit, grad,
vjp, jvp, vmap and their compositions (runner.py), compared bit for bit, within a tolerance or
against float64 finite differences (compare.py); campaign.py runs many, groups the failures into
classes and shrinks each to a small reproducer.  Command line: ``python -m tests.program_fuzz``.
"""
from .campaign import Campaign, Options, env_skip, parse_skip, report  # noqa: F401
from .generator import generate  # noqa: F401
from .runner import MODES, run_program  # noqa: F401
from .source import HypothesisSource, RandomSource, ReplaySource  # noqa: F401
