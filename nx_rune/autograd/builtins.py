"""autograd's ``autograd.builtins``: ``tuple``, ``list``, ``dict``, ``isinstance``, ``type``.

autograd needs its own containers to trace values inside tuples, lists and dicts; nx_rune traces
through Python's containers, so these are Python's own.
"""
import builtins as _b

__all__ = ["tuple", "list", "dict", "isinstance", "type"]

tuple = _b.tuple
list = _b.list
dict = _b.dict
isinstance = _b.isinstance
type = _b.type
