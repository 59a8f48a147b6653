//! NUFFT (filled below).
