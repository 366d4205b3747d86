"""Write docs/reference/*.rst, the API reference's pages, from the public modules' names.

    python tools/make_api_pages.py

Run it after adding a public name, then move the name into the group it belongs to (new names
of the main namespace land in "Not yet grouped", which tests/test_docs_api.py refuses).  The
groups of the main namespace are the Array API standard's, with NumPy's extensions beside them.
"""
import importlib
import inspect
import json
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
REF = ROOT / "docs" / "reference"

import nx_rune as nx  # noqa: E402

# The main namespace, grouped as the Array API standard groups its functions.
NAMESPACE = [
    ("Array object", "The array type: NumPy's attributes, methods and operators, plus ``.at``.  "
     "See :doc:`../guide/arrays`.", "Tensor IndexUpdateHelper"),
    ("Creation functions", "", "arange asarray empty empty_like eye from_dlpack full full_like "
     "linspace meshgrid ones ones_like tril triu zeros zeros_like"),
    ("Creation functions (NumPy extensions)", "", "array diag diagflat identity indices tri r_ c_"),
    ("Data type functions", "", "astype can_cast finfo iinfo isdtype promote_types result_type"),
    ("Element-wise functions", "", None),  # filled below from the front end's elementwise module
    ("Element-wise functions (NumPy extensions)", "", "fabs fmax fmin iscomplex iscomplexobj "
     "isrealobj real_if_close"),
    ("Indexing functions", "", "take take_along_axis put_along_axis"),
    ("Linear algebra functions", "The namespace's products; decompositions and solvers are in "
     ":doc:`linalg`.", "matmul matrix_transpose tensordot vecdot cross dot einsum inner kron "
     "outer vdot trace diagonal polyval"),
    ("Manipulation functions", "", "broadcast_arrays broadcast_to concat expand_dims flip "
     "moveaxis permute_dims repeat reshape roll squeeze stack tile unstack"),
    ("Manipulation functions (NumPy extensions)", "", "array_split atleast_1d atleast_2d "
     "atleast_3d column_stack concatenate dstack hstack vstack fliplr flipud rot90 split swapaxes "
     "transpose ravel pad interp select ediff1d append dsplit hsplit vsplit row_stack rollaxis"),
    ("Views and memory", "The view algebra: zero-copy views, materialization, writes.  See "
     ":doc:`../guide/arrays`.", "as_strided assign contiguous copy is_contiguous permute shrink "
     "shares_memory ndim shape size broadcast_shapes"),
    ("Searching functions", "", "argmax argmin count_nonzero nonzero searchsorted where argwhere "
     "flatnonzero"),
    ("Set functions", "", "unique_all unique_counts unique_inverse unique_values unique"),
    ("Sorting functions", "", "argsort sort partition argpartition"),
    ("Statistical functions", "", "cumulative_prod cumulative_sum max mean min prod std sum var"),
    ("Statistical functions (NumPy extensions)", "", "amax amin average corrcoef cov cummax "
     "cummin cumprod cumsum logsumexp median nanmax nanmean nanmedian nanmin nanpercentile "
     "nanprod nanquantile nanstd nansum nanvar percentile ptp quantile"),
    ("Utility functions", "", "all any diff gradient allclose array_equal isclose"),
    ("Function application (NumPy extensions)", "Python functions over arrays, as "
     "``jax.numpy``'s (``vectorize`` is a ``vmap``: the function is traced once).",
     "vectorize piecewise frompyfunc ufunc"),
    ("Integration and convolution (NumPy extensions)", "", "trapezoid convolve correlate"),
    ("Neural-network functions", "", "conv2d fold unfold log_softmax relu sigmoid softmax "
     "softplus"),
    ("Transformations", "Automatic differentiation, vectorization and rematerialization; see "
     ":doc:`../guide/autodiff` and :doc:`../guide/vmap`.", "grad value_and_grad grads "
     "value_and_grads vjp jvp jvp_aux jvps linearize jacfwd jacrev hessian hvp stop_gradient "
     "detach no_grad custom_vjp custom_jvp check_grads vmap checkpoint remat jacobian "
     "linear_transpose fwd_and_bwd"),
    ("Named axes and callbacks", "``pmap`` (a compiled ``vmap`` on the one device) and the "
     "collectives of :doc:`lax` over named axes; a custom derivative given with the value; "
     "Python callbacks inside transformed code; evaluation at trace time.",
     "pmap custom_gradient pure_callback ensure_compile_time_eval"),
    ("Mutable array references", "JAX's ``jax.new_ref``: an array read and written by "
     "indexing, passed to ``jit``/``vmap`` as an argument and written back into.",
     "new_ref freeze Ref"),
    ("Compilation", "See :doc:`../guide/jit` and :doc:`lax`.", "jit make_jaxpr eval_shape "
     "ShapeDtypeStruct typeof named_scope"),
    ("Devices", "JAX's placement API on the one CPU device nx_rune computes on: each call is "
     "a no-op with JAX's return values, so ported code runs unchanged.", "devices local_devices "
     "default_backend device_count local_device_count process_index process_count device_put "
     "device_get block_until_ready effects_barrier Shard"),
    ("Configuration", "See also :doc:`config`.", "enable_x64 get_num_threads set_num_threads"),
    ("Debugging NaNs and infinities", "JAX's ``jax_debug_nans`` / ``jax_debug_infs`` for a "
     "block: a primitive whose output holds a NaN (an infinity) raises FloatingPointError "
     "naming it (``nx.config.update(\"jax_debug_nans\", True)`` for the program).",
     "debug_nans debug_infs"),
]
_NOT_ELEMENTWISE = {"allclose", "array_equal", "isclose", "where"}

