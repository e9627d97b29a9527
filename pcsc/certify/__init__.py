"""Decision certificates: `emit` writes them; `check` is the independent checker,
which imports nothing of PCSC.
"""
