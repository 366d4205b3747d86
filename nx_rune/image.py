"""``nx.image``: JAX's ``jax.image``: ``resize`` and ``scale_and_translate``.

Resampling is separable: along each resized dimension the output is the input contracted with
a weight matrix (input size x output size) whose column ``j`` holds the kernel evaluated at the
distances between output pixel ``j``'s centre, mapped back into the input, and every input
pixel centre, normalized to sum to one.  Pixels are half-centred (pixel ``i`` covers
``[i, i + 1)``, centre ``i + 0.5``).  When downsampling with ``antialias=True`` the kernel is
stretched by the inverse scale, so it low-pass filters as it interpolates.  The weights are
built with front-end ops (scale and translation may be traced, and are differentiated), the
contraction is a matrix product per dimension, so everything differentiates, batches and
compiles.  Values match JAX 0.10.2's (the same kernels and normalization).
"""
from __future__ import annotations

import enum
import operator
from typing import Any, Sequence

import numpy as np

__all__ = ["resize", "scale_and_translate", "ResizeMethod"]


class ResizeMethod(enum.Enum):
    """Image resize methods (JAX's names): NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys'
    kernel, a = -0.5), CUBIC_PYTORCH (OpenCV's a = -0.75 with edge padding when not
    antialiasing), AREA (the overlap of pixel areas)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method named ``s`` (JAX's spellings: ``"bilinear"``, ``"bicubic"``, ...)."""
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                 "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}" (one of '
                             f'{", ".join(sorted(names))})')
        return ResizeMethod[names[s]]


def _method(method, what):
    if isinstance(method, ResizeMethod):
        return method
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    raise TypeError(f"{what}: method must be a string or an nx.image.ResizeMethod, got "
                    f"{type(method).__name__}")


# -- kernels (x: distances >= 0, in input pixels divided by the kernel's stretch) ----------------

def _triangle(x):
    from nx_rune import frontend as F
    return F.maximum(0.0, 1.0 - F.abs(x))


def _keys_cubic(x, a=-0.5):
    from nx_rune import frontend as F
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return F.where(x >= 2.0, 0.0, F.where(x >= 1.0, outer, inner))


def _lanczos(radius):
    def kernel(x):
        from nx_rune import frontend as F
        y = radius * F.sin(np.pi * x) * F.sin(np.pi * x / radius)
        # sinc(x) sinc(x / r), with its limit 1 near 0 (the ratio is 0/0 there)
        safe = F.where(x != 0, np.pi ** 2 * x * x, 1.0)
        out = F.where(x > 1e-3, y / safe, 1.0)
        return F.where(x > radius, 0.0, out)
    return kernel


_AREA = "area"
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, lambda x: _keys_cubic(x, -0.75)),
    ResizeMethod.AREA: (1, _AREA),
}


def _weights(m, n, scale, translation, kernel, antialias, edge_radius, dtype):
    """The (m, n) weight matrix of one dimension: input size ``m``, output size ``n``."""
    from nx_rune import frontend as F
    inv = 1.0 / scale
    out_idx = F.arange(n, dtype=dtype)
    # where each output pixel's centre falls in the input, in input pixel indices
    sample = (out_idx + 0.5) * inv - translation * inv - 0.5
    norm_eps = 1000.0 * float(np.finfo(np.float32).eps)
    if kernel is _AREA:
        lo_out = out_idx * inv - translation * inv
        hi_out = lo_out + inv
        lo_in = F.arange(m, dtype=dtype)[:, None]
        w = F.maximum(0.0, F.minimum(hi_out[None, :], lo_in + 1.0)
                      - F.maximum(lo_out[None, :], lo_in))
    else:
        stretch = F.maximum(inv, 1.0) if antialias else 1.0
        k = edge_radius if edge_radius is not None else 0
        idx = F.arange(-k, m + k, dtype=dtype)
        w = kernel(F.abs(sample[None, :] - idx[:, None]) / stretch)
        if k:
            # the weights of the pixels beyond the edges go to the edge pixels (the edges
            # repeated): a fixed 0/1 matrix summing them onto their clamped positions
            onto = np.zeros((m, m + 2 * k), dtype)
            onto[np.clip(np.arange(-k, m + k), 0, m - 1), np.arange(m + 2 * k)] = 1
            w = F.matmul(F.asarray(onto), w)
    total = F.sum(w, axis=0, keepdims=True)
    w = F.where(F.abs(total) > norm_eps, w / F.where(total != 0, total, 1.0), 0.0)
    if kernel is not _AREA and not edge_radius:
        # an output pixel whose centre maps outside the input gets nothing
        inside = (sample >= -0.5) & (sample <= m - 0.5)
        w = F.where(inside[None, :], w, 0.0)
    return w


def _contract(x, d, w):
    """``x`` with axis ``d`` contracted against the rows of ``w`` (the new axis in its
    place)."""
    from nx_rune import frontend as F
    y = F.moveaxis(x, d, -1)
    lead = y.shape[:-1]
    # one matrix product (rows: every other index), not a stack of small ones
    y = F.matmul(F.reshape(y, (int(np.prod(lead)), y.shape[-1])), F.astype(w, x.dtype))
    return F.moveaxis(F.reshape(y, lead + (w.shape[1],)), -1, d)


def _shape_arg(shape, image, what):
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{what}: shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) != image.ndim:
        raise ValueError(f"{what}: shape must have length equal to the number of dimensions "
                         f"of the image; {shape} vs {image.shape}")
    if any(n < 0 for n in shape):
        raise ValueError(f"{what}: shape must be non-negative, got {shape}")
    return shape