# Data (constants, dtypes, tables, type aliases): no docstring of their own, so described here.
DATA = {
    "nx_rune": [
        ("Constants", [
            ("e", "Euler's number, the float :data:`math.e`."),
            ("inf", "Positive infinity, the float :data:`math.inf`."),
            ("nan", "Not a number, the float :data:`math.nan`."),
            ("newaxis", "``None``: ``x[:, nx.newaxis]`` inserts an axis of length 1."),
            ("pi", "The float :data:`math.pi`."),
        ]),
        ("Array types", [
            ("ndarray", "The base class of every array-like value (:class:`nx_rune.Tensor` and "
                        "the tracers of the transformations), as JAX's ``jax.numpy.ndarray``: "
                        "``isinstance(x, nx.ndarray)`` holds inside ``jit``, ``grad`` and "
                        "``vmap`` too."),
            ("Array", "The same class as :data:`ndarray`, under JAX's name ``jax.Array``."),
        ]),
        ("Checkpoint policies", [
            ("checkpoint_policies", "JAX's ``jax.checkpoint_policies``: the policy functions "
                                    "``checkpoint(f, policy=...)`` accepts (see "
                                    ":doc:`ad_checkpoint`)."),
        ]),
        ("Data types", [(n, f"NumPy's ``{n}`` dtype (:class:`numpy.dtype`)." if n not in
                         ("bool", "bool_") else "NumPy's ``bool`` dtype; ``bool`` is the "
                         "standard's name, ``bool_`` NumPy's.")
                        for n in ("bool bool_ int8 int16 int32 int64 uint8 uint16 uint32 "
                                  "uint64 float16 float32 float64 complex64 complex128").split()]),
    ],
    "nx_rune.config": [("Data", [
        ("ENV_VAR", "``\"NX_RUNE_ENABLE_X64\"``: the environment variable that turns x64 mode "
                    "on at import (``1``, ``true``, ``yes`` or ``on``)."),
        ("OPTIONS", "The option names :func:`update` and :func:`read` accept, each mapped to "
                    "its canonical name (JAX's ``\"jax_enable_x64\"`` is ``\"enable_x64\"``)."),
        ("NO_EFFECT_OPTIONS", "JAX's options that change only JAX's logging and inner workings "
                              "(``jax_explain_cache_misses``, ``jax_log_compiles``, "
                              "``jax_remat3``, ``jax_traceback_filtering``): name -> (type, "
                              "default); accepted and read back, with no effect."),
        ("PROMOTION_OPTIONS", "The names of the promotion option (``\"dtype_promotion\"``): "
                              "``\"jax\"`` (the default) or ``\"numpy\"``."),
        ("DEBUG_OPTIONS", "The NaN / inf checking options (``\"jax_debug_nans\"``, "
                          "``\"jax_debug_infs\"`` and their short names), each mapped to "
                          "what it checks (``\"nans\"`` or ``\"infs\"``)."),
    ])],
    "nx_rune.typing": [("Type aliases", [
        ("Array", "The array type in annotations: a :class:`nx_rune.Tensor` or a tracer "
                  "standing for one inside a transformation."),
        ("ArrayLike", "What the functions accept as an array: an Array, a NumPy array or "
                      "scalar, a Python number or bool, or a nested sequence of them."),
        ("DTypeLike", "What ``dtype=`` accepts: a NumPy dtype, a scalar type such as "
                      "``nx.float32``, a dtype name or a Python type."),
        ("ShapeLike", "A shape: an int or a sequence of ints."),
        ("Axis", "An ``axis=`` argument: ``None`` (all axes), an int or a sequence of ints."),
        ("PyTree", "A pytree: nested tuples, lists, dicts, None and registered nodes with "
                   "arrays at the leaves (see :doc:`tree_util`)."),
    ])],
    "nx_rune.ad_checkpoint": [("Policies", [
        ("checkpoint_policies", "JAX's ``jax.checkpoint_policies``: ``everything_saveable``, "
                                "``nothing_saveable``, ``dots_saveable``, "
                                "``dots_with_no_batch_dims_saveable``, "
                                "``save_only_these_names(*names)``, "
                                "``save_from_both_policies(p1, p2)``, ...: functions "
                                "``policy(prim, *avals, **params) -> bool``."),
    ])],
    "nx_rune.primitives": [("Data", [
        ("PRIMITIVES", "Every :class:`Primitive` by name (``PRIMITIVES[\"add\"]``); a new "
                       "Primitive registers itself here."),
    ])],
    "nx_rune.autodiff": [("Rule tables", [
        ("VJP_RULES", "Reverse-mode rules by primitive: ``VJP_RULES[p] = lambda ct, *args, "
                      "out, **params: cotangents`` (one per input, None for none)."),
        ("JVP_RULES", "Forward-mode rules by primitive: ``JVP_RULES[p] = lambda primals, "
                      "tangents, out, **params: tangent_out``."),
        ("BATCH_RULES", "vmap rules by primitive: ``BATCH_RULES[p] = lambda axis_size, args, "
                        "dims, **params: (out, out_dim)``."),
    ])],
}

