//! Ewald electrostatics on the device (issue 15): the real-space pass ([`real_space`]).

pub mod real_space;
