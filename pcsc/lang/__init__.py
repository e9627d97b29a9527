"""The route language: the parser (the only importer of Lark), lowering to the IR, the
IR itself, the expression interpreter, the printer, the formatter and the IR's JSON.
"""
