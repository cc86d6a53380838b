"""Builds the cffi PTY extension (desktop.native._pty) from native/ during pip install."""

from setuptools import setup

setup(cffi_modules=["native/pty_build.py:ffibuilder"])
