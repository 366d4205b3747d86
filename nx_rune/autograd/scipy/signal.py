"""``nx_rune.autograd.scipy.signal``: ``scipy.signal``'s names (SciPy's, on concrete values)."""
import scipy.signal as _sig

from nx_rune.autograd._namespace import populate as _populate

__all__ = _populate(globals(), _sig, None, "nx_rune.autograd.scipy.signal")
