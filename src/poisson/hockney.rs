//! Hockney–Eastwood kernel (Mayani et al. 2025 §2.2; Hockney & Eastwood, *Computer Simulation Using
//! Particles*, 1988, §6-5-4): the Green's function sampled at the node offsets and mirrored onto
//! the doubled grid,
//!
//! `G₂(m) = G(|(min(m_x, 2n_x − m_x) h_x, min(m_y, 2n_y − m_y) h_y, …)|)` for `m ≠ 0`,
//! `G₂(0) = ` [`green::g0_cell_average`] (the mean of `G` over the cell at the origin).
//!
//! The cyclic convolution of the zero-padded source with `G₂` on the doubled grid equals the
//! aperiodic sum `φ_i = Π h_d · Σ_j G₂(i − j) ρ_j` on the physical grid. Second order.

use super::green;
use crate::threads::Threads;
use super::{fill_mirrored, Geom};

/// Writes the mirrored, regularised Green's function onto the doubled grid `buf` (unscaled).
pub(crate) fn fill_kernel(g: &Geom, exec: &Threads, buf: &mut [f64]) {
    fill_mirrored(g, exec, buf, kernel(g));
}

/// The regularised Green's function at the node offset `o` (in cells, each `o_d ≥ 0`).
pub(crate) fn kernel(g: &Geom) -> impl Fn([usize; 3]) -> f64 + Sync + Send {
    let g0 = green::g0_cell_average(g.dim, &g.h);
    let (dim, h) = (g.dim, g.h);
    move |o| {
        if o == [0, 0, 0] {
            g0
        } else {
            let r2: f64 = (0..3).map(|d| (o[d] as f64 * h[d]).powi(2)).sum();
            green::green(dim, r2.sqrt())
        }
    }
}
