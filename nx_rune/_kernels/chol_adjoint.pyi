"""The adjoint of the Cholesky factorization per matrix of a stack, in C with SciPy's BLAS
(typed Cython module)."""

import numpy as np

def available() -> bool: ...
def cholesky_adjoint(l: np.ndarray, lbar: np.ndarray,
                     threads: int | None = ...) -> np.ndarray: ...
