"""Developer tools, never imported by the library: the fuzzer and the docs generator
(`python -m pcsc.tools.docs`).
"""
