"""``nx_rune.autograd.scipy``: autograd's ``autograd.scipy`` on nx_rune (``special``, ``stats``,
``linalg``, ``signal``, ``integrate``, ``misc``).

Functions nx_rune implements are its own (differentiable by tracing); the special functions and
distributions autograd defines by derivative rules over SciPy and nx_rune lacks are
``extend.primitive`` s over SciPy with those rules; the rest are SciPy's on concrete values.
"""
from nx_rune.autograd.scipy import integrate, linalg, misc, signal, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "misc", "signal", "special", "stats"]
