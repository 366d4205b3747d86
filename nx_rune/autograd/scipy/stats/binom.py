"""``nx_rune.autograd.scipy.stats.binom``:
``nx_rune.scipy.stats.binom`` (SciPy's argument names, float64
defaults, differentiable in every continuous argument)."""
from nx_rune.autograd.scipy.stats._dist import populate as _populate
from nx_rune.scipy.stats import binom as _dist

__all__ = _populate(globals(), _dist)