# Pages: (file, title, module, intro, [groups] or None for "one list of the module's names").
PAGES = [
    ("random", "nx_rune.random", "Counter-based random numbers, bit for bit JAX's threefry2x32. "
     "See :doc:`../guide/random`."),
    ("lax", "nx_rune.lax", "JAX's ``jax.lax``: structured control flow (plain Python in eager "
     "mode, one equation each under :func:`nx_rune.jit`), and the primitive-level operations: "
     "elementwise, shapes, dynamic slices, dot_general, convolutions, reduce_window, sorting; "
     "and the collectives over the named axes of ``vmap(..., axis_name=...)`` and "
     ":func:`nx_rune.pmap` (psum, pmean, all_gather, psum_scatter, ppermute, ...).  "
     "Each differentiable, batchable and jittable."),
    ("linalg", "nx_rune.linalg", "The Array API's linear algebra extension, plus NumPy's "
     "``norm`` and ``lstsq``.  See :doc:`../guide/linalg`."),
    ("fft", "nx_rune.fft", "The Array API's FFT extension with NumPy's signatures; every "
     "transform differentiates to any order."),
    ("scipy", "nx_rune.scipy", "SciPy-style functions: linear algebra, convolution, ODE "
     "solutions, special functions and distributions, minimization, Krylov solvers, "
     "interpolation, cosine transforms, vector quantization and rotations (as "
     "``jax.scipy``)."),
    ("tree_util", "nx_rune.tree_util", "Pytrees: nested containers with arrays at the leaves."),
    ("flatten_util", "nx_rune.flatten_util", "A pytree of arrays as one flat vector."),
    ("optimizers", "nx_rune.optimizers", "Gradient transformations and learning-rate schedules "
     "in optax's form."),
    ("distributed", "nx_rune.distributed", "Data-parallel gradients on Ray or Dask workers.  "
     "See :doc:`../distributed`."),
    ("nn", "nx_rune.nn", "Neural-network functions as JAX's ``jax.nn``: activations, softmax, "
     "one_hot, standardize, attention."),
    ("nn_initializers", "nx_rune.nn.initializers", "Parameter initializers as JAX's "
     "``jax.nn.initializers``: ``init(key, shape, dtype)``, drawing from :doc:`random`."),
    ("debug", "nx_rune.debug", "Printing and callbacks with the values of a running "
     "computation, under every transformation (as ``jax.debug``)."),
    ("errors", "nx_rune.errors", "The exceptions the transformations raise, and ShapeError "
     "(operand shapes that do not fit: a ValueError and a TypeError)."),
    ("image", "nx_rune.image", "Image resampling as JAX's ``jax.image``: resize and "
     "scale_and_translate with JAX's kernels, differentiable."),
    ("experimental", "nx_rune.experimental", "JAX's ``jax.experimental`` names nx_rune has."),
    ("experimental_checkify", "nx_rune.experimental.checkify", "JAX's "
     "``jax.experimental.checkify``: run-time checks (``check``, and automatic NaN, division "
     "and index checks) functionalized into an error value, under jit, vmap and grad."),
    ("experimental_ode", "nx_rune.experimental.ode", "JAX's ``jax.experimental.ode``: "
     "``odeint``, adaptive Dormand-Prince under jit and vmap, differentiable by the adjoint "
     "method."),
    ("ad_checkpoint", "nx_rune.ad_checkpoint", "JAX's ``jax.ad_checkpoint``: checkpoint, "
     "checkpoint_name and the checkpoint policies (accepted; nx_rune recomputes everything "
     "inside a checkpoint), and print_saved_residuals: what reverse mode keeps for the "
     "backward pass."),
    ("sharding", "nx_rune.sharding", "JAX's ``jax.sharding`` on the one CPU device: what "
     "``x.sharding`` and ``x.addressable_shards`` return."),
    ("test_util", "nx_rune.test_util", "Derivative checks against central finite differences, "
     "as JAX's ``jax.test_util``."),
    ("config", "nx_rune.config", "Run-time settings: x64 mode and the kernels' threads."),
    ("typing", "nx_rune.typing", "Type aliases of the annotations."),
    ("autodiff", "nx_rune.autodiff", "The transformations' module, and the rule tables a new "
     "primitive is registered in (see :doc:`../guide/extending`)."),
    ("primitives", "nx_rune.primitives", "Primitive operations and ``bind``, for adding a "
     "primitive (see :doc:`../guide/extending`)."),
]
SCIPY_SUBMODULES = ["nx_rune.scipy.integrate", "nx_rune.scipy.linalg", "nx_rune.scipy.signal",
                    "nx_rune.scipy.special", "nx_rune.scipy.stats"]
