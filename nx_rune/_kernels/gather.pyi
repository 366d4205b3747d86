"""Gather / scatter along an axis (np.take_along_axis index semantics)."""
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

ScatterMode = Literal["set", "add", "mul", "max", "min"]

def gather(data: ArrayLike, indices: ArrayLike, axis: int | None) -> NDArray[np.generic]:
    """np.take_along_axis(data, indices, axis) as a new C-contiguous array."""

def scatter(
    template: ArrayLike,
    indices: ArrayLike,
    updates: ArrayLike,
    axis: int | None,
    mode: ScatterMode = "set",
) -> NDArray[np.generic]:
    """A new array: template with updates written (or combined by mode) at indices along axis."""

# Walks of at least THREADED_SIZE elements run on the kernels' pool
# (nx_rune._kernels.pool.set_num_threads); see gather.pyx for HISTOGRAM_RATIO.
THREADED_SIZE: int
HISTOGRAM_RATIO: int
