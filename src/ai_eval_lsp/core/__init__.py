"""The rubric engine: parse, schema, validate, lint. Knows nothing of LSP; does no I/O of its own."""
