"""``nx_rune.autograd``: HIPS autograd's API on nx_rune.

An autograd program runs with ``autograd`` renamed to ``nx_rune.autograd``::

    import nx_rune.autograd.numpy as np
    from nx_rune.autograd import grad, jacobian

Modules: ``numpy`` (+ ``random``, ``linalg``, ``fft``), ``scipy`` (``special``, ``stats``,
``linalg``, ``signal``, ``misc``), ``misc`` (``optimizers``, ``flatten``), ``extend``
(``primitive``, ``defvjp``, ``defjvp``, ...), ``test_util`` (``check_grads``, ``combo_check``),
``builtins``.  The differential operators take ``(fun, argnum=0)`` as autograd's do and run
on nx_rune's reverse and forward modes, in x64 mode: autograd programs are NumPy programs, with
float64 defaults; plain nx_rune code elsewhere in the process keeps its own defaults.
"""
from nx_rune.autograd.builtins import dict, isinstance, list, tuple, type  # noqa: F401,A004
from nx_rune.autograd.differential_operators import (  # noqa: F401
    checkpoint,
    deriv,
    elementwise_grad,
    grad,
    grad_and_aux,
    grad_named,
    hessian,
    hessian_tensor_product,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
    vector_jacobian_product,
)
from nx_rune.autograd.extend import primitive  # noqa: F401

__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian", "hessian",
           "make_vjp", "make_jvp", "holomorphic_grad", "make_hvp", "hessian_tensor_product",
           "hessian_vector_product", "tensor_jacobian_product", "vector_jacobian_product",
           "make_ggnvp", "deriv", "checkpoint", "grad_named", "multigrad_dict", "primitive",
           "tuple", "list", "dict", "isinstance", "type"]
