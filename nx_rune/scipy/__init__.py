"""``nx.scipy``: SciPy-style namespaces built on nx_rune, differentiable like the rest:
``nx.scipy.linalg`` (triangular solves, Cholesky factors, expm), ``nx.scipy.special`` (special
functions), ``nx.scipy.stats`` (distributions), ``nx.scipy.signal`` (convolutions,
correlations, spectral estimates) and ``nx.scipy.integrate`` (odeint, the trapezoidal rule);
and, as ``jax.scipy``'s, ``nx.scipy.optimize`` (minimize), ``nx.scipy.sparse.linalg`` (cg,
gmres, bicgstab), ``nx.scipy.ndimage`` (map_coordinates), ``nx.scipy.fft`` (dct, idct),
``nx.scipy.interpolate`` (RegularGridInterpolator), ``nx.scipy.cluster.vq`` (vq) and
``nx.scipy.spatial.transform`` (Rotation, Slerp).

SciPy is a dependency: its LAPACK wrappers and ``scipy.special`` loops do the work (imported on
first use, not when nx_rune is imported).
"""
from nx_rune.scipy import integrate, linalg, signal, special, stats

__all__ = ["integrate", "linalg", "signal", "special", "stats"]

# the rest of jax.scipy's subpackages
from nx_rune.scipy import (  # noqa: E402
    cluster,
    fft,
    interpolate,
    ndimage,
    optimize,
    sparse,
    spatial,
)

__all__ += ["cluster", "fft", "interpolate", "ndimage", "optimize", "sparse", "spatial"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
