"""``nx.scipy.stats``: probability distributions with ``jax.scipy.stats``'s modules, functions and
argument names (``loc``, ``scale``, ``df``, ``a``, ``b``, ``alpha``, ``mu``, ``n``, ``p``),
SciPy's values, differentiable in every continuous argument.

Continuous: ``norm`` (logpdf pdf cdf logcdf sf logsf ppf), ``gamma``, ``beta`` (logpdf pdf cdf
logcdf sf logsf), ``t``, ``chi2``, ``truncnorm`` (logpdf pdf cdf logcdf sf logsf), ``pareto``,
``gumbel_r``, ``gumbel_l`` (those and ppf), ``gennorm`` (logpdf pdf cdf), ``vonmises``,
``wrapcauchy`` (logpdf pdf), ``dirichlet`` (logpdf pdf rvs), ``expon``, ``laplace``, ``cauchy``,
``logistic``, ``uniform`` (logpdf pdf cdf), ``multivariate_normal`` (logpdf pdf entropy rvs).
Discrete: ``bernoulli``, ``poisson``, ``binom``, ``geom``, ``nbinom``, ``betabinom``,
``multinomial`` (logpmf pmf).  Besides them: the estimator ``gaussian_kde``, the
standard error ``sem``, ``rankdata`` and ``mode``.
Conventions (see ``_common``): nan for a parameter outside its domain, -inf log-density outside
the support.
"""
from nx_rune.scipy import _mvn as multivariate_normal
from nx_rune.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from nx_rune.scipy.stats._kde import gaussian_kde
from nx_rune.scipy.stats._summary import ModeResult, mode, rankdata, sem

__all__ = ["norm", "t", "gamma", "beta", "dirichlet", "expon", "laplace", "cauchy", "logistic",
           "uniform", "bernoulli", "poisson", "binom", "geom", "multivariate_normal"]
__all__ += ["chi2", "truncnorm", "pareto", "gumbel_r", "gumbel_l", "gennorm", "vonmises",
            "wrapcauchy", "nbinom", "betabinom", "multinomial", "gaussian_kde", "sem",
            "rankdata", "mode", "ModeResult"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
