"""Builds a distribution module of ``nx_rune.autograd.scipy.stats`` from nx_rune's."""
import scipy.stats as _st

from nx_rune.autograd._wrap import in_x64, numpy_fallback

_METHODS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "pmf", "logpmf", "entropy")


def populate(namespace, nx_dist):
    """``namespace`` gets ``nx_dist``'s density and distribution functions, in x64 mode."""
    names = []
    for name in _METHODS:
        f = getattr(nx_dist, name, None)
        if f is not None:
            namespace[name] = in_x64(f, name)
            names.append(name)
    # random draws: SciPy's (constants to differentiation)
    sp = getattr(_st, nx_dist.__name__.rsplit(".", 1)[-1].replace("_mvn", "multivariate_normal"),
                 None)
    if sp is not None and hasattr(sp, "rvs"):
        namespace["rvs"] = numpy_fallback(sp.rvs, f"{nx_dist.__name__}.rvs")
        names.append("rvs")
    return names
