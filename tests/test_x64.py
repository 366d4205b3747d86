"""x64 mode: ``nx.config.update("enable_x64", ...)``, ``nx.enable_x64`` blocks and
``NX_RUNE_ENABLE_X64``; the default dtypes, weak scalars, promotion and random draws of both
modes; the isolation of blocks between threads and asyncio tasks; and the small things users
hit (``zeros`` of a 0-d tensor, ``prod(dtype=)``, grad of a shape-(1,) output, autograd's
``check_grads(f)(x)``).

Golden dtypes and values were produced by JAX 0.10.2 on the same expressions (``jax.numpy`` in
place of ``nx``; ``jax.config.update("jax_enable_x64", False / True)``), not by nx_rune, so
these tests need no JAX.  Every test of a default runs in both modes.
"""
import asyncio
import math
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import nx_rune as nx
import nx_rune.random as nxr
from nx_rune import config

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODES = [False, True]


@pytest.fixture(autouse=True)
def _restore_process_setting():
    """Each test leaves the process-wide value as it found it (tests here change it)."""
    saved = config._GLOBAL_X64[0]
    yield
    config._GLOBAL_X64[0] = saved


def _arr(values, dt):
    return nx.asarray(np.array(values, dtype=dt))


# -- the defaults and promotion, against JAX ---------------------------------------------------