SCIPY_SUBMODULES += ["nx_rune.scipy.optimize", "nx_rune.scipy.sparse.linalg",
                     "nx_rune.scipy.ndimage", "nx_rune.scipy.fft", "nx_rune.scipy.interpolate",
                     "nx_rune.scipy.cluster.vq", "nx_rune.scipy.spatial.transform"]


def public(modname):
    mod = importlib.import_module(modname) if modname in sys.modules or "." not in modname \
        else _resolve(modname)
    return mod, [n for n in dir(mod) if not n.startswith("_")]


def _resolve(modname):
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError:
        parent, _, last = modname.rpartition(".")
        return getattr(importlib.import_module(parent), last)


def underline(text, ch):
    return f"{text}\n{ch * len(text)}\n"


def autosummary(names):
    if not names:
        return ""
    body = "".join(f"   {n}\n" for n in names)
    return f".. autosummary::\n   :toctree: generated/\n\n{body}\n"


# names documented without a cross-reference target of their own: ``Array`` would make every
# ``Array`` in the signatures (nx_rune.typing.Array, the annotations' alias) ambiguous
NO_INDEX = {"nx_rune.Array"}


def data_block(entries, modname):
    return "".join(f".. data:: {n}\n" + ("   :no-index:\n" if f"{modname}.{n}" in NO_INDEX
                                          else "")
                   + f"\n   {text}\n\n" for n, text in entries)


def split_kinds(mod, names):
    data_names = {n for _, entries in DATA.get(mod.__name__, []) for n, _ in entries}
    objs, mods = [], []
    for n in names:
        o = getattr(mod, n)
        if isinstance(o, types.ModuleType):
            mods.append(n)
        elif n not in data_names:
            objs.append(n)
    funcs = [n for n in objs if not inspect.isclass(getattr(mod, n))]
    classes = [n for n in objs if inspect.isclass(getattr(mod, n))]
    return funcs, classes, mods


