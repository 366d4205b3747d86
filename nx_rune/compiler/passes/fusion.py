"""Fusion (placeholder)."""


def fuse(prog):
    return prog