# expression -> (dtype in JAX's x32 mode, dtype in JAX's x64 mode)
JAX_DTYPES = {
    "asarray(1.5)": (lambda: nx.asarray(1.5), "float32", "float64"),
    "asarray([0.5, 1.0])": (lambda: nx.asarray([0.5, 1.0]), "float32", "float64"),
    "asarray([1, 2])": (lambda: nx.asarray([1, 2]), "int32", "int64"),
    "asarray(3)": (lambda: nx.asarray(3), "int32", "int64"),
    "asarray([1j])": (lambda: nx.asarray([1j]), "complex64", "complex128"),
    "asarray([True, 1])": (lambda: nx.asarray([True, 1]), "int32", "int64"),
    "asarray([1, 2.5])": (lambda: nx.asarray([1, 2.5]), "float32", "float64"),
    "asarray(np.float32(1))": (lambda: nx.asarray(np.float32(1)), "float32", "float32"),
    "zeros(3)": (lambda: nx.zeros(3), "float32", "float64"),
    "ones((2, 2))": (lambda: nx.ones((2, 2)), "float32", "float64"),
    "empty(3)": (lambda: nx.empty(3), "float32", "float64"),
    "eye(2)": (lambda: nx.eye(2), "float32", "float64"),
    "identity(2)": (lambda: nx.identity(2), "float32", "float64"),
    "full(3, 1)": (lambda: nx.full(3, 1), "int32", "int64"),
    "full(3, 1.0)": (lambda: nx.full(3, 1.0), "float32", "float64"),
    "full(3, 1j)": (lambda: nx.full(3, 1j), "complex64", "complex128"),
    "full(3, True)": (lambda: nx.full(3, True), "bool", "bool"),
    "zeros_like([1, 2])": (lambda: nx.zeros_like(nx.asarray([1, 2])), "int32", "int64"),
    "arange(3)": (lambda: nx.arange(3), "int32", "int64"),
    "arange(3.0)": (lambda: nx.arange(3.0), "float32", "float64"),
    "arange(0, 1, 0.25)": (lambda: nx.arange(0, 1, 0.25), "float32", "float64"),
    "linspace(0, 1, 5)": (lambda: nx.linspace(0, 1, 5), "float32", "float64"),
    "linspace(0, 1j, 3)": (lambda: nx.linspace(0, 1j, 3), "complex64", "complex128"),
    "indices((2, 3))": (lambda: nx.indices((2, 3)), "int32", "int64"),
    "int32 + 1.5": (lambda: _arr([1, 2], np.int32) + 1.5, "float32", "float64"),
    "int8 + 1.5": (lambda: _arr([1, 2], np.int8) + 1.5, "float32", "float64"),
    "int32 + 1": (lambda: _arr([1, 2], np.int32) + 1, "int32", "int32"),
    "bool + 1": (lambda: _arr([True], np.bool_) + 1, "int32", "int64"),
    "bool + 1.5": (lambda: _arr([True], np.bool_) + 1.5, "float32", "float64"),
    "bool + 1j": (lambda: _arr([True], np.bool_) + 1j, "complex64", "complex128"),
    "int32 + 1j": (lambda: _arr([1], np.int32) + 1j, "complex64", "complex128"),
    "uint8 * 2j": (lambda: _arr([1], np.uint8) * 2j, "complex64", "complex128"),
    "float32 + 1j": (lambda: _arr([1], np.float32) + 1j, "complex64", "complex64"),
    "float16 + 1j": (lambda: _arr([1], np.float16) + 1j, "complex64", "complex64"),
    "float32 * 2.5": (lambda: _arr([1], np.float32) * 2.5, "float32", "float32"),
    "float16 * 2.5": (lambda: _arr([1], np.float16) * 2.5, "float16", "float16"),
    "float32 + np.float64(1)": (lambda: _arr([1], np.float32) + np.float64(1), "float32",
                                "float64"),
    "2.0 ** int32": (lambda: 2.0 ** _arr([1, 2], np.int32), "float32", "float64"),
    "add(1, 2)": (lambda: nx.add(1, 2), "int32", "int64"),
    "multiply(1.5, 2)": (lambda: nx.multiply(1.5, 2), "float32", "float64"),
    "add(1j, 1)": (lambda: nx.add(1j, 1), "complex64", "complex128"),
    "log(2 * pi)": (lambda: nx.log(2 * math.pi), "float32", "float64"),
    "sqrt(2)": (lambda: nx.sqrt(2), "float32", "float64"),
    "sin(int32)": (lambda: nx.sin(_arr([1, 2], np.int32)), "float32", "float32"),
    "sin(int8)": (lambda: nx.sin(_arr([1, 2], np.int8)), "float32", "float32"),
    "sin(bool)": (lambda: nx.sin(_arr([True], np.bool_)), "float32", "float32"),
    "sin(arange(3))": (lambda: nx.sin(nx.arange(3)), "float32", "float64"),
    "int32 / int32": (lambda: _arr([1, 2], np.int32) / _arr([2, 2], np.int32), "float32",
                      "float32"),
    "arange(4) / 2": (lambda: nx.arange(4) / 2, "float32", "float64"),
    "mean(int32)": (lambda: nx.mean(_arr([1, 2], np.int32)), "float32", "float32"),
    "mean(arange(4))": (lambda: nx.mean(nx.arange(4)), "float32", "float64"),
    "mean([1, 2, 4])": (lambda: nx.mean(nx.asarray([1, 2, 4])), "float32", "float64"),
    "var(arange(4))": (lambda: nx.var(nx.arange(4)), "float32", "float64"),
    "sum(int8)": (lambda: nx.sum(_arr([1, 2], np.int8)), "int32", "int64"),
    "sum(uint8)": (lambda: nx.sum(_arr([1, 2], np.uint8)), "uint32", "uint64"),
    "sum(bool)": (lambda: nx.sum(_arr([True, False], np.bool_)), "int32", "int64"),
    "sum(int32)": (lambda: nx.sum(_arr([1, 2], np.int32)), "int32", "int64"),
    "prod(int32)": (lambda: nx.prod(_arr([1, 2], np.int32)), "int32", "int64"),
    "prod(int32, dtype=float32)": (lambda: nx.prod(_arr([1, 2], np.int32), dtype=np.float32),
                                   "float32", "float32"),
    "sum(arange(3))": (lambda: nx.sum(nx.arange(3)), "int32", "int64"),
    "argmax": (lambda: nx.argmax(nx.asarray([1.0, 3.0, 2.0])), "int32", "int64"),
    "argmin(axis=0)": (lambda: nx.argmin(nx.asarray([[1.0, 3.0], [0.0, 4.0]]), axis=0),
                       "int32", "int64"),
    "argsort": (lambda: nx.argsort(nx.asarray([1.0, 3.0, 2.0])), "int32", "int64"),
    "nonzero": (lambda: nx.nonzero(nx.asarray([0.0, 3.0, 2.0]))[0], "int32", "int64"),
    "count_nonzero": (lambda: nx.count_nonzero(nx.asarray([0.0, 3.0, 2.0])), "int32", "int64"),
    "result_type(int8, 1.0)": (lambda: nx.result_type(np.int8, 1.0), "float32", "float64"),
    "result_type(int32, 1j)": (lambda: nx.result_type(np.int32, 1j), "complex64", "complex128"),
    "result_type(float32, 1j)": (lambda: nx.result_type(np.float32, 1j), "complex64",
                                 "complex64"),
    "result_type(bool, 1)": (lambda: nx.result_type(np.bool_, 1), "int32", "int64"),
    "result_type(float16, 1.0)": (lambda: nx.result_type(np.float16, 1.0), "float16",
                                  "float16"),
}


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
@pytest.mark.parametrize("name", list(JAX_DTYPES))
def test_dtype_as_jax(name, x64):
    fn, want32, want64 = JAX_DTYPES[name]
    with nx.enable_x64(x64):
        out = fn()
    dt = out if isinstance(out, np.dtype) else out.dtype
    assert dt == np.dtype(want64 if x64 else want32), name


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_array_api_default_dtypes(x64):
    # jnp.__array_namespace_info__().default_dtypes() in each mode
    want = ({"real floating": "float64", "complex floating": "complex128", "integral": "int64",
             "indexing": "int64"} if x64 else
            {"real floating": "float32", "complex floating": "complex64", "integral": "int32",
             "indexing": "int32"})
    with nx.enable_x64(x64):
        got = nx.__array_namespace_info__().default_dtypes()
    assert got == {k: np.dtype(v) for k, v in want.items()}


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_numpy_data_keeps_its_dtype(x64):
    """nx_rune's rule in both modes (JAX's x32 mode would narrow these to 32 bits)."""
    with nx.enable_x64(x64):
        assert nx.asarray(np.array([0.1])).dtype == np.float64
        assert nx.asarray(np.array([1], np.int64)).dtype == np.int64
        assert nx.asarray(np.array([0.5], np.float32)).dtype == np.float32
        assert (_arr([1], np.float32) + _arr([1], np.float32)).dtype == np.float32
        # tri: the default float dtype (JAX's tri alone keeps float32 in x64 mode)
        assert nx.tri(2).dtype == (np.float64 if x64 else np.float32)


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_values_are_full_precision_in_x64(x64):
    """The issue's case: Python floats, lists and default creations are float64 in x64 mode,
    so they equal NumPy's float64 values exactly; with x64 off they are their float32
    roundings."""
    dt = np.float64 if x64 else np.float32
    with nx.enable_x64(x64):
        cases = [
            (nx.log(2 * math.pi), np.log(np.asarray(2 * math.pi, dt))),
            (nx.asarray([0.1, 1 / 3]), np.asarray([0.1, 1 / 3], dt)),
            (nx.linspace(0.0, 1.0, 7), np.linspace(0.0, 1.0, 7).astype(dt)),
            (nx.arange(0.0, 1.0, 0.1), np.arange(0.0, 1.0, 0.1).astype(dt)),
            (nx.full((2,), 1 / 3), np.full((2,), 1 / 3, dt)),
            (nx.asarray([1, 2]) / 3, np.asarray([1, 2]).astype(dt) / dt(3)),
            (nx.mean(nx.asarray([1, 2, 2])), np.asarray(5 / 3, dt)),
        ]
        for got, want in cases:
            assert got.dtype == dt
            np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_an_autograd_program_in_x64_matches_float64(x64):
    """A Gaussian negative log-likelihood and its gradient written the autograd way (Python
    floats, lists, zeros, linspace, log(2 pi)): in x64 mode it agrees with float64 NumPy to
    rounding; with x64 off to float32 precision only."""
    data = [0.3, -1.2, 2.5, 0.7, 1.9]

    def nll(params):
        mu, log_sigma = params[0], params[1]
        x = nx.asarray(data)
        z = (x - mu) / nx.exp(log_sigma)
        return nx.sum(0.5 * z ** 2 + log_sigma + 0.5 * nx.log(2 * math.pi))

    with nx.enable_x64(x64):
        params = nx.zeros(2) + nx.asarray([0.5, 0.1])
        value, g = nx.value_and_grad(nll)(params)
    x = np.asarray(data)
    mu, ls = 0.5, 0.1
    z = (x - mu) / np.exp(ls)
    want = np.sum(0.5 * z ** 2 + ls + 0.5 * np.log(2 * np.pi))
    want_g = np.array([-np.sum(z) / np.exp(ls), np.sum(1 - z ** 2)])
    assert value.dtype == g.dtype == (np.float64 if x64 else np.float32)
    tol = 1e-14 if x64 else 1e-6
    np.testing.assert_allclose(float(value), want, rtol=tol)
    np.testing.assert_allclose(g.numpy(), want_g, rtol=tol * 10)
    if not x64:   # float32 really is coarser: the reason for the mode
        assert abs(float(value) - want) > 1e-12


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_grad_of_python_numbers(x64):
    with nx.enable_x64(x64):
        g = nx.grad(lambda x: x ** 3 + nx.sin(x))(2.0)
        h = nx.grad(nx.grad(lambda x: x ** 3))(1.5)
    dt = np.float64 if x64 else np.float32
    assert g.dtype == h.dtype == dt
    np.testing.assert_allclose(float(g), 12 + math.cos(2.0), rtol=1e-15 if x64 else 1e-6)
    assert float(h) == 9.0


