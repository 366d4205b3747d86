"""``nx.scipy.interpolate``: ``RegularGridInterpolator``, linear and nearest interpolation on a
rectangular grid, as ``jax.scipy.interpolate`` (and SciPy's), differentiable in the values and
the query points, usable under ``jit`` and ``vmap`` (the interpolator is a pytree: its grid,
values and fill value are its leaves).

Each grid axis must be strictly increasing (as in JAX; SciPy also accepts decreasing axes).
``bounds_error=True`` (which JAX does not implement) raises ValueError for query points outside
the grid when their values are known; under ``jit`` they are not, and it raises
NotImplementedError.
"""
from __future__ import annotations

import itertools

import numpy as np

from nx_rune import frontend as F
from nx_rune.frontend.indexing import concrete_value
from nx_rune.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _inexact(x):
    x = F.asarray(x)
    return x if x.dtype.kind in "fc" else F.astype(x, F.asarray(1.0).dtype)


def _points_array(xi, ndim):
    """The query points as one (..., ndim) array: a tuple of coordinate arrays is broadcast
    and stacked on a last axis; a 1-D array is taken as rows of ``ndim`` coordinates."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = F.broadcast_arrays(*[F.asarray(p) for p in xi])
        return F.stack([_inexact(p) for p in parts], axis=-1)
    xi = F.asarray(xi)
    if xi.ndim == 0:
        raise ValueError("RegularGridInterpolator: xi must hold at least one point, got a "
                         "scalar")
    if xi.ndim == 1:
        xi = F.reshape(xi, (-1, ndim))
    return xi


class RegularGridInterpolator:
    """Interpolation of ``values`` given on the grid ``points`` (a sequence of N strictly
    increasing 1-D arrays; ``values``: shape ``(len(points[0]), ..., len(points[N-1]), ...)``,
    trailing axes carried along).  ``method``: ``"linear"`` (default) or ``"nearest"``;
    ``fill_value``: the result outside the grid (default NaN; None: extrapolate);
    ``bounds_error``: raise ValueError for points outside instead (see the module docstring).

    Calling it on ``xi`` (an array of shape ``(..., N)``, or a tuple of N coordinate arrays)
    gives an array of shape ``xi.shape[:-1] + values.shape[N:]``.
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        if method not in ("linear", "nearest"):
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined "
                             f"('linear' or 'nearest')")
        self.method = method
        self.bounds_error = bool(bounds_error)
        values = _inexact(values)
        try:
            n_points = len(points)
        except TypeError:
            raise TypeError(f"RegularGridInterpolator: points must be a sequence of 1-D "
                            f"arrays, got {type(points).__name__}") from None
        if n_points > values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {n_points} point arrays, "
                             f"but values has {values.ndim} dimensions")
        grid = tuple(F.asarray(p) for p in points)
        for i, g in enumerate(grid):
            if g.ndim != 1:
                raise ValueError(f"RegularGridInterpolator: points[{i}] must be 1-D, got "
                                 f"shape {g.shape}")
            if g.shape[0] < 2:
                raise ValueError(f"RegularGridInterpolator: points[{i}] must have at least 2 "
                                 f"entries, got {g.shape[0]}")
            if g.shape[0] != values.shape[i]:
                raise ValueError(f"RegularGridInterpolator: there are {g.shape[0]} points in "
                                 f"dimension {i}, but values has {values.shape[i]} values in "
                                 f"it")
            gv = concrete_value(g)
            if gv is not None and not np.all(np.diff(gv) > 0):
                raise ValueError(f"RegularGridInterpolator: the points in dimension {i} must "
                                 f"be strictly increasing")
        if fill_value is not None:
            fill_value = F.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("RegularGridInterpolator: fill_value must be either 'None' "
                                 "or of a type compatible with values")
        self.fill_value = fill_value
        self.grid = grid
        self.values = values

    def __call__(self, xi, method=None):
        """The interpolated values at ``xi`` (see the class docstring); ``method`` overrides
        the interpolator's."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined "
                             f"('linear' or 'nearest')")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points xi have "
                             f"dimension {xi.shape[-1]}, but this RegularGridInterpolator has "
                             f"dimension {ndim}")
        shape = xi.shape
        xi = F.reshape(xi, (-1, ndim))
        if self.bounds_error:
            self._check_bounds(xi)
        indices, dists, outside = self._locate(xi)
        if method == "linear":
            out = self._linear(indices, dists)
        else:
            out = self._nearest(indices, dists)
        if not self.bounds_error and self.fill_value is not None:
            mask = F.reshape(outside, (outside.shape[0],) + (1,) * (out.ndim - 1))
            out = F.where(mask, F.astype(self.fill_value, out.dtype), out)
        return F.reshape(out, shape[:-1] + self.values.shape[ndim:])

    def _check_bounds(self, xi):
        xv = concrete_value(xi)
        gs = [concrete_value(g) for g in self.grid]
        if xv is None or any(g is None for g in gs):
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True needs the "
                                      "query points' values, which are traced here (jit); use "
                                      "bounds_error=False with a fill_value")
        for d, g in enumerate(gs):
            if not np.logical_and(g[0] <= xv[:, d], xv[:, d] <= g[-1]).all():
                raise ValueError(f"RegularGridInterpolator: one of the requested xi is out of "
                                 f"bounds in dimension {d}")

    def _locate(self, xi):
        """Per axis: the index of each point's cell (its lower grid point, clipped to the
        grid's cells), the distance into it as a fraction of the cell, and whether the point
        is outside the grid."""
        indices, dists = [], []
        outside = F.zeros((xi.shape[0],), dtype=bool)
        for d, g in enumerate(self.grid):
            x = xi[:, d]
            i = F.clip(F.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            lo, hi = F.take(g, i), F.take(g, i + 1)
            indices.append(i)
            dists.append((x - lo) / (hi - lo))
            outside = outside | (x < g[0]) | (x > g[-1])
        return indices, dists, outside

    def _linear(self, indices, dists):
        trail = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        out = None
        for upper in itertools.product((False, True), repeat=len(indices)):
            corner = tuple(i + 1 if u else i for i, u in zip(indices, upper))
            weight = None
            for u, t in zip(upper, dists):
                w = t if u else 1 - t
                weight = w if weight is None else weight * w
            term = self.values[corner] * weight[trail]
            out = term if out is None else out + term
        return out

    def _nearest(self, indices, dists):
        return self.values[tuple(F.where(t <= 0.5, i, i + 1) for i, t in zip(indices, dists))]


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(children[0], children[1], aux[0], aux[1],
                                                  children[2]),
)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
