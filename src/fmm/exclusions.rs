//! Excluded and scaled pairs of an FMM plan ([`crate::pairs`]): after the sum over all pairs,
//! `(1 − s)` times the `1/r` interaction of each listed pair `(i, j)` with scale `s` — its
//! nearest image under periodic boundaries — is subtracted from the potentials, the fields
//! and the energy, as MD codes correct any Coulomb solver for bonded pairs (1-2 and 1-3 pairs
//! excluded, 1-4 pairs scaled). With `d = x_i − x_j` (nearest image), `r = |d|`, `w = 1 − s`:
//! `φ_i −= w q_j / r`, `φ_j −= w q_i / r`, `E_i −= w q_j d / r³`, `E_j += w q_i d / r³`,
//! `U −= w q_i q_j / r`. The FMM refuses coincident particles whatever the list says (its near
//! field has no `r → 0` limit), so `r > 0` here. The device plan applies the same corrections
//! in its own kernel (`gpu::fmm`).

use super::Boundary;
use crate::pairs::Exclusions;

/// The pair vector `d` reduced to its nearest image under `boundary` (each component by the
/// box side of its axis; open boundaries leave it unchanged).
pub(crate) fn nearest_image(boundary: Boundary, d: [f64; 3]) -> [f64; 3] {
    let sides = match boundary {
        Boundary::Open => return d,
        Boundary::Periodic { side } => [side; 3],
        Boundary::PeriodicBox { sides } => sides,
    };
    std::array::from_fn(|a| d[a] - sides[a] * (d[a] / sides[a]).round())
}

/// Subtracts the corrections of the pairs `ex` (module docs) from `phi` (`n` potentials) and
/// `field` (`3n`, interleaved), when given, for the `n = q.len()` particles at `xyz` (`3n`,
/// interleaved; the caller's units), and returns the change of the energy `½ Σ q_i φ_i`. Every
/// index of `ex` must be below `n` (checked by the caller, [`crate::pairs::check_exclusions`]).
pub(crate) fn correct(ex: &Exclusions, boundary: Boundary, xyz: &[f64], q: &[f64], mut phi: Option<&mut [f64]>, mut field: Option<&mut [f64]>) -> f64 {
    let mut du = 0.0;
    for (m, &key) in ex.keys.iter().enumerate() {
        let (i, j) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
        let w = 1.0 - ex.scale_of(m);
        let d = nearest_image(boundary, std::array::from_fn(|a| xyz[3 * i + a] - xyz[3 * j + a]));
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        let inv_r = 1.0 / r2.sqrt();
        du -= w * q[i] * q[j] * inv_r;
        if let Some(p) = phi.as_deref_mut() {
            p[i] -= w * q[j] * inv_r;
            p[j] -= w * q[i] * inv_r;
        }
        if let Some(f) = field.as_deref_mut() {
            let c = w * inv_r * inv_r * inv_r;
            for a in 0..3 {
                f[3 * i + a] -= c * q[j] * d[a];
                f[3 * j + a] += c * q[i] * d[a];
            }
        }
    }
    du
}