# -- random: JAX's x64 draws -----------------------------------------------------------------

K42 = np.array([0, 42], np.uint32)
# (nx call, dtype, values): jax.random with the same arguments under jax_enable_x64
X64_RANDOM = {
    "key(42)": (lambda: nxr.key(42), "uint32", [0, 42]),
    "PRNGKey(-1)": (lambda: nxr.PRNGKey(-1), "uint32", [4294967295, 4294967295]),
    "PRNGKey(2**40+7)": (lambda: nxr.PRNGKey(2**40 + 7), "uint32", [256, 7]),
    "bits": (lambda: nxr.bits(K42, (3,)), "uint64",
             [7871734211187709741, 276886910877598708, 10591095138341673235]),
    "uniform": (lambda: nxr.uniform(K42, (3,)), "float64",
                [0.4267275666499091, 0.015010069515314584, 0.5741444178995352]),
    "uniform(-2, 3)": (lambda: nxr.uniform(K42, (3,), minval=-2, maxval=3), "float64",
                       [0.13363783324954537, -1.924949652423427, 0.8707220894976759]),
    "normal": (lambda: nxr.normal(K42, (3,)), "float64",
               [-0.18471174528191162, -2.169824560397754, 0.18693555179382582]),
    "normal complex": (lambda: nxr.normal(K42, (2,), dtype=np.complex128), "complex128",
                       [-0.5093295292642132 + 0.45954304860759587j,
                        -0.18428781404443714 + 0.08377702715980621j]),
    "gumbel": (lambda: nxr.gumbel(K42, (3,)), "float64",
               [0.16062720630382138, -1.4348544993307841, 0.5890136500161952]),
    "truncated_normal": (lambda: nxr.truncated_normal(K42, -1, 2, (3,)), "float64",
                         [0.01998452592513169, -0.9504476695340623, 0.32827144083703297]),
    "randint": (lambda: nxr.randint(K42, (4,), 0, 10), "int64", [5, 8, 3, 1]),
    "bernoulli(0.3)": (lambda: nxr.bernoulli(K42, 0.3, (6,)), "bool",
                       [False, True, False, False, False, False]),
    "categorical": (lambda: nxr.categorical(K42, nx.asarray([0.1, 0.5, 0.2]), shape=(5,)),
                    "int64", [2, 1, 1, 1, 1]),
    "categorical float32": (lambda: nxr.categorical(K42, np.array([0.1, 0.5, 0.2], np.float32),
                                                    shape=(5,)), "int64", [1, 2, 1, 2, 0]),
    "permutation(6)": (lambda: nxr.permutation(K42, 6), "int64", [4, 2, 5, 3, 0, 1]),
    "permutation(arange(6))": (lambda: nxr.permutation(K42, nx.arange(6)), "int64",
                               [4, 2, 5, 3, 0, 1]),
    "choice(10)": (lambda: nxr.choice(K42, 10, (4,)), "int64", [5, 8, 3, 1]),
    "choice(10, replace=False)": (lambda: nxr.choice(K42, 10, (4,), replace=False), "int64",
                                  [7, 4, 2, 5]),
    "choice(4, p)": (lambda: nxr.choice(K42, 4, (5,), p=nx.asarray([0.1, 0.2, 0.3, 0.4])),
                     "int64", [2, 3, 2, 1, 2]),
    "choice(4, p, replace=False)": (lambda: nxr.choice(K42, 4, (3,), replace=False,
                                                       p=nx.asarray([0.1, 0.2, 0.3, 0.4])),
                                    "int64", [3, 2, 0]),
    "choice(array)": (lambda: nxr.choice(K42, nx.asarray([1.5, 2.5, 3.5]), (4,)), "float64",
                      [1.5, 2.5, 1.5, 2.5]),
    "split": (lambda: nxr.split(K42), "uint32", [[1832780943, 270669613],
                                                 [64467757, 2916123636]]),
    "fold_in": (lambda: nxr.fold_in(K42, 3), "uint32", [3134548294, 894150801]),
    "uniform float32": (lambda: nxr.uniform(K42, (3,), dtype=np.float32), "float32",
                        [0.48870956897735596, 0.6797971725463867, 0.6162714958190918]),
    "randint int32": (lambda: nxr.randint(K42, (4,), 0, 10, dtype=np.int32), "int32",
                      [4, 4, 1, 9]),
}


