"""Helpers shared by the cross-package tests (on sys.path via pytest's ``pythonpath``)."""
