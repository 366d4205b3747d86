"""``einsum`` composed from transpose / reshape / broadcast / gather / multiply / sum / matmul,
so it is differentiable wherever those are.

Plan: each operand first loses its repeated labels (diagonals, a gather along one of the two
axes) and the labels that no other operand nor the output uses (summed).  The operands are then
contracted left to right, two at a time: the shared labels still needed later are batch axes,
the other shared labels are contracted, and the pair becomes one ``matmul`` of
(batch, M, K) @ (batch, K, N) after a transpose and a reshape of each side (an outer product,
K = 1, is a broadcast multiply instead).  Finally the labels not in the output are summed and
the rest transposed into the output order.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from nx_rune import dtypes
from nx_rune import primitives as P
from nx_rune.frontend import reductions
from nx_rune.frontend._core import astype, broadcast_to, promote
from nx_rune.frontend.elementwise import multiply, not_equal
from nx_rune.frontend.movement import reshape, transpose
from nx_rune.frontend.products import matmul
from nx_rune.primitives import bind
from nx_rune.tensor import Tensor
from nx_rune.typing import Array, ArrayLike, DTypeLike

__all__ = ["einsum"]

_ELL = "..."


def _parse_term(term, ndim, n_ell, which, subscripts, shape):
    """Labels of one operand term; the ellipsis becomes labels ('.', j) aligned on the right."""
    if "." in term.replace(_ELL, "", 1):
        raise ValueError(f"subscripts: {subscripts!r}: operand {which} has an invalid ellipsis")
    letters = term.replace(_ELL, "")
    for c in letters:
        if not c.isalpha():
            raise ValueError(f"subscripts: {subscripts!r}: invalid label {c!r} (use letters)")
    if _ELL in term:
        k = ndim - len(letters)
        if k < 0:
            raise ValueError(f"subscripts: {subscripts!r}: operand {which} has {len(letters)} "
                             f"labels but shape {shape}")
        head, tail = term.split(_ELL)
        return list(head) + [(".", n_ell - k + j) for j in range(k)] + list(tail)
    if len(letters) != ndim:
        raise ValueError(f"subscripts: {subscripts!r}: operand {which} has {len(letters)} labels "
                         f"but {ndim} dimensions (shape {shape})")
    return list(letters)


def _ell_dims(term, ndim):
    return ndim - len(term.replace(_ELL, "")) if _ELL in term else 0


def _sort_key(label):
    return (0, label[1], "") if isinstance(label, tuple) else (1, 0, label)


def _sublist_form(first, rest):
    """NumPy's sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` as a subscripts string and
    the operands (labels are ints below 52, or Ellipsis)."""
    args = (first,) + tuple(rest)
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) > len(subs):       # an odd count: the last item is the output sublist
        out = ops.pop()
        if not isinstance(out, (list, tuple)):
            raise TypeError("einsum: in the sublist form each operand is followed by a list of "
                            "axis labels, and the output list comes last")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(labels):
        s = []
        for v in labels:
            if v is Ellipsis:
                s.append("...")
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool) and \
                    0 <= v < len(letters):
                s.append(letters[int(v)])
            else:
                raise ValueError(f"einsum: sublist labels must be ints in [0, 52) or Ellipsis, "
                                 f"got {v!r}")
        return "".join(s)
    for s in subs:
        if not isinstance(s, (list, tuple)):
            raise TypeError(f"einsum: expected a list of axis labels after each operand, got "
                            f"{type(s).__name__}")
    spec = ",".join(term(s) for s in subs)
    if out is not None:
        spec += "->" + term(out)
    return spec, tuple(ops)


def einsum(subscripts: str, *operands: ArrayLike, precision: Any = None,
           preferred_element_type: DTypeLike = None, optimize: Any = "auto") -> Array:
    """Einstein summation, as ``np.einsum(subscripts, *operands)``.

    ``subscripts``: comma-separated labels per operand (letters, optional ``...``), with
    ``->output`` (explicit) or without (implicit: the labels used once, sorted, after the
    ellipsis axes).  A label repeated within an operand takes its diagonal ("ii->i"), and one
    missing from the output is summed ("ij->i", "ii->" is the trace).  Size-1 axes broadcast
    against equal labels.  Typical cases: "ij,jk->ik" (matmul), "bij,bjk->bik" (batch matmul),
    "...ij,...jk", "i,i->" (dot), "i,j->ij" (outer), "ij->ji", "ij,ij->ij", "ijk,ikl,ilm->ijm".
    Returns the promoted dtype (NumPy's rules) and the output labels' sizes.  ``precision``
    (JAX's keyword) is accepted and ignored; ``preferred_element_type``: the operands are
    converted to it first (the result's dtype).  ``optimize`` (NumPy's and JAX's keyword: a
    bool, a strategy name such as ``"optimal"``, or a contraction path) is accepted and
    ignored: the contraction order is nx_rune's own, and the values do not depend on it.
    """
    if not isinstance(optimize, (bool, str, list, tuple)):
        raise TypeError(f"optimize: expected a bool, a strategy name or a contraction path, "
                        f"got {type(optimize).__name__}")
    if not isinstance(subscripts, str) and operands and isinstance(operands[0], (list, tuple)):
        subscripts, operands = _sublist_form(subscripts, operands)
    if preferred_element_type is not None:
        dt = dtypes.check_dtype(preferred_element_type)
        operands = tuple(astype(x, dt) for x in operands)
    if not isinstance(subscripts, str):
        raise TypeError(f"subscripts: expected a str, got {type(subscripts).__name__}")
    if not operands:
        raise ValueError("operands: einsum needs at least one operand")
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        lhs, out_term = spec.split("->", 1)
        if "->" in out_term:
            raise ValueError(f"subscripts: {subscripts!r} has more than one '->'")
    else:
        lhs, out_term = spec, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"subscripts: {subscripts!r} names {len(terms)} operands but "
                         f"{len(operands)} were given")
    xs = promote(*operands)
    dt = xs[0].dtype
    n_ell = max(_ell_dims(t, x.ndim) for t, x in zip(terms, xs))
    labels = [_parse_term(t, x.ndim, n_ell, i, subscripts, x.shape)
              for i, (t, x) in enumerate(zip(terms, xs))]

    sizes = {}
    for i, (lab, x) in enumerate(zip(labels, xs)):
        for l, n in zip(lab, x.shape):
            m = sizes.get(l, 1)
            if n != m and n != 1 and m != 1:
                name = "..." if isinstance(l, tuple) else repr(l)
                raise ValueError(f"operands: label {name} has sizes {m} and {n} (operand {i}, "
                                 f"shape {x.shape}); subscripts {subscripts!r}, shapes "
                                 f"{[tuple(y.shape) for y in xs]}")
            sizes[l] = max(m, n) if min(m, n) != 0 else 0

    if out_term is None:
        counts = {}
        for lab in labels:
            for l in lab:
                counts[l] = counts.get(l, 0) + 1
        out = sorted([l for l in counts if isinstance(l, tuple)], key=_sort_key) + \
            sorted(l for l, c in counts.items() if c == 1 and not isinstance(l, tuple))
    else:
        if out_term.count(_ELL) > 1 or "." in out_term.replace(_ELL, ""):
            raise ValueError(f"subscripts: {subscripts!r}: the output has an invalid ellipsis")
        if n_ell and _ELL not in out_term:
            raise ValueError(f"subscripts: {subscripts!r}: the operands have '...' axes, so the "
                             f"output needs '...' too")
        head, _, tail = out_term.partition(_ELL) if _ELL in out_term else (out_term, "", "")
        out = list(head) + ([(".", j) for j in range(n_ell)] if _ELL in out_term else []) + \
            list(tail)
        seen = set()
        for l in out:
            if not isinstance(l, tuple) and not l.isalpha():
                raise ValueError(f"subscripts: {subscripts!r}: invalid output label {l!r}")
            if l in seen:
                raise ValueError(f"subscripts: {subscripts!r}: output label {l!r} repeated")
            if l not in sizes:
                raise ValueError(f"subscripts: {subscripts!r}: output label {l!r} is not in any "
                                 f"operand")
            seen.add(l)

    # per operand: diagonals, then labels used nowhere else summed
    prepared = []
    for i, (lab, x) in enumerate(zip(labels, xs)):
        x, lab = _diagonals(x, list(lab), subscripts)
        elsewhere = set(out)
        for j, other in enumerate(labels):
            if j != i:
                elsewhere.update(other)
        drop = [a for a, l in enumerate(lab) if l not in elsewhere]
        if drop:
            x = reductions.sum(x, tuple(drop))
            lab = [l for l in lab if l in elsewhere]
        prepared.append((x, lab))

    x, lab = prepared[0]
    for j in range(1, len(prepared)):
        keep = set(out)
        for _, later in prepared[j + 1:]:
            keep.update(later)
        y, ylab = prepared[j]
        x, lab = _contract(x, lab, y, ylab, keep, sizes)

    drop = [a for a, l in enumerate(lab) if l not in out]
    if drop:
        x = reductions.sum(x, tuple(drop))
        lab = [l for l in lab if l in out]
    x = transpose(x, [lab.index(l) for l in out])
    want = tuple(sizes[l] for l in out)
    if x.shape != want:
        x = broadcast_to(x, want)
    if x.dtype != dt:  # bool products come back as int32 sums, small ints as int32: cast back
        x = not_equal(x, 0) if dt == np.bool_ else astype(x, dt)
    return x


def _diagonals(x, lab, subscripts):
    """Take the diagonal over every label repeated within one operand."""
    while True:
        for a in range(len(lab)):
            if lab[a] in lab[a + 1:]:
                b = lab.index(lab[a], a + 1)
                break
        else:
            return x, lab
        n, m = x.shape[a], x.shape[b]
        if n != m:
            raise ValueError(f"subscripts: {subscripts!r}: repeated label {lab[a]!r} needs equal "
                             f"sizes, got {n} and {m} (shape {x.shape})")
        # axes a, b to the end; out[..., i] = x[..., i, i] via a gather along the last axis
        rest = [k for k in range(x.ndim) if k not in (a, b)]
        x = transpose(x, rest + [a, b])
        idx = Tensor._wrap(np.arange(n, dtype=np.int32).reshape((1,) * len(rest) + (n, 1)))
        x = bind(P.gather_p, x, idx, axis=x.ndim - 1)
        x = reshape(x, x.shape[:-1])
        lab = [lab[k] for k in rest] + [lab[a]]


def _contract(a, la, b, lb, keep, sizes):
    """Contract two labelled operands; returns the product and its labels."""
    batch = [l for l in la if l in lb and l in keep]
    contr = [l for l in la if l in lb and l not in keep]
    a_only = [l for l in la if l not in lb]
    b_only = [l for l in lb if l not in la]
    # shared labels of size 1 on one side broadcast to the other's size
    a = _broadcast_labels(a, la, {l: sizes[l] for l in batch + contr})
    b = _broadcast_labels(b, lb, {l: sizes[l] for l in batch + contr})
    a = transpose(a, [la.index(l) for l in batch + a_only + contr])
    b = transpose(b, [lb.index(l) for l in batch + contr + b_only])
    nb = tuple(a.shape[:len(batch)])
    a_sh = a.shape[len(batch):len(batch) + len(a_only)]
    b_sh = b.shape[len(batch) + len(contr):]
    M, N = math.prod(a_sh), math.prod(b_sh)
    K = math.prod(a.shape[len(batch) + len(a_only):])
    if not contr:
        out = multiply(reshape(a, nb + (M, 1)), reshape(b, nb + (1, N)))
    else:
        out = matmul(reshape(a, nb + (M, K)), reshape(b, nb + (K, N)))
    return reshape(out, nb + a_sh + b_sh), batch + a_only + b_only


def _broadcast_labels(x, lab, want):
    shape = tuple(want.get(l, n) if n == 1 else n for l, n in zip(lab, x.shape))
    return x if shape == x.shape else broadcast_to(x, shape)