@pytest.mark.parametrize("name", list(X64_RANDOM))
def test_random_in_x64_is_jax_x64(name):
    fn, dtype, values = X64_RANDOM[name]
    with nx.enable_x64():
        out = fn()
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.numpy(), np.array(values, dtype))


# the same calls with x64 off: JAX's x32 defaults (values in tests/test_random.py)
X32_RANDOM_DTYPES = {
    "bits": (lambda: nxr.bits(K42, (3,)), "uint32"),
    "uniform": (lambda: nxr.uniform(K42, (3,)), "float32"),
    "normal": (lambda: nxr.normal(K42, (3,)), "float32"),
    "gumbel": (lambda: nxr.gumbel(K42, (3,)), "float32"),
    "truncated_normal": (lambda: nxr.truncated_normal(K42, -1, 2, (3,)), "float32"),
    "randint": (lambda: nxr.randint(K42, (4,), 0, 10), "int32"),
    "categorical": (lambda: nxr.categorical(K42, nx.asarray([0.1, 0.5])), "int32"),
    "permutation(6)": (lambda: nxr.permutation(K42, 6), "int32"),
    "choice(10)": (lambda: nxr.choice(K42, 10, (4,)), "int32"),
    "choice(4, p)": (lambda: nxr.choice(K42, 4, (5,), p=nx.asarray([0.1, 0.2, 0.3, 0.4])),
                     "int32"),
}


