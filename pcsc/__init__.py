"""PCSC: a proof-carrying strategy compiler.

The pipeline, one module per arrow (see docs/ and DESIGN §1):

    syntax (parse) -> lower (IR + checks) -> policy (load, pin) -> score (numbers)
                   -> packet (JSON contract) -> cli
"""

__version__ = "0.1.0"
