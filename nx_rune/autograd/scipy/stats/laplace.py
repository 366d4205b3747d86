"""``nx_rune.autograd.scipy.stats.laplace``:
``nx_rune.scipy.stats.laplace`` (SciPy's argument names, float64
defaults, differentiable in every continuous argument)."""
from nx_rune.autograd.scipy.stats._dist import populate as _populate
from nx_rune.scipy.stats import laplace as _dist

__all__ = _populate(globals(), _dist)
