"""``nx_rune.autograd.scipy.stats.multivariate_normal``: ``logpdf``, ``pdf`` and ``entropy`` of
the multivariate normal (SciPy's ``(x, mean, cov, allow_singular=False)``), differentiable in
``x``, ``mean`` and ``cov``."""
from nx_rune.autograd import numpy as _np
from nx_rune.autograd._wrap import in_x64
from nx_rune.scipy.stats import multivariate_normal as _mvn

__all__ = ["logpdf", "pdf", "entropy"]


def _check_singular(allow_singular):
    if allow_singular:
        raise NotImplementedError("multivariate_normal with allow_singular=True: the density is "
                                  "not differentiable with respect to a singular covariance")


@in_x64
def logpdf(x, mean, cov, allow_singular=False):
    """The log-density at ``x`` (the last axis is the event)."""
    _check_singular(allow_singular)
    return _mvn.logpdf(x, mean, cov)


@in_x64
def pdf(x, mean, cov, allow_singular=False):
    """The density at ``x``."""
    _check_singular(allow_singular)
    return _mvn.pdf(x, mean, cov)


@in_x64
def entropy(mean, cov):
    """The differential entropy, ``(d (1 + log 2 pi) + log det cov) / 2``."""
    d = _np.shape(cov)[-1]
    return 0.5 * (d * (1.0 + _np.log(2 * _np.pi)) + _np.linalg.slogdet(cov)[1])
