"""``nx_rune.autograd.scipy.integrate``: ``scipy.integrate``'s names (SciPy's, on concrete
values)."""
import scipy.integrate as _si

from nx_rune.autograd._namespace import populate as _populate

__all__ = _populate(globals(), _si, None, "nx_rune.autograd.scipy.integrate")