@pytest.mark.parametrize("name", list(X32_RANDOM_DTYPES))
def test_random_defaults_with_x64_off(name):
    fn, dtype = X32_RANDOM_DTYPES[name]
    with nx.enable_x64(False):
        assert fn().dtype == np.dtype(dtype)


def test_random_x32_draws_unchanged_by_the_mode_of_other_calls():
    # jax.random.uniform(PRNGKey(42), (3,)) in x32 mode; PRNGKey(-1) is [0, 2**32 - 1] there
    with nx.enable_x64(False):
        np.testing.assert_array_equal(nxr.uniform(K42, (3,)).numpy(),
                                      np.array([0.48870957, 0.6797972, 0.6162715], np.float32))
        np.testing.assert_array_equal(nxr.PRNGKey(-1).numpy(), [0, 4294967295])
        np.testing.assert_array_equal(nxr.randint(K42, (4,), 0, 10).numpy(), [4, 4, 1, 9])


def test_random_choice_population_limits():
    with nx.enable_x64(False):
        with pytest.raises(ValueError, match="a: .* does not fit in int32"):
            nxr.choice(K42, 2**31, (2,))
    with nx.enable_x64():
        out = nxr.choice(K42, 2**31, (2,))
        assert out.dtype == np.int64 and np.all((out.numpy() >= 0) & (out.numpy() < 2**31))
        with pytest.raises(ValueError, match="a: .* does not fit in int64"):
            nxr.choice(K42, 2**63, (2,))


# -- the setting: API, errors, scopes ----------------------------------------------------------

def test_update_is_process_wide_and_read_back():
    config.update("enable_x64", True)
    assert config.read("enable_x64") is True and nx.zeros(1).dtype == np.float64
    seen = []
    t = threading.Thread(target=lambda: seen.append(nx.zeros(1).dtype))
    t.start()
    t.join()
    assert seen == [np.float64]       # a new thread sees the process-wide value
    config.update("jax_enable_x64", False)   # JAX's name, for ported code
    assert config.read("jax_enable_x64") is False and nx.zeros(1).dtype == np.float32
    config.update("enable_x64", np.bool_(True))
    assert nx.config.read("enable_x64") is True


