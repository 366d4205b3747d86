"""The VM's own float32/float64 arithmetic (nx_rune/_kernels/fusion_arith.h): the single loops
and the chains that keep a run of add/subtract/multiply/divide in registers.  Each must give
NumPy's ufunc values bit for bit, for every operand layout the loops take (contiguous,
broadcast, strided) and every tail length (a NaN's payload where two NaNs meet is not kept, as
NumPy's loops do not keep it either); the fusion pass must chain exactly the runs whose
intermediate values nothing else reads, and jitted programs must equal eager ones bit for bit.
On a CPU without AVX-512 the loops are not offered: the tests then assert that they decline."""
import ctypes

import numpy as np
import pytest

import nx_rune as nx
from nx_rune._kernels import fusion as F
from nx_rune._kernels.gemm import avx512_available
from nx_rune.compiler.passes import fusion as FP

OPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}
HAVE = avx512_available()
_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ssize_t),
                         ctypes.POINTER(ctypes.c_ssize_t), ctypes.c_void_p)


def _call(loop, arrays, n, steps):
    """Run a loop address on the arrays' data pointers with n elements and byte steps."""
    fn, data = loop
    args = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    dims = (ctypes.c_ssize_t * 1)(n)
    st = (ctypes.c_ssize_t * len(steps))(*steps)
    _LOOP(fn)(args, dims, st, data or None)


def _values(dtype, n, seed):
    """n values with the IEEE specials mixed in: NaN, +-inf, -0, subnormals, huge and tiny."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype) * np.asarray(rng.choice([1e-3, 1, 1e3], n), dtype)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dtype).tiny / 4,
                         np.finfo(dtype).max, -np.finfo(dtype).max], dtype)
    idx = rng.choice(n, size=min(n, len(specials)), replace=False)
    a[idx] = specials[: len(idx)]
    return a


def _same_bits(got, want):
    """Equal bit for bit (signed zeros included), NaN where NaN: which of two NaNs meeting in
    an operation comes out is not kept (NumPy's own loops give either, by operand layout)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep].view(np.uint8), want[keep].view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(OPS))
def test_single_loops_give_numpys_bits_for_every_layout(op, dtype):
    loop = F.arith_loop(op, dtype)
    if not HAVE:
        assert loop is None
        return
    item = np.dtype(dtype).itemsize
    for n in (1, 7, 15, 16, 17, 31, 33, 100, 1023, 1024, 1025):
        a, b = _values(dtype, 2 * n, n), _values(dtype, 2 * n, n + 1)
        cases = {   # (first operand, its step, second, its step): what NumPy broadcasts
            "contiguous": (a[:n], item, b[:n], item),
            "first broadcast": (a[:1], 0, b[:n], item),
            "second broadcast": (a[:n], item, b[:1], 0),
            "both broadcast": (a[:1], 0, b[:1], 0),
            "strided": (a, 2 * item, b, 2 * item),
        }
        for name, (x, sx, y, sy) in cases.items():
            out = np.full(2 * n, 7, dtype)
            ostep = 2 * item if name == "strided" else item
            _call(loop, [x, y, out], n, [sx, sy, ostep])
            xs = np.lib.stride_tricks.as_strided(x, (n,), (sx,))
            ys = np.lib.stride_tricks.as_strided(y, (n,), (sy,))
            with np.errstate(all="ignore"):
                want = OPS[op](xs, ys)
            got = out[::2][:n] if name == "strided" else out[:n]
            _same_bits(got, want)
            if name != "strided":     # nothing written past the n elements
                assert (out[n:] == 7).all()


def test_loop_lookups_decline_what_they_do_not_run():
    assert F.arith_loop("add", np.int32) is None
    assert F.arith_loop("power", np.float32) is None
    assert F.arith_loop("add", np.complex64) is None
    assert F.chain_loop(np.int64, 2, [("add", 1, False)]) is None
    assert F.chain_loop(np.float32, 2, [("add", 1, False)] * (F.CHAIN_MAX + 1)) is None
    if HAVE:
        with pytest.raises(ValueError, match="unknown op"):
            F.chain_loop(np.float32, 2, [("power", 1, False)])
        with pytest.raises(ValueError, match="operand index 2"):
            F.chain_loop(np.float32, 2, [("add", 2, False)])
        with pytest.raises(ValueError, match="nargs"):
            F.chain_loop(np.float32, 0, [("add", 0, False)])


def _chain_reference(operands, steps):
    v = operands[0]
    with np.errstate(all="ignore"):
        for op, arg, swapped in steps:
            v = OPS[op](operands[arg], v) if swapped else OPS[op](v, operands[arg])
    return v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(12))
