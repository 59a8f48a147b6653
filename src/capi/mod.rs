//! C API (filled below).
