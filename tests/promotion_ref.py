"""The promotion rule between arrays that nx_rune documents, written from the rule itself as
the tests' reference (not read from nx_rune): NumPy's ``result_type``, except that integer and
bool dtypes meeting floating or complex ones take the inexact ones' promotion, as JAX's lattice
does (jax 0.10.2: ``jnp.promote_types(jnp.int16, jnp.float16)`` is float16 and
``promote_types(int64, float32)`` float32, where NumPy gives float32 and float64)."""
import numpy as np


def result_type(*dtypes):
    """The dtype nx_rune gives an operation between arrays of ``dtypes`` (default promotion)."""
    dts = [np.result_type(d) for d in dtypes]
    inexact = [d for d in dts if d.kind in "fc"]
    return np.result_type(*(inexact if inexact else dts))