def test_chains_give_the_single_operations_bits(dtype, seed):
    rng = np.random.default_rng(seed)
    nargs = int(rng.integers(1, 5))
    nsteps = int(rng.integers(1, F.CHAIN_MAX + 1))
    steps = [(str(rng.choice(sorted(OPS))), int(rng.integers(0, nargs)), bool(rng.integers(2)))
             for _ in range(nsteps)]
    loop = F.chain_loop(dtype, nargs, steps)
    if not HAVE:
        assert loop is None
        return
    item = np.dtype(dtype).itemsize
    for n in (1, 5, 16, 63, 64, 127, 128, 129, 1000, 1024):
        broadcast = [bool(rng.integers(3) == 0) for _ in range(nargs)]
        strided = bool(rng.integers(4) == 0)
        arrays, views, steps_b = [], [], []
        for k in range(nargs):
            with np.errstate(over="ignore"):
                a = _values(dtype, 2 * n, seed * 100 + k) * np.asarray(0.5 + k, dtype)
            if broadcast[k]:
                arrays.append(a[:1])
                views.append(np.broadcast_to(a[:1], (n,)))
                steps_b.append(0)
            elif strided:
                arrays.append(a)
                views.append(a[::2][:n])
                steps_b.append(2 * item)
            else:
                arrays.append(a[:n])
                views.append(a[:n])
                steps_b.append(item)
        out = np.full(n + 3, 5, dtype)
        _call(loop, arrays + [out], n, steps_b + [item])
        _same_bits(out[:n], np.broadcast_to(_chain_reference(views, steps), (n,)))
        assert (out[n:] == 5).all()


def _jit_equals_eager(f, *args):
    want = f(*args)
    got = nx.jit(f)(*args)
    _same_bits(np.asarray(got), np.asarray(want))
    return got


def _chains_built(f, *args):
    """The chains' step lists of the kernels jit builds for f."""
    before = set(F._CHAINS)
    FP._LOOPS.clear()
    nx.jit(f)(*args)
    return [k[2] for k in set(F._CHAINS) - before]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jitted_arithmetic_runs_equal_eager_bit_for_bit(dtype):
    rng = np.random.default_rng(3)
    x = nx.asarray(_values(dtype, 3000, 1).reshape(3, 1000))
    y = nx.asarray(_values(dtype, 1000, 2))
    programs = [   # (x ** 3 is not here: jit's power by a small integer multiplies)
        lambda x, y: 0.5 * x * (1 + nx.tanh(0.7978845608 * (x + 0.044715 * (x * x * x)))),
        lambda x, y: ((x - y) / 3.0 - 2.0 / (y + 1.5)) * x,
        lambda x, y: 1.0 - (2.0 - (3.0 - x)) / (y * y),
        lambda x, y: nx.sum(x * 2.0 + y - 1.0, axis=1),
        lambda x, y: (x * 1.0001 + 0.5,) * 1 + (x * 3.0,),
    ]
    for f in programs:
        _jit_equals_eager(f, x, y)
    # a run longer than the chain's step limit is cut into several chains
    z = nx.asarray(rng.uniform(0.5, 1.5, 5000).astype(dtype))

    def long(v):
        for k in range(40):
            v = v * 1.01 + 0.001 if k % 2 else v / 1.003 - 0.002
        return v

    _jit_equals_eager(long, z)


def test_the_pass_chains_only_values_read_once():
    x = nx.asarray(np.linspace(-2, 2, 4096, dtype=np.float32))
    if not HAVE:
        assert _chains_built(lambda v: v * 2.0 + 1.0, x) == []
        return
    FP._LOOPS.clear()
    F._CHAINS.clear()
    chains = _chains_built(lambda v: (v * 2.0 + 1.0) / 3.0 - 0.25, x)
    assert chains == [(("multiply", 1, False), ("add", 2, False), ("divide", 3, False),
                       ("subtract", 4, False))]
    # a value read twice (or returned) ends its run: the loops then run it alone
    F._CHAINS.clear()

    def shared(v):
        a = v * 2.0 + 1.0
        return a * a - 3.0, a

    chains = _chains_built(shared, x)
    assert sorted(chains) == [(("multiply", 0, False), ("subtract", 1, False)),
                              (("multiply", 1, False), ("add", 2, False))]
    _jit_equals_eager(shared, x)
    # float32 with a float64 operand is not one dtype: no chain across the cast
    F._CHAINS.clear()
    w = nx.asarray(np.linspace(1, 2, 4096))
    assert _chains_built(lambda v, u: (v + 1.0) * 2.0 + u, x, w) == [
        (("add", 1, False), ("multiply", 2, False))]
    _jit_equals_eager(lambda v, u: (v + 1.0) * 2.0 + u, x, w)


def test_without_the_own_loops_the_values_are_the_same(monkeypatch):
    x = nx.asarray(_values(np.float32, 5000, 4))
    f = lambda v: 0.5 * v * (1 + nx.tanh(0.79788456 * (v + 0.044715 * v ** 3)))   # noqa: E731
    with_own = np.asarray(nx.jit(f)(x))
    monkeypatch.setattr(FP, "USE_ARITH_LOOPS", False)
    FP._LOOPS.clear()
    without = np.asarray(nx.jit(f)(x))
    FP._LOOPS.clear()
    _same_bits(with_own, without)
