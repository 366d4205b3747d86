"""``nx.scipy.ndimage``: ``map_coordinates``, interpolation of an array at given coordinates,
as ``jax.scipy.ndimage`` (orders 0 and 1), differentiable in the input and in the coordinates.

The modes are JAX's (SciPy's documented meaning): ``'constant'`` (SciPy's
``'grid-constant'``: ``cval`` outside), ``'nearest'``, ``'wrap'`` (SciPy's ``'grid-wrap'``),
``'mirror'`` and ``'reflect'``.  Every index is brought inside the array before it is read (in
``'constant'`` mode the points outside then take ``cval``), so no coordinate is out of bounds
for nx_rune's indexing, which raises where JAX's clamps.
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Sequence

import numpy as np

from nx_rune import frontend as F
from nx_rune.lax import round as _round_away
from nx_rune.typing import Array, ArrayLike

__all__ = ["map_coordinates"]


def _mirror(index, size):
    # a triangular wave of half-period size - 1, in integers: |((i + s) mod 2s) - s|
    s = size - 1
    if s == 0:
        return F.zeros_like(index)
    return F.abs((index + s) % (2 * s) - s)


def _reflect(index, size):
    return F.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FIXERS = {
    "constant": lambda index, size: F.clip(index, 0, size - 1),
    "nearest": lambda index, size: F.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _nearest(coordinate):
    c = coordinate if coordinate.dtype.kind in "iub" else _round_away(coordinate)
    return [(F.astype(c, np.int32), None)]


def _linear(coordinate):
    lower = F.floor(coordinate)
    upper_weight = coordinate - lower
    index = F.astype(lower, np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input: ArrayLike, coordinates: Sequence[ArrayLike], order: int,
                    mode: str = "constant", cval: ArrayLike = 0.0) -> Array:
    """The values of ``input`` (an N-d array) interpolated at ``coordinates`` (a sequence of N
    arrays of one shape, the result's: the points' index coordinates along each axis).
    ``order``: 0 (nearest, halves rounded away from zero) or 1 (linear); ``mode``: how points
    outside are filled (see the module docstring); ``cval``: the value outside in
    ``'constant'`` mode.  An integer input gives integer results, rounded."""
    x = F.asarray(input)
    if isinstance(coordinates, (str, bytes)) or not isinstance(coordinates, Sequence) and \
            not hasattr(coordinates, "__len__"):
        raise TypeError(f"map_coordinates: coordinates must be a sequence of input.ndim "
                        f"arrays, got {type(coordinates).__name__}")
    coords = [F.asarray(c) for c in coordinates]
    if len(coords) != x.ndim:
        raise ValueError(f"map_coordinates: coordinates must be a sequence of length "
                         f"input.ndim, but {len(coords)} != {x.ndim}")
    if any(s == 0 for s in x.shape):
        raise ValueError(f"map_coordinates: input must not be empty, got shape {x.shape}")
    fixer = _FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(f"map_coordinates: mode {mode!r} is not supported; the "
                                  f"modes are {sorted(_FIXERS)}")
    if order == 0:
        nodes_of = _nearest
    elif order == 1:
        nodes_of = _linear
    else:
        raise NotImplementedError(f"map_coordinates: order must be 0 or 1, got {order!r}")
    if coords:
        shape = coords[0].shape
        for c in coords[1:]:
            if c.shape != shape:
                raise ValueError(f"map_coordinates: the coordinate arrays must have one shape, "
                                 f"got {[c.shape for c in coords]}")
    cval = F.astype(F.asarray(cval), x.dtype)
    constant = mode == "constant"

    per_axis = []
    for c, size in zip(coords, x.shape):
        nodes = []
        for index, weight in nodes_of(c):
            valid = ((index >= 0) & (index < size)) if constant else None
            nodes.append((fixer(index, size), valid, weight))
        per_axis.append(nodes)

    terms = []
    for combo in itertools.product(*per_axis):
        indices = tuple(i for i, _, _ in combo)
        value = x[indices]
        valids = [v for _, v, _ in combo if v is not None]
        if valids:
            value = F.where(functools.reduce(operator.and_, valids), value, cval)
        weights = [w for _, _, w in combo if w is not None]
        terms.append(functools.reduce(operator.mul, weights) * value if weights else value)
    result = functools.reduce(operator.add, terms)
    if x.dtype.kind in "iu":
        result = _round_away(F.astype(result, np.float64)) if result.dtype.kind != "f" \
            else _round_away(result)
    return F.astype(result, x.dtype)


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
