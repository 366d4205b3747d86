"""jax_debug_nans / jax_debug_infs by the import rename: a primitive that makes a NaN (an
infinity) raises FloatingPointError naming it.  The messages are jax 0.10.2's (printed by
the same programs with ``jax`` in place of ``nx_rune``)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import nx_rune as jax
import nx_rune.numpy as jnp
from nx_rune import primitives as P
from nx_rune.compiler import api as jit_api

DEOPT = ("Invalid nan value encountered in the output of a jax.jit function. Calling the "
         "de-optimized version.")


@pytest.fixture
def nans_on():
    jax.config.update("jax_debug_nans", True)
    try:
        yield
    finally:
        jax.config.update("jax_debug_nans", False)
        jax.config.update("jax_debug_infs", False)
    assert P._interpreter.get() is None and not jit_api.debug_call_installed()


def _fpe(fn):
    with pytest.raises(FloatingPointError) as e:
        fn()
    return str(e.value)


@pytest.mark.parametrize("fn, prim", [
    (lambda: jnp.log(-1.), "log"),
    (lambda: jnp.sqrt(jnp.array([1., -1.])), "sqrt"),
    (lambda: jnp.array(0.) / jnp.array(0.), "div"),
    (lambda: jnp.array(jnp.inf) - jnp.inf, "sub"),
    (lambda: jax.vmap(jnp.log)(jnp.array([1., -1.])), "log"),
    (lambda: jax.grad(lambda x: jnp.sqrt(x) * 0)(-1.), "sqrt"),
])
def test_eager(nans_on, fn, prim):
    assert jax.config.jax_debug_nans is True
    assert _fpe(fn) == f"invalid value (nan) encountered in {prim}"


def test_eager_values_without_nans(nans_on):
    np.testing.assert_array_equal(np.asarray(jnp.arange(3) + 1), [1, 2, 3])
    # jax 0.10.2: grad of sqrt at 0 is inf, not a NaN: no error
    assert float(jax.grad(jnp.sqrt)(0.)) == np.inf
    # a NaN already in an input is found where an arithmetic primitive hands it on (jax
    # 0.10.2 names its input staging there, an operation nx_rune has not)
    assert _fpe(lambda: jnp.array(jnp.nan) + 1) == "invalid value (nan) encountered in add"


def test_jit_reruns_de_optimized(nans_on, capsys):
    def f(x):
        y = jnp.sin(x)
        return jnp.log(y)
    jf = jax.jit(f)
    np.testing.assert_allclose(float(jf(1.)), -0.17260379, rtol=1e-6)
    assert _fpe(lambda: jf(-1.)) == "invalid value (nan) encountered in log"
    assert DEOPT in capsys.readouterr().out


def test_jit_bad_value_the_eager_run_does_not_make(nans_on, capsys):
    jf = jax.jit(lambda x: x)      # no primitive runs eagerly: the NaN is an input
    msg = _fpe(lambda: jf(jnp.array([jnp.nan])))
    assert msg.startswith("invalid value (nan) encountered in jit(") and \
        "de-optimized function did not produce invalid values" in msg


def test_off_and_blocks():
    assert not jax.config.read("jax_debug_nans")
    assert np.isnan(float(jnp.log(-1.)))
    with jax.debug_nans(True):
        assert jax.config.jax_debug_nans
        assert _fpe(lambda: jnp.log(-1.)) == "invalid value (nan) encountered in log"
        with jax.debug_nans(False):
            assert np.isnan(float(jnp.log(-1.)))
        assert _fpe(lambda: jnp.log(-1.)) == "invalid value (nan) encountered in log"
    assert np.isnan(float(jnp.log(-1.)))
    assert P._interpreter.get() is None and not jit_api.debug_call_installed()

    @jax.debug_nans(True)
    def g(x):
        return jnp.log(x)
    assert _fpe(lambda: g(-1.)) == "invalid value (nan) encountered in log"
    assert np.isnan(float(jnp.log(-1.)))


def test_infs(nans_on):
    jax.config.update("jax_debug_nans", False)
    jax.config.update("jax_debug_infs", True)
    assert _fpe(lambda: jnp.array(1.) / 0.) == "invalid value (inf) encountered in div"
    assert _fpe(lambda: jnp.exp(jnp.array(1000.))) == "invalid value (inf) encountered in exp"
    assert _fpe(lambda: jax.jit(lambda x: jnp.exp(x) * 2)(1000.)) == \
        "invalid value (inf) encountered in exp"
    # jax 0.10.2: with only debug_infs on, a NaN passes
    assert np.isnan(float(jnp.log(-1.)))
    with jax.debug_infs(False):
        assert float(jnp.exp(jnp.array(1000.))) == np.inf


def test_bad_values():
    with pytest.raises(TypeError, match="expected True or False"):
        jax.config.update("jax_debug_nans", "yes")
    with pytest.raises(TypeError, match="new_val: expected True or False"):
        jax.debug_nans(1)
    with pytest.raises(TypeError, match="expected a function to decorate"):
        jax.debug_nans(True)(3)


def test_environment_variable():
    code = ("import nx_rune as nx\n"
            "print(nx.config.jax_debug_nans)\n"
            "try:\n    nx.log(nx.asarray(-1.0))\n"
            "except FloatingPointError as e:\n    print(e)\n")
    env = dict(os.environ, JAX_DEBUG_NANS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.stdout.splitlines() == ["True", "invalid value (nan) encountered in log"], \
        out.stderr


def test_nothing_installed_when_off():
    # the zero-cost promise: with both options off the eager operators keep their fast path
    # (no interpreter active) and jitted calls take no hook
    assert P._interpreter.get() is None and not jit_api.debug_call_installed()
    with jax.debug_nans(True):
        assert P._interpreter.get() is not None and jit_api.debug_call_installed()
    assert P._interpreter.get() is None and not jit_api.debug_call_installed()


def test_jit_under_grad(nans_on, capsys):
    # jax 0.10.2: "invalid value (nan) encountered in log"; grad at 2.0 is 0.5
    jf = jax.jit(jnp.log)
    assert _fpe(lambda: jax.grad(jf)(-1.)) == "invalid value (nan) encountered in log"
    assert DEOPT in capsys.readouterr().out
    np.testing.assert_allclose(float(jax.grad(jf)(2.)), 0.5)


def test_one_block_object_in_threads():
    import threading
    block = jax.debug_nans(True)
    seen = []

    def work():
        with block:
            try:
                jnp.log(jnp.asarray(-1.))
            except FloatingPointError as e:
                seen.append(str(e))
        seen.append(float(jnp.log(jnp.asarray(-1.))))
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(map(str, seen)) == sorted(["invalid value (nan) encountered in log"] * 4 +
                                            ["nan"] * 4)
    assert np.isnan(float(jnp.log(-1.)))      # the main thread never had it on
