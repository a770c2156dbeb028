"""The kernel library: ids, ABIs, and one registry with a NumPy and a CuPy backend."""
