"""``nx_rune.autograd.scipy.stats``: the distributions of ``autograd.scipy.stats`` (``norm``,
``t``, ``gamma``, ``beta``, ``chi2``, ``poisson``, ``dirichlet``, ``multivariate_normal``) and
nx_rune's others (``bernoulli``, ``binom``, ``cauchy``, ``expon``, ``geom``, ``laplace``,
``logistic``, ``uniform``), each a submodule (``import nx_rune.autograd.scipy.stats.norm``)."""
from nx_rune.autograd.scipy.stats import (  # noqa: F401
                                          bernoulli,
                                          beta,
                                          binom,
                                          cauchy,
                                          chi2,
                                          dirichlet,
                                          expon,
                                          gamma,
                                          geom,
                                          laplace,
                                          logistic,
                                          multivariate_normal,
                                          norm,
                                          poisson,
                                          t,
                                          uniform,
)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma",
           "geom", "laplace", "logistic", "multivariate_normal", "norm", "poisson", "t",
           "uniform"]
