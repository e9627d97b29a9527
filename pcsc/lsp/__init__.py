"""The language server (`pcsc lsp`): diagnostics, hover, go-to-definition, completion
and formatting for `.route` files, over the pipeline. `pcsc.lsp.analysis` needs only
PCSC; `pcsc.lsp.server` needs pygls (the optional extra `pcsc[lsp]`)."""
