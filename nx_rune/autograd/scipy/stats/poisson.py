"""``nx_rune.autograd.scipy.stats.poisson``:
``nx_rune.scipy.stats.poisson`` (SciPy's argument names, float64
defaults, differentiable in every continuous argument)."""
from nx_rune.autograd.scipy.stats._dist import populate as _populate
from nx_rune.scipy.stats import poisson as _dist

__all__ = _populate(globals(), _dist)
