"""``nx.scipy.spatial.transform``: ``Rotation`` (rotations in 3 dimensions, held as unit
quaternions in SciPy's scalar-last order) and ``Slerp`` (their spherical linear interpolation),
as ``jax.scipy.spatial.transform`` and SciPy's.

Both are NamedTuples, hence pytrees: they pass through ``jit``, ``vmap`` and ``grad`` as
arguments and results.  Every conversion is written with nx_rune's ops over the last axis, so a
stack of rotations (quaternions of shape ``(..., 4)``) is converted at once and everything is
differentiable; near the identity the rotation-vector conversions use their Taylor series, and
their exact branch is evaluated away from zero so that derivatives there stay finite.
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple, Sequence

import numpy as np

from nx_rune import frontend as F
from nx_rune.typing import Array, ArrayLike

__all__ = ["Rotation", "Slerp"]


def _float(x):
    x = F.asarray(x)
    return x if x.dtype.kind == "f" else F.astype(x, F.asarray(1.0).dtype)


def _last(x, n, name):
    if x.ndim < 1 or x.shape[-1] != n:
        raise ValueError(f"{name}: expected an array of shape (..., {n}), got shape {x.shape}")
    return x


def _norm(v):
    return F.sqrt(F.sum(v * v, axis=-1))


def _cat(parts):
    """The scalars (arrays of one shape) ``parts`` stacked on a new last axis."""
    return F.stack(parts, axis=-1)


def _compose(p, q):
    """The quaternion product p q (apply q, then p)."""
    px, py, pz, pw = (p[..., i] for i in range(4))
    qx, qy, qz, qw = (q[..., i] for i in range(4))
    return _cat([pw * qx + qw * px + (py * qz - pz * qy),
                 pw * qy + qw * py + (pz * qx - px * qz),
                 pw * qz + qw * pz + (px * qy - py * qx),
                 pw * qw - px * qx - py * qy - pz * qz])


def _unit(q):
    return q / _norm(q)[..., None]


def _matrix(q):
    x, y, z, w = (q[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [_cat([x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)]),
            _cat([2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)]),
            _cat([2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2])]
    return F.stack(rows, axis=-2)


def _from_matrix(m):
    d = [m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]]
    tr = d[0] + d[1] + d[2]
    choice = F.argmax(F.stack(d + [tr], axis=-1), axis=-1)
    # the candidate built around the largest of the diagonal and the trace is the accurate one
    out = _cat([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                m[..., 1, 0] - m[..., 0, 1], 1 + tr])
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        comp = [None] * 4
        comp[i] = 1 - tr + 2 * m[..., i, i]
        comp[j] = m[..., j, i] + m[..., i, j]
        comp[k] = m[..., k, i] + m[..., i, k]
        comp[3] = m[..., k, j] - m[..., j, k]
        out = F.where((choice == i)[..., None], _cat(comp), out)
    return _unit(out)


def _rotvec_scale(angle, degrees):
    """angle / sin(angle / 2), by its series below 1e-3 (where the quotient loses accuracy and
    its derivative would be 0/0)."""
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    far = angle > 1e-3
    safe = F.where(far, angle, F.ones_like(angle))
    scale = F.where(far, safe / F.sin(safe / 2), small)
    return F.rad2deg(scale) if degrees else scale


def _as_rotvec(q, degrees):
    q = F.where((q[..., 3] < 0)[..., None], -q, q)      # w >= 0: 0 <= angle <= pi
    v = q[..., :3]
    # |v| through a safe square root: its derivative at v = 0 would be 0/0
    vv = F.sum(v * v, axis=-1)
    nz = vv > 0
    vnorm = F.where(nz, F.sqrt(F.where(nz, vv, F.ones_like(vv))), F.zeros_like(vv))
    angle = 2 * F.arctan2(vnorm, q[..., 3])
    return _rotvec_scale(angle, degrees)[..., None] * v


def _from_rotvec(rv, degrees):
    if degrees:
        rv = F.deg2rad(rv)
    aa = F.sum(rv * rv, axis=-1)
    far = aa > 1e-6                                     # angle > 1e-3
    angle = F.sqrt(F.where(far, aa, F.ones_like(aa)))
    small = 0.5 - aa / 48 + aa * aa / 3840
    scale = F.where(far, F.sin(angle / 2) / angle, small)
    cos_half = F.where(far, F.cos(angle / 2), 1 - aa / 8 + aa * aa / 384)
    return F.concatenate([scale[..., None] * rv, cos_half[..., None]], axis=-1)


def _elementary(axis, angle):
    zero = F.zeros_like(angle)
    parts = [zero, zero, zero, F.cos(angle / 2)]
    parts[axis] = F.sin(angle / 2)
    return _cat(parts)


def _check_seq(seq, n_max, exact=False):
    if not isinstance(seq, str):
        raise TypeError(f"seq: expected a string of axes, got {type(seq).__name__}")
    n = len(seq)
    if exact and n != 3:
        raise ValueError(f"seq: expected 3 axes, got {seq!r}")
    if not 1 <= n <= n_max:
        raise ValueError(f"seq: expected a non-empty string of up to {n_max} axes, got "
                         f"{seq!r}")
    intrinsic = re.fullmatch(r"[XYZ]+", seq) is not None
    extrinsic = re.fullmatch(r"[xyz]+", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"seq: expected axes from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got "
                         f"{seq!r}")
    if any(seq[i] == seq[i + 1] for i in range(n - 1)):
        raise ValueError(f"seq: expected consecutive axes to be different, got {seq!r}")
    return intrinsic, ["xyz".index(c) for c in seq.lower()]


def _euler_from_quat(q, axes, extrinsic, degrees):
    # Bernardes & Viollet (2022), "Quaternion to Euler angles conversion", as SciPy's
    if not extrinsic:
        axes = axes[::-1]
    i, j, k = axes
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = float((i - j) * (j - k) * (k - i) // 2)
    w, qi, qj, qk = q[..., 3], q[..., i], q[..., j], q[..., k]
    if symmetric:
        a, b, c, d = w, qi, qj, qk * sign
    else:
        a, b, c, d = w - qj, qi + qk * sign, qj + w, qk * sign - qi
    middle = 2 * F.arctan2(F.hypot(c, d), F.hypot(a, b))
    eps = 1e-7
    case = F.where(F.abs(middle - np.pi) <= eps, 2, 0)
    case = F.where(F.abs(middle) <= eps, 1, case)      # 1, 2: gimbal lock, the third angle 0
    half_sum, half_diff = F.arctan2(b, a), F.arctan2(d, c)
    first, third = (0, 2) if extrinsic else (2, 0)
    angles = [None, middle, None]
    degenerate = F.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    zero = F.zeros_like(middle)
    angles[0] = degenerate
    angles[2] = zero
    if first == 0:
        angles[0] = F.where(case == 0, half_sum - half_diff, degenerate)
        angles[2] = F.where(case == 0, half_sum + half_diff, zero)
    else:
        angles[2] = F.where(case == 0, half_sum - half_diff, zero)
        angles[0] = F.where(case == 0, half_sum + half_diff, degenerate)
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = _cat(angles)
    out = (out + np.pi) % (2 * np.pi) - np.pi
    return F.rad2deg(out) if degrees else out


class Rotation(NamedTuple):
    """Rotation(s) in 3 dimensions, as unit quaternions ``quat`` of shape ``(4,)`` (one) or
    ``(N, 4)`` (scalar last), as ``scipy.spatial.transform.Rotation`` and JAX's.  Build with
    the ``from_*`` class methods; compose with ``*`` (``(p * q).apply(v)`` is
    ``p.apply(q.apply(v))``)."""
    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence["Rotation"]) -> "Rotation":
        """The rotations of a sequence of ``Rotation`` objects, in one."""
        return cls(F.concatenate([F.atleast_2d(r.quat) for r in rotations], axis=0))

    @classmethod
    def from_euler(cls, seq: str, angles: ArrayLike, degrees: bool = False) -> "Rotation":
        """From Euler angles about the axes ``seq`` (up to 3 of 'xyz' for rotations about the
        fixed frame's axes, of 'XYZ' for the rotating frame's); ``angles``: shape
        ``(..., len(seq))`` (or a scalar for one axis), radians unless ``degrees``."""
        intrinsic, axes = _check_seq(seq, 3)
        angles = _float(angles)
        if angles.ndim == 0:
            angles = angles[None]
        if angles.shape[-1] != len(axes):
            if len(axes) == 1:
                angles = angles[..., None]
            else:
                raise ValueError(f"angles: expected shape (..., {len(axes)}) for seq {seq!r}, "
                                 f"got {angles.shape}")
        if degrees:
            angles = F.deg2rad(angles)
        q = _elementary(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            e = _elementary(axes[n], angles[..., n])
            q = _compose(q, e) if intrinsic else _compose(e, q)
        return cls(q)

    @classmethod
    def from_matrix(cls, matrix: ArrayLike) -> "Rotation":
        """From rotation matrices, shape ``(3, 3)`` or ``(N, 3, 3)`` (the nearest rotation of
        a matrix that is not quite orthogonal)."""
        m = _float(matrix)
        if m.ndim < 2 or m.shape[-2:] != (3, 3):
            raise ValueError(f"matrix: expected shape (..., 3, 3), got {m.shape}")
        return cls(_from_matrix(m))

    @classmethod
    def from_mrp(cls, mrp: ArrayLike) -> "Rotation":
        """From Modified Rodrigues Parameters, shape ``(..., 3)``."""
        p = _last(_float(mrp), 3, "mrp")
        s = F.sum(p * p, axis=-1)[..., None] + 1
        return cls(F.concatenate([2 * p, 2 - s], axis=-1) / s)

    @classmethod
    def from_quat(cls, quat: ArrayLike) -> "Rotation":
        """From quaternions ``(x, y, z, w)``, shape ``(..., 4)`` (normalized here)."""
        return cls(_unit(_last(_float(quat), 4, "quat")))

    @classmethod
    def from_rotvec(cls, rotvec: ArrayLike, degrees: bool = False) -> "Rotation":
        """From rotation vectors (axis times angle), shape ``(..., 3)``."""
        return cls(_from_rotvec(_last(_float(rotvec), 3, "rotvec"), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float) -> "Rotation":
        """The identity rotation (``num`` of them when given)."""
        dt = F.asarray(1.0).dtype if dtype is float else np.dtype(dtype)
        q = F.asarray(np.array([0.0, 0.0, 0.0, 1.0], dtype=dt))
        if num is not None:
            q = F.tile(q[None], (int(num), 1))
        return cls(q)

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> "Rotation":
        """Not implemented (as in JAX)."""
        raise NotImplementedError("Rotation.random is not implemented (as in JAX)")

    def __getitem__(self, indexer):
        """The rotation(s) at ``indexer``."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """The number of rotations."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: "Rotation") -> "Rotation":  # type: ignore[override]
        """The composition: this rotation after ``other``."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: ArrayLike, inverse: bool = False) -> Array:
        """The rotated ``vectors`` (shape ``(..., 3)``); ``inverse``: by the inverse
        rotation."""
        v = _last(_float(vectors), 3, "vectors")
        m = self.as_matrix()
        if inverse:
            m = F.swapaxes(m, -1, -2)
        return F.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False) -> Array:
        """Euler angles about the 3 axes ``seq`` (see :meth:`from_euler`), shape ``(..., 3)``;
        at gimbal lock the third angle is 0."""
        intrinsic, axes = _check_seq(seq, 3, exact=True)
        return _euler_from_quat(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self) -> Array:
        """Rotation matrices, shape ``(..., 3, 3)``."""
        return _matrix(self.quat)

    def as_mrp(self) -> Array:
        """Modified Rodrigues Parameters, shape ``(..., 3)`` (the ones of norm at most 1)."""
        q = self.quat
        sign = F.where(q[..., 3] < 0, -1.0, 1.0)
        return (sign / (1.0 + sign * q[..., 3]))[..., None] * q[..., :3]

    def as_rotvec(self, degrees: bool = False) -> Array:
        """Rotation vectors (axis times angle in [0, pi]), shape ``(..., 3)``."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """Quaternions, scalar last (first with ``scalar_first``); ``canonical``: the sign
        with w > 0 (the first nonzero of w, x, y, z positive)."""
        q = self.quat
        if canonical:
            neg, zero = q < 0, q == 0
            flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0])
                    | (zero[..., 3] & zero[..., 0] & neg[..., 1])
                    | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
            q = F.where(flip[..., None], -q, q)
        if scalar_first:
            q = F.concatenate([q[..., 3:], q[..., :3]], axis=-1)
        return q

    def inv(self) -> "Rotation":
        """The inverse rotation(s)."""
        return Rotation(F.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

    def magnitude(self) -> Array:
        """The rotation angles, in [0, pi]."""
        return 2 * F.arctan2(_norm(self.quat[..., :3]), F.abs(self.quat[..., 3]))

    def mean(self, weights: ArrayLike | None = None) -> "Rotation":
        """The (weighted) mean rotation: the eigenvector of the largest eigenvalue of
        sum_i w_i q_i q_i^T (Markley et al.)."""
        if self.single:
            raise TypeError("mean: a single rotation has no mean; use Rotation.concatenate")
        q = self.quat
        w = F.ones(q.shape[0], dtype=q.dtype) if weights is None else \
            F.astype(F.asarray(weights), q.dtype)
        if w.ndim != 1:
            raise ValueError(f"weights: expected a 1-D array, got shape {w.shape}")
        if w.shape[0] != len(self):
            raise ValueError(f"weights: expected one weight per rotation, got {w.shape[0]} "
                             f"weights and {len(self)} rotations")
        k = F.matmul(F.swapaxes(w[:, None] * q, 0, 1), q)
        _, v = F.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (``quat`` of shape ``(4,)``)."""
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations: ``Slerp.init(times, rotations)``, then
    ``slerp(t)`` gives the rotation(s) at times ``t`` (as ``scipy.spatial.transform.Slerp``
    and JAX's)."""
    times: Any
    timedelta: Any
    rotations: Any
    rotvecs: Any

    @classmethod
    def init(cls, times: ArrayLike, rotations: Rotation) -> "Slerp":
        """The interpolator through ``rotations`` (at least 2) at the increasing ``times``."""
        if not isinstance(rotations, Rotation):
            raise TypeError("rotations: must be a Rotation instance")
        if rotations.single or len(rotations) == 1:
            raise ValueError("rotations: must be a sequence of at least 2 rotations")
        times = F.astype(F.asarray(times), rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"times: expected a 1-D array, got {times.ndim} dimensions")
        if times.shape[0] != len(rotations):
            raise ValueError(f"times: expected one time per rotation, got {len(rotations)} "
                             f"rotations and {times.shape[0]} times")
        start = Rotation(rotations.quat[:-1])
        steps = (start.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(times=times, timedelta=F.diff(times), rotations=start, rotvecs=steps)

    def __call__(self, times: ArrayLike) -> Rotation:
        """The interpolated rotation(s) at ``times`` (a scalar or a 1-D array)."""
        t = F.astype(F.asarray(times), self.times.dtype)
        if t.ndim > 1:
            raise ValueError(f"times: must be at most 1-dimensional, got shape {t.shape}")
        single = t.ndim == 0
        t = F.atleast_1d(t)
        ind = F.clip(F.searchsorted(self.times, t) - 1, 0, self.timedelta.shape[0] - 1)
        alpha = (t - F.take(self.times, ind)) / F.take(self.timedelta, ind)
        step = Rotation.from_rotvec(F.take(self.rotvecs, ind, axis=0) * alpha[:, None])
        out = Rotation(F.take(self.rotations.quat, ind, axis=0)) * step
        return out[0] if single else out


def __dir__():
    """The public names only (``__all__``), not the imports."""
    return sorted(__all__)
