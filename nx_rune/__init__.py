"""nx_rune: NumPy-like arrays with composable automatic differentiation.

``import nx_rune as nx``; see the README for a tour.
"""
from nx_rune import errors, frontend, primitives, random
from nx_rune.dtypes import (bool_, complex64, complex128, float16, float32, float64, int8, int16,
                            int32, int64, uint8, uint16, uint32, uint64)
from nx_rune.frontend import *  # noqa: F401,F403
from nx_rune.frontend import abs, all, any, max, min, sum  # noqa: F401  (shadow builtins on purpose)
from nx_rune.tensor import Tensor
from nx_rune import autodiff  # noqa: E402
from nx_rune.autodiff import *  # noqa: F401,F403,E402
from nx_rune import flatten_util, optimizers, tree_util  # noqa: E402

# -- the Array API namespace: version, inspection, constants, the dtype under its standard name
import math as _math  # noqa: E402

from nx_rune.info import __array_namespace_info__  # noqa: E402,F401

__array_api_version__ = "2024.12"
e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None
bool = bool_  # noqa: A001  (the standard's name; nx.bool is numpy's bool dtype, as nx.bool_)

__version__ = "0.1.0"

# namespaces: FFT, linear algebra, SciPy-style functions; run-time settings (x64 mode); data
# parallelism (Ray and Dask are imported only when a DataParallel is made)
from nx_rune import config, distributed, fft, linalg, scipy  # noqa: E402
from nx_rune.config import enable_x64, get_num_threads, set_num_threads  # noqa: E402,F401

# -- the compiler (nx.jit, nx.make_jaxpr) and lax control flow (nx.lax)
from nx_rune.compiler import jit, make_jaxpr  # noqa: E402,F401
from nx_rune import compiler, lax  # noqa: E402,F401

# dtypes usable as NumPy's scalar types: nx.float64(3), nx.int64(x) convert (nx_rune.scalar_types)
from nx_rune.scalar_types import SCALAR_TYPES as _SCALAR_TYPES  # noqa: E402

globals().update(_SCALAR_TYPES)
bool = bool_  # noqa: A001,F811
del _SCALAR_TYPES

# -- JAX's transform API beyond jit: abstract evaluation, stages, devices, debug printing
from nx_rune.compiler.api import eval_shape  # noqa: E402,F401
from nx_rune.compiler.stages import ShapeDtypeStruct, typeof  # noqa: E402,F401
from nx_rune.placement import (block_until_ready, default_backend, device_count,  # noqa: E402,F401
                             device_get, device_put, devices, local_device_count,
                             local_devices, process_count, process_index)
from nx_rune import debug  # noqa: E402,F401
# JAX's jax_debug_nans / jax_debug_infs: the checking, and its context managers
from nx_rune.config_nans import debug_infs, debug_nans  # noqa: E402,F401
from nx_rune.autodiff.jacobians import jacobian  # noqa: E402,F401

# JAX's module names on nx_rune, for programs ported by renaming ``jax`` to ``nx_rune``:
# nx.numpy (this namespace's array functions), nx.nn (activations, initializers), nx.tree
# (pytree functions), nx.example_libraries (optimizers, stax); nx.ndarray is the array class
from nx_rune import example_libraries, nn, numpy, tree  # noqa: E402,F401
from nx_rune.tensor import ArrayBase as ndarray  # noqa: E402,F401

# jax.Array (the array type of annotations and isinstance checks: a Tensor, or a tracer under a
# transformation) and jax.named_scope (a name for the operations in a block; JAX records it in
# the compiled program's metadata only, nx_rune's programs carry no names: a no-op)
from nx_rune.tensor import ArrayBase as Array  # noqa: E402,F401
from nx_rune.placement import named_scope  # noqa: E402,F401
# jax.sharding (one device: x.sharding, x.devices(), x.addressable_shards) and jax.Shard
from nx_rune import sharding  # noqa: E402,F401
from nx_rune.sharding import Shard  # noqa: E402,F401
# jax.linear_transpose, jax.fwd_and_bwd and jax.effects_barrier
from nx_rune.transposition import fwd_and_bwd, linear_transpose  # noqa: E402,F401
from nx_rune.placement import effects_barrier  # noqa: E402,F401
# jax.new_ref / jax.freeze / jax.Ref: mutable array references
from nx_rune.refs import Ref, freeze, new_ref  # noqa: E402,F401

# numpy.trapezoid (the trapezoidal rule), the same function as nx.scipy.integrate.trapezoid
from nx_rune.scipy.integrate import trapezoid  # noqa: E402,F401
# numpy.convolve and numpy.correlate (1-D), on nx.scipy.signal's direct convolution
from nx_rune.convolution import convolve, correlate  # noqa: E402,F401
# jax.test_util (check_grads, check_jvp, check_vjp)
from nx_rune import test_util  # noqa: E402,F401

# dir(nx) lists the public API: the implementation's modules stay importable but unlisted
_INTERNAL_MODULES = frozenset({"backend", "compiler", "dtypes", "frontend", "info", "ops",
                               "placement", "scalar_types", "tensor", "writes",
                               "parallel", "callbacks", "functional", "convolution",
                               "transposition", "debugger", "ad_checkpoint_residuals",
                               "refs"})
# the module of the jax_debug_nans checking (its names: nx.debug_nans, nx.debug_infs)
_INTERNAL_MODULES = _INTERNAL_MODULES | {"config_nans"}


def __dir__():
    """The public names of the namespace (functions, dtypes, constants, public submodules)."""
    return sorted(n for n in globals() if not n.startswith("_") and n not in _INTERNAL_MODULES)

# JAX's names for named axes, custom gradients, host callbacks and checkpoint policies:
# pmap (a compiled vmap on one device), custom_gradient, pure_callback, experimental.io_callback,
# checkpoint_policies, ensure_compile_time_eval
from nx_rune.parallel import pmap  # noqa: E402,F401
from nx_rune.autodiff.custom_grad import custom_gradient  # noqa: E402,F401
from nx_rune.callbacks import pure_callback  # noqa: E402,F401
from nx_rune import experimental  # noqa: E402,F401
from nx_rune import ad_checkpoint  # noqa: E402,F401
from nx_rune.ad_checkpoint import checkpoint_policies  # noqa: E402,F401
from nx_rune.compiler.compile_time import ensure_compile_time_eval  # noqa: E402,F401
from nx_rune.functional import frompyfunc, piecewise, ufunc, vectorize  # noqa: E402,F401
from nx_rune import image  # noqa: E402,F401
