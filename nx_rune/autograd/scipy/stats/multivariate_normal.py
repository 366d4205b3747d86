"""``nx_rune.autograd.scipy.stats.multivariate_normal``: ``logpdf``, ``pdf`` and ``entropy`` of
the multivariate normal (SciPy's ``(x, mean, cov, allow_singular=False)``), differentiable in
``x``, ``mean`` and ``cov``."""
from nx_rune.autograd import numpy as _np
from nx_rune.autograd._wrap import in_x64
from nx_rune.scipy.stats import multivariate_normal as _mvn

__all__ = ["logpdf", "pdf", "entropy"]


@in_x64
def logpdf(x, mean, cov, allow_singular=False):
    """The log-density at ``x`` (the last axis is the event); ``allow_singular``: a positive
    semi-definite ``cov`` (SciPy's density on its support)."""
    return _mvn.logpdf(x, mean, cov, allow_singular=allow_singular)


@in_x64
def pdf(x, mean, cov, allow_singular=False):
    """The density at ``x``."""
    return _mvn.pdf(x, mean, cov, allow_singular=allow_singular)


@in_x64
def entropy(mean, cov):
    """The differential entropy, ``(d (1 + log 2 pi) + log det cov) / 2``."""
    d = _np.shape(cov)[-1]
    return 0.5 * (d * (1.0 + _np.log(2 * _np.pi)) + _np.linalg.slogdet(cov)[1])
