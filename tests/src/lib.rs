//! The GPU tests live in `tests/gpu/` (one binary, run from `dist/tests/` on a GPU machine).
