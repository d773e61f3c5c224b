"""Front ends: eager tensors and tracing into static graphs, over one op library."""