def test_config_bad_input():
    with pytest.raises(ValueError, match="name: unknown config option 'enable_x32'.*enable_x64"):
        config.update("enable_x32", True)
    with pytest.raises(ValueError, match="'jax_no_such_option'"):
        nx.config.read("jax_no_such_option")
    with pytest.raises(TypeError, match="name: expected an option name"):
        config.update(64, True)
    with pytest.raises(TypeError, match="value: expected True or False, got 1"):
        config.update("enable_x64", 1)
    with pytest.raises(TypeError, match="new_val: expected True or False, got 'yes'"):
        nx.enable_x64("yes")
    with pytest.raises(TypeError, match="enable_x64: expected a function to decorate"):
        nx.enable_x64()(42)
    assert config.read("enable_x64") in (True, False)


def test_blocks_nest_and_override_the_process_value():
    config.update("enable_x64", False)
    with nx.enable_x64():
        assert nx.zeros(1).dtype == np.float64
        with nx.enable_x64(False):
            assert nx.asarray(1.0).dtype == np.float32
            assert config.read("enable_x64") is False
        assert nx.asarray(1.0).dtype == np.float64
        config.update("enable_x64", False)       # the block still wins in its context
        assert nx.asarray(1.0).dtype == np.float64
    assert nx.asarray(1.0).dtype == np.float32
    config.update("enable_x64", True)
    with nx.enable_x64(False):
        assert nx.arange(2).dtype == np.int32
    assert nx.arange(2).dtype == np.int64


def test_block_restored_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with nx.enable_x64(not config.x64_enabled()):
            1 / 0
    before = config.x64_enabled()
    assert nx.zeros(1).dtype == (np.float64 if before else np.float32)


def test_decorator_sync_and_async():
    @nx.enable_x64()
    def make():
        return nx.zeros(2)

    @nx.enable_x64(False)
    async def make_async():
        await asyncio.sleep(0)
        return nx.zeros(2)

    config.update("enable_x64", False)
    assert make().dtype == np.float64 and make.__name__ == "make"
    assert nx.zeros(1).dtype == np.float32
    config.update("enable_x64", True)
    assert asyncio.run(make_async()).dtype == np.float32
    assert nx.zeros(1).dtype == np.float64


def test_blocks_do_not_leak_between_threads():
    """Two threads at once, one inside a block: each sees its own setting, both ways."""
    for process_value in (False, True):
        config.update("enable_x64", process_value)
        barrier = threading.Barrier(2, timeout=10)
        seen = {}

        def inside():
            with nx.enable_x64(not process_value):
                barrier.wait()
                seen["inside"] = nx.linspace(0, 1, 3).dtype
                barrier.wait()
            seen["inside after"] = nx.linspace(0, 1, 3).dtype

        def outside():
            barrier.wait()
            seen["outside"] = nx.linspace(0, 1, 3).dtype
            barrier.wait()

        threads = [threading.Thread(target=inside), threading.Thread(target=outside)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        on, off = np.dtype(np.float64), np.dtype(np.float32)
        base = on if process_value else off
        other = off if process_value else on
        assert seen == {"inside": other, "outside": base, "inside after": base}


def test_update_in_a_worker_thread_or_task_stays_there():
    """config.update made in a worker thread or an asyncio task is per context (no leak into
    the main thread, other threads or sibling tasks); made at the top of the program it is
    process-wide and reaches threads started afterwards, as jax.config.update."""
    config.update("enable_x64", False)
    barrier = threading.Barrier(2, timeout=10)
    seen = {}

    def setter():
        config.update("enable_x64", True)
        barrier.wait()
        seen["setter"] = nx.zeros(1).dtype
        barrier.wait()

    def other():
        barrier.wait()
        seen["other"] = nx.zeros(1).dtype
        barrier.wait()

    threads = [threading.Thread(target=setter), threading.Thread(target=other)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert seen == {"setter": np.dtype(np.float64), "other": np.dtype(np.float32)}
    assert nx.zeros(1).dtype == np.float32 and not config.read("enable_x64")

    async def main():
        async def setter_task():
            config.update("enable_x64", True)
            await asyncio.sleep(0)
            return nx.zeros(1).dtype

        async def sibling():
            await asyncio.sleep(0)
            return nx.zeros(1).dtype
        return await asyncio.gather(setter_task(), sibling())

    assert asyncio.run(main()) == [np.dtype(np.float64), np.dtype(np.float32)]
    assert nx.zeros(1).dtype == np.float32

    config.update("enable_x64", True)       # top of the program: process-wide
    try:
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("dt", nx.zeros(1).dtype))
        th.start()
        th.join()
        assert out["dt"] == np.float64
    finally:
        config.update("enable_x64", False)


def test_one_instance_shared_by_threads():
    config.update("enable_x64", False)
    block = nx.enable_x64()
    first_out, second_in = threading.Event(), threading.Event()
    seen = {}

    def first():
        with block:
            second_in.wait(10)
        seen["first after"] = nx.zeros(1).dtype
        first_out.set()

    def second():
        with block:
            second_in.set()
            first_out.wait(10)       # the first thread has left its block by now
            seen["second inside"] = nx.zeros(1).dtype
        seen["second after"] = nx.zeros(1).dtype

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"first after": np.float32, "second inside": np.float64,
                    "second after": np.float32}


