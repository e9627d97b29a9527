"""The public Python API (`pcsc.api.core`); `pcsc` re-exports its names.
"""
