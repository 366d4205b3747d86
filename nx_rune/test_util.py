"""``nx_rune.test_util``: ``jax.test_util``'s derivative checks against central finite
differences in float64: ``check_grads(f, args, order, modes)``, ``check_jvp(f, f_jvp, args)``
and ``check_vjp(f, f_vjp, args)``."""
from nx_rune.autodiff.check import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]


def __dir__():
    # (pytest's assertion rewriting adds names to modules called test_*; list only the API)
    return list(__all__)