def test_exit_in_another_context_is_refused():
    block = nx.enable_x64()
    block.__enter__()
    errors = []

    def other():
        try:
            block.__exit__(None, None, None)
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    block.__exit__(None, None, None)
    assert errors and "without a matching __enter__" in errors[0]


def test_blocks_do_not_leak_between_asyncio_tasks():
    async def main():
        entered, looked = asyncio.Event(), asyncio.Event()
        seen = {}

        async def in_block():
            with nx.enable_x64():
                entered.set()
                await looked.wait()       # the other task runs while this one is inside
                seen["in block"] = nx.asarray([0.5]).dtype

        async def plain():
            await entered.wait()
            seen["plain"] = nx.asarray([0.5]).dtype
            looked.set()

        await asyncio.gather(in_block(), plain())
        seen["main"] = nx.asarray([0.5]).dtype
        return seen

    config.update("enable_x64", False)
    assert asyncio.run(main()) == {"in block": np.float64, "plain": np.float32,
                                   "main": np.float32}


def _run(env_value, code="import nx_rune as nx; print(nx.zeros(1).dtype, "
                         "nx.random.uniform(nx.random.key(0)).dtype)"):
    env = dict(os.environ)
    env.pop("NX_RUNE_ENABLE_X64", None)
    if env_value is not None:
        env["NX_RUNE_ENABLE_X64"] = env_value
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


@pytest.mark.parametrize("value,want", [(None, "float32"), ("1", "float64"), ("true", "float64"),
                                        ("ON", "float64"), ("0", "float32"), ("no", "float32"),
                                        ("", "float32")])
def test_environment_variable(value, want):
    r = _run(value)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [want, want]


def test_environment_variable_bad_value():
    r = _run("maybe")
    assert r.returncode != 0
    assert "ValueError: NX_RUNE_ENABLE_X64: expected 1/0" in r.stderr and "'maybe'" in r.stderr


# -- small things users hit ----------------------------------------------------------------

