"""NumPy formulations of im2col (unfold) and col2im (fold) that the benchmarks compare against."""
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided


def window_counts(sizes, kernel, stride, dilation, padding):
    """Window positions per spatial axis."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, s, d, p in zip(sizes, kernel, stride, dilation, padding))


def numpy_unfold(x, kernel, stride, dilation, padding):
    """im2col as a padded copy, an as_strided window view and one contiguous copy."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    counts = window_counts(x.shape[2:], kernel, stride, dilation, padding)
    sn, sc, *ss = xp.strides
    view = as_strided(xp, x.shape[:2] + tuple(kernel) + counts,
                      (sn, sc) + tuple(s * d for s, d in zip(ss, dilation))
                      + tuple(s * st for s, st in zip(ss, stride)), writeable=False)
    return np.ascontiguousarray(view).reshape(x.shape[0], -1, math.prod(counts))


def numpy_fold_plan(cols_shape, sizes, kernel, stride, dilation, padding):
    """The index of an np.add.at col2im (built once, outside the timed call)."""
    counts = window_counts(sizes, kernel, stride, dilation, padding)
    kgrid = np.indices(kernel).reshape(len(kernel), -1)
    ogrid = np.indices(counts).reshape(len(kernel), -1)
    index = (slice(None), slice(None)) + tuple(
        ogrid[d][None, :] * stride[d] + kgrid[d][:, None] * dilation[d] for d in range(len(kernel)))
    N, CK, L = cols_shape
    K = math.prod(kernel)
    padded = (N, CK // K) + tuple(n + 2 * p for n, p in zip(sizes, padding))
    crop = (slice(None), slice(None)) + tuple(slice(p, p + n) for n, p in zip(sizes, padding))
    return index, padded, crop, (N, CK // K, K, L)


def numpy_fold(cols, plan):
    index, padded, crop, split = plan
    out = np.zeros(padded, cols.dtype)
    np.add.at(out, index, cols.reshape(split))
    return np.ascontiguousarray(out[crop])
