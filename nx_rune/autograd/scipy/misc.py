"""``nx_rune.autograd.scipy.misc``: ``logsumexp`` (autograd keeps it here too)."""
from nx_rune.autograd.scipy.special import logsumexp

__all__ = ["logsumexp"]
