"""Argument handling shared by ``nx.scipy.special`` and ``nx.scipy.stats``: real float
operands, promoted together (Python scalars weakly typed) and broadcast."""
from __future__ import annotations

from nx_rune import dtypes
from nx_rune.frontend._core import SCALARS, as_inexact, broadcast_all, operand, promote
from nx_rune.typing import Array, ArrayLike


def real_operand(x: ArrayLike, arg: str, name: str) -> Array:
    """``x`` as a real float tensor (ints and bools: float32, 64-bit ints: float64);
    TypeError naming ``arg`` for complex input."""
    x = operand(x)
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{arg}: {name} is defined for real input, got dtype {x.dtype}")
    return as_inexact(x)


def real_operands(name: str, **args: ArrayLike) -> list[Array]:
    """The named operands (keyword order) promoted to one real float dtype and broadcast to one
    shape; TypeError naming the first complex one."""
    return broadcast_all(*real_promoted(name, **args))


def real_promoted(name: str, **args: ArrayLike) -> list[Array]:
    """``real_operands``'s operands promoted but not broadcast (each keeps its shape)."""
    values = []
    for arg, v in args.items():
        if isinstance(v, complex):
            raise TypeError(f"{arg}: {name} is defined for real input, got {v!r}")
        if not isinstance(v, SCALARS):
            v = operand(v)
            if dtypes.is_complex(v.dtype):
                raise TypeError(f"{arg}: {name} is defined for real input, got dtype {v.dtype}")
        values.append(v)
    return [as_inexact(v) for v in promote(*values)]
