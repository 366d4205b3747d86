# C entry points of nx_rune.tensor for the autodiff tape's loops (nx_rune/autodiff/_tape.pyx):
# what the Python functions call_impl and Tensor._broadcast_scalar do, without their calls.

# prim's implementation on concrete operands args with parameters params (call_impl).
cdef object _call_impl(object prim, tuple args, dict params)
# value seen with shape through stride 0, in dtype: a cached constant (Tensor._broadcast_scalar).
cdef object _scalar_tensor(object value, object dtype, object shape)
# x.shape and x.dtype of an array (a Tensor, a tracer), without attribute lookups where possible.
cdef object _shape_of(object x)
cdef object _dtype_of(object x)
