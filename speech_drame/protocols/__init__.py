"""Evaluation protocols of neighbouring papers, each in its own subpackage (e.g. ``isdrama``)."""
