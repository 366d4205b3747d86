"""unfold (im2col) and its adjoint fold (col2im), any number of spatial dimensions."""
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

_Size = int | Sequence[int]

def unfold(
    x: ArrayLike,
    kernel_size: _Size,
    stride: _Size = 1,
    dilation: _Size = 1,
    padding: _Size = 0,
) -> NDArray[np.generic]:
    """(N, C, *spatial) -> (N, C * prod(kernel_size), L) sliding-window columns."""

def fold(
    cols: ArrayLike,
    output_size: Sequence[int],
    kernel_size: _Size,
    stride: _Size = 1,
    dilation: _Size = 1,
    padding: _Size = 0,
) -> NDArray[np.generic]:
    """(N, C * prod(kernel_size), L) -> (N, C, *output_size), overlapping windows summed."""
