"""Compiler passes: each is one function over the IR, composed by a :class:`Pipeline`."""
