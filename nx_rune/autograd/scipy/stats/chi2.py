"""``nx_rune.autograd.scipy.stats.chi2``: ``pdf``, ``logpdf``, ``cdf`` of the chi-squared
distribution (``(x, df)``), differentiable in ``x`` (primitives over SciPy with autograd's
rules)."""
import scipy.stats as _st

from nx_rune.autograd import numpy as _np
from nx_rune.autograd.extend import defvjp as _defvjp
from nx_rune.autograd.scipy._util import scipy_primitive as _prim
from nx_rune.autograd.scipy._util import unbroadcast_f as _unb
from nx_rune.autograd.scipy.special import gamma as _gamma

__all__ = ["pdf", "logpdf", "cdf"]

cdf = _prim(_st.chi2.cdf)
logpdf = _prim(_st.chi2.logpdf)
pdf = _prim(_st.chi2.pdf)


def _dlogpdf(x, df):
    # d/dx log p = (df/2 - 1)/x - 1/2 = (df - x - 2) / (2x) (autograd's rule, for integer df)
    return _np.where(df % 1 == 0, (df - x - 2) / (2 * x), 0)


_defvjp(cdf, lambda ans, x, df: _unb(x, lambda g: g * _np.power(2.0, -df / 2) * _np.exp(-x / 2)
                                     * _np.power(x, df / 2 - 1) / _gamma(df / 2)), argnums=[0])
_defvjp(logpdf, lambda ans, x, df: _unb(x, lambda g: g * _dlogpdf(x, df)), argnums=[0])
_defvjp(pdf, lambda ans, x, df: _unb(x, lambda g: g * ans * _dlogpdf(x, df)), argnums=[0])
