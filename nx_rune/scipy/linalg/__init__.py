"""``nx.scipy.linalg``: JAX's ``jax.scipy.linalg`` surface with SciPy's signatures,
differentiable, jittable and batched over leading axes (see ``nx_rune.frontend.linalg`` for the
conventions).

One module per family: ``_decomp`` (cholesky, det, inv, solve, lu, lu_factor, lu_solve, qr,
svd, eigh, eigh_tridiagonal, eig, eigvals, hessenberg, block_diag, toeplitz, hilbert),
``_schur`` (schur, rsf2csf, sqrtm, logm, funm, polar, expm_frechet), ``_solvers``
(solve_sylvester, solve_continuous_lyapunov, solve_discrete_lyapunov); solve_triangular,
cho_factor, cho_solve and expm come from ``nx_rune.frontend.linalg``, solve_banded from
``nx_rune.scipy._banded``.
"""
from nx_rune.frontend.linalg import cho_factor, cho_solve, expm, solve_triangular
from nx_rune.scipy._banded import solve_banded
from nx_rune.scipy.linalg._decomp import (
    block_diag,
    cholesky,
    det,
    eig,
    eigh,
    eigh_tridiagonal,
    eigvals,
    hessenberg,
    hilbert,
    inv,
    lu,
    lu_factor,
    lu_solve,
    qr,
    solve,
    svd,
    toeplitz,
)
from nx_rune.scipy.linalg._schur import (
    expm_frechet,
    funm,
    logm,
    polar,
    rsf2csf,
    schur,
    sqrtm,
)
from nx_rune.scipy.linalg._solvers import (
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
)

__all__ = ["solve_triangular", "cho_factor", "cho_solve", "expm", "solve_banded",
           "block_diag", "cholesky", "det", "eig", "eigh", "eigh_tridiagonal", "eigvals",
           "hessenberg", "hilbert", "inv", "lu", "lu_factor", "lu_solve", "qr", "solve", "svd",
           "toeplitz", "expm_frechet", "funm", "logm", "polar", "rsf2csf", "schur", "sqrtm",
           "solve_continuous_lyapunov", "solve_discrete_lyapunov", "solve_sylvester"]


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
