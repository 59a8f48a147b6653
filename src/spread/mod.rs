//! Spreading.
