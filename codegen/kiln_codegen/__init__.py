"""kiln's generator: ops/*.yaml -> C++ sources, tests, and coverage metadata."""
