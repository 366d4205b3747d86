"""Automatic differentiation: interpreters, the VJP/JVP rule tables and the transform API."""
__all__ = []
