"""autograd's ``autograd.tracer`` names: ``primitive``, ``notrace_primitive``, ``getval``,
``isbox``, ``Box`` (nx_rune's own tracing does the work; see ``extend``)."""
from nx_rune.autograd.extend import Box, getval, isbox, notrace_primitive, primitive

__all__ = ["primitive", "notrace_primitive", "getval", "isbox", "Box"]