@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_zeros_of_a_0d_int_tensor(x64):
    with nx.enable_x64(x64):
        n = nx.asarray(3)                  # int32, or int64 in x64 mode
        assert nx.zeros(n).shape == (3,)
        assert nx.ones((n, nx.asarray(2))).shape == (3, 2)
        assert nx.zeros(nx.sum(nx.asarray([1, 1]))).shape == (2,)
        assert nx.full(n, 2.0).numpy().tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(TypeError, match="shape"):
            nx.zeros(nx.asarray(3.0))
        with pytest.raises(ValueError, match="shape: negative dimension"):
            nx.zeros(nx.asarray(-1))


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_prod_with_dtype(x64):
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    with nx.enable_x64(x64):
        x = nx.asarray(a)
        for dt in (np.float32, np.float64, np.int64, np.complex64):
            got = nx.prod(x, dtype=dt)
            assert got.dtype == np.dtype(dt)
            np.testing.assert_array_equal(got.numpy(), np.prod(a, dtype=dt))
        np.testing.assert_array_equal(nx.prod(x, axis=1, dtype=np.float64).numpy(),
                                      np.prod(a, axis=1, dtype=np.float64))
        assert x.prod(dtype=np.int8).dtype == np.int8
        # differentiable through the cast
        g = nx.grad(lambda v: nx.prod(v, dtype=np.float64))(nx.asarray([2.0, 3.0, 4.0]))
        np.testing.assert_allclose(g.numpy(), [12.0, 8.0, 6.0])
        with pytest.raises(TypeError, match="dtype"):
            nx.prod(x, dtype="not a dtype")


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_grad_of_a_shape_1_output_names_the_fix(x64):
    with nx.enable_x64(x64):
        x = nx.asarray([1.0, 2.0])
        with pytest.raises(TypeError, match=r"shape \(1,\): return out\[0\] or out\.sum\(\)"):
            nx.grad(lambda v: nx.sum(v * v, keepdims=True)[:1])(x)
        with pytest.raises(TypeError, match=r"shape \(1, 1\).*out\.sum\(\)"):
            nx.grad(lambda v: nx.reshape(nx.sum(v), (1, 1)))(x)
        with pytest.raises(TypeError, match=r"shape \(2,\).*nx\.vjp or nx\.jacrev"):
            nx.grad(lambda v: v * v)(x)
        # the fixes the message names work
        g0 = nx.grad(lambda v: nx.reshape(nx.sum(v * v), (1,))[0])(x)
        g1 = nx.grad(lambda v: nx.reshape(nx.sum(v * v), (1,)).sum())(x)
        np.testing.assert_allclose(g0.numpy(), [2.0, 4.0])
        np.testing.assert_allclose(g1.numpy(), [2.0, 4.0])


def test_check_grads_autograd_form_names_the_nx_form():
    f = lambda x: nx.sin(x) * x  # noqa: E731
    with pytest.raises(TypeError, match=r"nx\.check_grads\(f, \(x,\), order=1\)"):
        nx.check_grads(f)(np.array([0.5]))
    with pytest.raises(TypeError, match=r"nx\.check_grads\(f, \(x,\), order=2\)"):
        nx.check_grads(f, order=2)
    nx.check_grads(f, (np.array([0.5, 1.5]),), order=2)   # the form the message shows


@pytest.mark.parametrize("x64", MODES, ids=["x32", "x64"])
def test_porting_notes_hold(x64):
    """The README's "Porting from JAX / autograd / NumPy" differences, and their fixes."""
    with nx.enable_x64(x64):
        i32, f32 = _arr([1, 2], np.int32), _arr([1, 2], np.float32)
        assert (i32 + f32).dtype == np.float32                        # JAX's, by kind
        assert (i32 + _arr([1j], np.complex64)).dtype == np.complex64
        nx.config.update("dtype_promotion", "numpy")                 # NumPy's throughout
        try:
            assert (i32 + f32).dtype == np.float64
            assert (i32 + _arr([1j], np.complex64)).dtype == np.complex128
        finally:
            nx.config.update("dtype_promotion", "jax")
        assert (_arr([1], np.uint64) + _arr([1], np.int64)).dtype == np.float64
        assert nx.zeros(2, dtype=float).dtype == np.float64
        assert nx.asarray(np.array([0.5]), nx.float32).dtype == np.float32
        assert nx.tri(2, dtype=nx.float32).dtype == np.float32
        assert nx.searchsorted(nx.asarray([1.0, 2.0]), 1.5).dtype == (
            np.int64 if x64 else np.int32)
        i8 = _arr([1, 2], np.int8)
        assert nx.cumsum(i8).dtype == (np.int64 if x64 else np.int32)
        assert nx.cumsum(i8, dtype=i8.dtype).dtype == np.int8
        assert nx.sum(i32, dtype=nx.int64).dtype == np.int64
        assert nx.mean(i32.astype(nx.float64)).dtype == np.float64
        assert (i8.astype(nx.float64) * 0.5).dtype == np.float64
        key = nxr.key(0)
        assert key.dtype == np.uint32 and key.shape == (2,)
        np.testing.assert_array_equal(key.numpy(), nxr.PRNGKey(0).numpy())
        # elementwise_grad / holomorphic_grad equivalents
        x = nx.asarray(np.array([0.3, 1.2]))
        np.testing.assert_allclose(nx.grad(lambda v: nx.sum(nx.sin(v)))(x).numpy(),
                                   np.cos([0.3, 1.2]))
        assert complex(nx.grad(lambda z: z * z, holomorphic=True)(1 + 1j)) == 2 + 2j