def _inexact(image):
    from nx_rune import frontend as F
    from nx_rune.dtypes import default_float, is_inexact
    x = F.asarray(image)
    return x if is_inexact(x.dtype) else F.astype(x, default_float())


def _scale_translate(x, shape, dims, scales, translations, method, antialias):
    radius, kernel = _KERNELS[method]
    edge = radius if method is ResizeMethod.CUBIC_PYTORCH and not antialias else None
    dtype = np.float64 if x.dtype in (np.float64, np.complex128) else np.float32
    for d, s, t in zip(dims, scales, translations):
        w = _weights(x.shape[d], shape[d], s, t, kernel, antialias, edge, dtype)
        x = _contract(x, d, w)
    return x


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: Any, antialias: bool = True,
                        precision: Any = None) -> Any:
    """``image`` resampled to ``shape`` under the map ``x -> x * scale + translation`` along
    each of ``spatial_dims`` (the inverse map gives the sample locations; pixels are
    half-centred), JAX's ``jax.image.scale_and_translate``.

    ``scale``/``translation``: one value per spatial dimension (arrays or numbers; traced
    values are differentiated).  ``method``: ``"linear"``, ``"cubic"``, ``"lanczos3"``,
    ``"lanczos5"``, ``"cubic-pytorch"``, ``"area"`` or a ``ResizeMethod`` (not
    ``"nearest"``, as in JAX).  An output pixel that maps outside the input is 0.  Integer
    images are resampled as floats.  ``precision`` is accepted for JAX's signature.
    """
    from nx_rune import frontend as F
    x = _inexact(image)
    shape = _shape_arg(shape, x, "scale_and_translate")
    m = _method(method, "scale_and_translate")
    if m is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: nearest neighbor resampling is not supported "
                         "(as in JAX); use resize(..., 'nearest')")
    if m is ResizeMethod.CUBIC_PYTORCH and antialias:
        m = ResizeMethod.CUBIC
    dims = []
    for d in spatial_dims:
        try:
            d = operator.index(d)
        except TypeError:
            raise TypeError(f"scale_and_translate: spatial_dims must be ints, got "
                            f"{spatial_dims!r}") from None
        if not -x.ndim <= d < x.ndim:
            raise ValueError(f"scale_and_translate: spatial dimension {d} is out of range "
                             f"for an image of rank {x.ndim}")
        dims.append(d % x.ndim)
    for d in range(x.ndim):
        if d not in dims and shape[d] != x.shape[d]:
            raise ValueError(f"scale_and_translate: shape[{d}] = {shape[d]} differs from the "
                             f"image's {x.shape[d]} but {d} is not in spatial_dims")
    scale = F.asarray(scale)
    translation = F.asarray(translation)
    k = len(dims)
    if scale.shape != (k,) or translation.shape != (k,):
        raise ValueError(f"scale_and_translate: scale and translation must have one entry per "
                         f"spatial dimension ({k}), got shapes {scale.shape} and "
                         f"{translation.shape}")
    dt = np.float64 if x.dtype in (np.float64, np.complex128) else np.float32
    scale = F.astype(scale, dt) if scale.dtype != dt else scale
    translation = F.astype(translation, dt) if translation.dtype != dt else translation
    return _scale_translate(x, shape, dims, [scale[i] for i in range(k)],
                            [translation[i] for i in range(k)], m, bool(antialias))


def _resize_nearest(x, shape):
    from nx_rune import frontend as F
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        # the input pixel under each output pixel's centre, computed in float32 as JAX does
        idx = np.floor(((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m)
                        / np.float32(n)).astype(np.float32)).astype(np.int32)
        x = F.take(x, F.asarray(idx), axis=d)
    return x


def resize(image: Any, shape: Sequence[int], method: Any, antialias: bool = True,
           precision: Any = None) -> Any:
    """``image`` resized to ``shape`` (every dimension: leave a batch or channel dimension's
    size unchanged), JAX's ``jax.image.resize``.

    ``method``: ``"nearest"`` (the input pixel under each output pixel's centre; keeps the
    dtype), ``"linear"``/``"bilinear"``, ``"cubic"``/``"bicubic"`` (Keys' kernel),
    ``"lanczos3"``, ``"lanczos5"``, ``"cubic-pytorch"``, ``"area"``, or a ``ResizeMethod``;
    the other methods give a float result (integer images are promoted).  ``antialias``:
    when downsampling, stretch the kernel so it filters (no effect when upsampling).
    Differentiable in ``image``; ``precision`` is accepted for JAX's signature.

    Examples
    --------
    >>> import nx_rune as nx
    >>> nx.image.resize(nx.array([0.0, 1.0]), (4,), "linear")
    Tensor([0.  , 0.25, 0.75, 1.  ], dtype=float32)
    """
    from nx_rune import frontend as F
    m = _method(method, "resize")
    x = F.asarray(image)
    shape = _shape_arg(shape, x, "resize")
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(x, shape)
    x = _inexact(x)
    if m is ResizeMethod.CUBIC_PYTORCH and antialias:
        m = ResizeMethod.CUBIC
    dims = [d for d in range(x.ndim) if x.shape[d] != shape[d]]
    scales = [1.0 if shape[d] == 0 else shape[d] / x.shape[d] for d in dims]
    return _scale_translate(x, shape, dims, scales, [0.0] * len(dims), m, bool(antialias))



def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
