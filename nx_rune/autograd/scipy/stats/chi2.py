"""``nx_rune.autograd.scipy.stats.chi2``:
``nx_rune.scipy.stats.chi2`` (SciPy's argument names, float64
defaults, differentiable in every continuous argument)."""
from nx_rune.autograd.scipy.stats._dist import populate as _populate
from nx_rune.scipy.stats import chi2 as _dist

__all__ = _populate(globals(), _dist)
