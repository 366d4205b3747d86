"""Ufunc calls whose NumPy floating-point warnings are silenced, for the Tensor's eager fast path
(nx_rune/tensor.pyx).

NumPy reports overflow, invalid and divide-by-zero (inf - inf, 1 / 0: IEEE results, which
nx_rune returns silently, as JAX) as RuntimeWarnings attributed to the Python frame that called
the ufunc.  Code compiled by Cython has no frame of its own, so a ufunc called from the fast
path would warn at the user's line.  These one-line functions are that frame: the filter below
ignores RuntimeWarnings raised from this module only, as the backend's filter does for its own
calls.  Nothing is paid when nothing warns, where setting and resetting NumPy's errstate
ContextVar around each call costs about as much as the ufunc itself on small arrays.
"""
import warnings

warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"nx_rune\._kernels\.quiet")

__all__ = ["call1", "call2"]


def call1(ufunc, a):
    """``ufunc(a)`` (IEEE warnings silenced: see the module's docstring)."""
    return ufunc(a)


def call2(ufunc, a, b):
    """``ufunc(a, b)`` (IEEE warnings silenced: see the module's docstring)."""
    return ufunc(a, b)
