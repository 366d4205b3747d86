"""Ufunc calls whose NumPy floating-point warnings are silenced, for the Tensor's eager fast path
(nx_rune/tensor.pyx).

NumPy reports overflow, invalid and divide-by-zero (inf - inf, 1 / 0: IEEE results, which
nx_rune returns silently, as JAX) as RuntimeWarnings attributed to the Python frame that called
the ufunc.  Code compiled by Cython has no frame of its own, so a ufunc called from the fast
path would warn at the user's line.  These one-line functions are that frame: the filter below
ignores RuntimeWarnings raised from this module only, as the backend's filter does for its own
calls.  Nothing is paid when nothing warns, where setting and resetting NumPy's errstate
ContextVar around each call costs about as much as the ufunc itself on small arrays.

A filter that the user puts in front of this one (``warnings.simplefilter("error")``, pytest's
``-W error`` or ``filterwarnings = error``) turns the warning into an exception, and
``np.errstate(all="raise")`` raises FloatingPointError: the call then runs again under
``np.errstate(all="ignore")``, so the result is the IEEE one in every case (the slow path pays
only when a value is non-finite and the user asked NumPy to raise).

Small operands of one dtype (each C-contiguous or a broadcast constant) do not come here: the
fast path calls NumPy's inner loop for them directly (nx_rune._kernels.ufdirect), which checks
no FP flags at all, so it neither warns nor raises, with the same values.
"""
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"nx_rune\._kernels\.quiet")

__all__ = ["call1", "call2", "rerun_quietly", "QUIET_ERRORS"]

# what NumPy raises for an IEEE special value when asked to (ComplexWarning, a RuntimeWarning
# too, is a dropped imaginary part: never silenced; a plain ufunc call does not cast)
QUIET_ERRORS = (RuntimeWarning, FloatingPointError)


def call1(ufunc, a):
    """``ufunc(a)`` (IEEE warnings silenced: see the module's docstring)."""
    try:
        return ufunc(a)
    except QUIET_ERRORS:
        return rerun_quietly(ufunc, a)


def call2(ufunc, a, b):
    """``ufunc(a, b)`` (IEEE warnings silenced: see the module's docstring)."""
    try:
        return ufunc(a, b)
    except QUIET_ERRORS:
        return rerun_quietly(ufunc, a, b)


def rerun_quietly(fn, *args):
    """In the handler of a QUIET_ERRORS exception that ``fn(*args)`` raised: ``fn(*args)`` again
    under ``np.errstate(all="ignore")``, its IEEE result (a ComplexWarning, a dropped imaginary
    part, is raised again instead).  ``fn`` must be safe to run twice."""
    if sys.exc_info()[0] is np.exceptions.ComplexWarning:
        raise
    with np.errstate(all="ignore"):
        return fn(*args)
