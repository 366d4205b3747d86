"""``nx.linalg``: the Array API's linear algebra extension plus NumPy's ``norm`` and ``lstsq``.

Every function is differentiable (see ``nx_rune.frontend.linalg`` for the conventions: batches
over leading axes, NumPy's ``LinAlgError`` for singular or non-positive-definite matrices,
derivatives of real inputs).  ``matmul``, ``matrix_transpose``, ``tensordot`` and ``vecdot``
are the top-level functions; ``cross``, ``outer``, ``trace`` and ``diagonal`` follow the Array
API (vectors or matrices along the last axes), unlike their NumPy-style top-level namesakes.
"""
from nx_rune.frontend.arrangement import matrix_transpose
from nx_rune.frontend.linalg import (
    EighResult,
    LinAlgError,
    LstsqResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    lstsq,
    matrix_norm,
    matrix_power,
    matrix_rank,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    vector_norm,
)
from nx_rune.frontend.linalg import linalg_cross as cross
from nx_rune.frontend.linalg import linalg_diagonal as diagonal
from nx_rune.frontend.linalg import linalg_outer as outer
from nx_rune.frontend.linalg import linalg_trace as trace
from nx_rune.frontend.linalg.eig import EigResult, eig, eigvals
from nx_rune.frontend.products import matmul, tensordot, vecdot

__all__ = ["LinAlgError", "EigResult", "EighResult", "LstsqResult", "QRResult", "SlogdetResult",
           "SVDResult", "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
           "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd",
           "svdvals", "tensordot", "trace", "vecdot", "vector_norm"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
