"""autograd's ``wrap_util``: ``unary_to_nary`` (operators of one argument made into operators
taking ``argnum``), ``wraps`` and ``get_name``."""

__all__ = ["unary_to_nary", "wraps", "wrap_nary_f", "get_name", "get_doc"]


def subvals(x, ivs):
    # autograd.util.subvals (kept here too: util imports test_util, which imports this module)
    x_ = list(x)
    for i, v in ivs:
        x_[i] = v
    return tuple(x_)


def get_name(f):
    """``f.__name__``, or ``"[unknown name]"``."""
    return getattr(f, "__name__", "[unknown name]")


def get_doc(f):
    """``f.__doc__``, or ``""``."""
    return getattr(f, "__doc__", "")


def wraps(fun, namestr="{fun}", docstr="{doc}", **kwargs):
    """A decorator setting a function's name and docstring from ``fun``'s (format strings with
    ``{fun}``, ``{doc}`` and ``kwargs``)."""
    def _wraps(f):
        try:
            f.__name__ = namestr.format(fun=get_name(fun), **kwargs)
            f.__doc__ = docstr.format(fun=get_name(fun), doc=get_doc(fun), **kwargs)
        except Exception:   # a name that cannot be formatted keeps f's own
            pass
        return f
    return _wraps


def wrap_nary_f(fun, op, argnum):
    """``wraps`` for the function an operator returns: ``{op}_of_{fun}_wrt_argnum_{argnum}``."""
    namestr = "{op}_of_{fun}_wrt_argnum_{argnum}"
    docstr = ("    {op} of function {fun} with respect to argument number {argnum}. Takes the "
              "same arguments as {fun} but returns the {op}.")
    return wraps(fun, namestr, docstr, op=get_name(op), argnum=argnum)


def unary_to_nary(unary_operator):
    """``unary_operator(f, x, *a, **k)`` as ``op(fun, argnum=0, *a, **k)(*args, **kwargs)``:
    ``x`` is ``args[argnum]`` (a tuple of them when ``argnum`` is a tuple or list)."""
    def nary_operator(fun, argnum=0, *nary_op_args, **nary_op_kwargs):
        if type(argnum) not in (int, tuple, list):
            raise TypeError(f"{get_name(unary_operator)}: argnum must be an int or a tuple of "
                            f"ints, got {argnum!r}")

        @wrap_nary_f(fun, unary_operator, argnum)
        def nary_f(*args, **kwargs):
            def unary_f(x):
                if isinstance(argnum, int):
                    subargs = subvals(args, [(argnum, x)])
                else:
                    subargs = subvals(args, zip(argnum, x))
                return fun(*subargs, **kwargs)
            unary_f.__name__ = get_name(fun)
            if isinstance(argnum, int):
                x = args[argnum]
            else:
                x = tuple(args[i] for i in argnum)
            return unary_operator(unary_f, x, *nary_op_args, **nary_op_kwargs)
        return nary_f
    nary_operator.__name__ = get_name(unary_operator)
    nary_operator.__doc__ = get_doc(unary_operator)
    return nary_operator
