"""What is LSP's and pygls's, below everything of the server's own: the names SPEC fixes and the
adapter over pygls's private internals."""