def module_section(modname, level="-", head=True, title=None):
    mod = _resolve(modname)
    names = [n for n in dir(mod) if not n.startswith("_")]
    # names that are the main namespace's objects link to its pages (one page per object)
    shared = [n for n in names if getattr(nx, n, None) is getattr(mod, n)
              and not isinstance(getattr(mod, n), types.ModuleType)
              and n not in {e for _, es in DATA.get(modname, []) for e, _ in es}]
    funcs, classes, _ = split_kinds(mod, [n for n in names if n not in shared])
    out = ""
    if head:
        out += underline(title or modname, level) + "\n"
    real = modname in sys.modules and sys.modules[modname] is mod
    if real:
        out += f".. automodule:: {modname}\n   :no-members:\n\n"
        out += f".. currentmodule:: {modname}\n\n"
    else:   # a module object under another name (scipy.stats.multivariate_normal)
        parent, _, last = modname.rpartition(".")
        out += (mod.__doc__ or "").strip().split("\n\n")[0] + "\n\n"
        out += f".. currentmodule:: {parent}\n\n"
        # autosummary's pages cannot import such a name: the functions are documented here
        out += "".join(f".. autofunction:: {modname}.{n}\n\n" for n in funcs + classes)
        funcs, classes = [], []
    sub = {"-": "~", "~": "^", "=": "-"}[level]
    if shared:
        out += (underline("From the main namespace", sub) + "\n" +
                f"``{modname}.name`` is ``nx_rune.name`` for these:\n\n"
                ".. currentmodule:: nx_rune\n\n.. autosummary::\n\n" +
                "".join(f"   {n}\n" for n in shared) + "\n" +
                (f".. currentmodule:: {modname}\n\n" if real else
                 f".. currentmodule:: {modname.rpartition('.')[0]}\n\n"))
    if funcs:
        out += underline("Functions", sub) + "\n" + autosummary(funcs)
    if classes:
        out += underline("Classes", sub) + "\n" + autosummary(classes)
    for title, entries in DATA.get(mod.__name__, []):
        out += underline(title, sub) + "\n" + data_block(entries, mod.__name__)
    return out


def namespace_page():
    mod = nx
    names = {n for n in dir(mod) if not n.startswith("_")
             and not isinstance(getattr(mod, n), types.ModuleType)}
    data_names = {n for _, entries in DATA["nx_rune"] for n, _ in entries}
    elementwise = sorted(n for n in names if getattr(getattr(mod, n), "__module__", "")
                         == "nx_rune.frontend.elementwise" and n not in _NOT_ELEMENTWISE)
    elementwise.append("nan_to_num") if "nan_to_num" not in elementwise else None
    out = underline("The nx_rune namespace", "=") + "\n"
    out += ".. currentmodule:: nx_rune\n\n"
    out += ("``import nx_rune as nx``: an `Array API standard <https://data-apis.org/array-api/"
            "2024.12/>`_ (2024.12) namespace with NumPy's names, plus the transformations.  The "
            "groups below are the standard's; \"NumPy extensions\" are NumPy's functions beyond "
            "it.\n\n")
    seen = set(data_names)
    for title, intro, spec in NAMESPACE:
        group = elementwise if spec is None else spec.split()
        seen.update(group)
        out += underline(title, "-") + "\n" + (intro + "\n\n" if intro else "") + \
            autosummary(group)
    for title, entries in DATA["nx_rune"]:
        out += underline(title, "-") + "\n" + data_block(entries, "nx_rune")
    rest = sorted(names - seen)
    if rest:
        out += underline("Not yet grouped", "-") + "\n" + autosummary(rest)
    return out


HEADER = ".. This file is written by tools/make_api_pages.py; edit the groups there.\n\n"


def pages():
    """{file name: text} of every reference page."""
    out = {"namespace": HEADER + namespace_page().rstrip() + "\n"}
    for fname, modname, intro in PAGES:
        text = underline(modname, "=") + "\n" + intro + "\n\n"
        if fname == "scipy":
            text += f".. automodule:: {modname}\n   :no-members:\n\n"
            for sub in SCIPY_SUBMODULES:
                text += module_section(sub)
            stats = _resolve("nx_rune.scipy.stats")
            # a section per distribution module (gaussian_kde and sem are listed in the
            # stats section itself)
            for dist in [n for n in dir(stats) if not n.startswith("_")
                         and isinstance(getattr(stats, n), types.ModuleType)]:
                text += module_section(f"nx_rune.scipy.stats.{dist}", level="~")
        else:
            text += module_section(modname, head=False)
        out[fname] = HEADER + text.rstrip() + "\n"
    return out


def main():
    REF.mkdir(parents=True, exist_ok=True)
    written = pages()
    for fname, text in written.items():
        (REF / f"{fname}.rst").write_text(text)
    print(json.dumps(sorted(written)))


if __name__ == "__main__":
    main()
