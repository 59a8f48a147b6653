//! Classic Ewald sum, the reference the fast methods are tested against: the real-space sum
//! with the exact `erfc` (cell lists, [`super::real_space`]) and the explicit k-space sum
//! `φ^F(r_i) = (4π/V) Σ_{0<|k|≤k_c} e^{−k²/4ξ²}/k² Re[S(k) e^{ik·r_i}]`,
//! `S(k) = Σ_j q_j e^{−ik·r_j}`, over half of the wave vectors (the other half are their
//! negatives), with per-atom tables of `e^{2πi m s_d}`.
//!
//! With the splitting parameter balancing the two sums, `ξ ≈ √π (N/V²)^{1/6}`, both cost
//! `O(N^{3/2})` (Perram, Petersen, de Leeuw 1988); [`super::params`] picks `ξ`, `r_c`, `k_c`.

use super::box_::PeriodicBox;
use super::influence::add_virial;
use crate::error::{try_zeroed_vec, Result};
use crate::threads::Threads;
use num_complex::Complex64;

/// Explicit k-space sum over the modes with `|k| ≤ k_c`.
pub(crate) struct DirectKspace {
    xi: f64,
    pub kc: f64,
    /// Largest `|m_d|` per axis.
    pub mmax: [usize; 3],
    modes: Vec<[i32; 3]>,
}

impl DirectKspace {
    pub fn new(bx: &PeriodicBox, xi: f64, kc: f64) -> Self {
        let mut s = DirectKspace { xi, kc, mmax: [0; 3], modes: Vec::new() };
        s.set_box(bx);
        s
    }

    /// Lists the half-space modes inside the cutoff sphere for a cell.
    pub fn set_box(&mut self, bx: &PeriodicBox) {
        let tp = 2.0 * std::f64::consts::PI;
        let mm = [0, 1, 2].map(|d| (self.kc * bx.lengths[d] / tp).floor() as i32);
        self.mmax = mm.map(|v| v as usize);
        self.modes.clear();
        for m0 in 0..=mm[0] {
            for m1 in -mm[1]..=mm[1] {
                for m2 in -mm[2]..=mm[2] {
                    let half = m0 > 0 || (m0 == 0 && (m1 > 0 || (m1 == 0 && m2 > 0)));
                    if !half {
                        continue;
                    }
                    let k = bx.kvec([m0 as f64, m1 as f64, m2 as f64]);
                    if k[0] * k[0] + k[1] * k[1] + k[2] * k[2] <= self.kc * self.kc {
                        self.modes.push([m0, m1, m2]);
                    }
                }
            }
        }
    }

    /// Writes the k-space potentials and fields (overwritten), returns the virial.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(
        &self, bx: &PeriodicBox, s: &[[f64; 3]], q: &[f64], threads: &Threads, phi: &mut [f64],
        field: Option<&mut [f64]>, virial: bool,
    ) -> Result<[f64; 6]> {
        let n = s.len();
        let tp = 2.0 * std::f64::consts::PI;
        // tables e^{2πi m s_d}, m = 0 … mmax_d, atom-major per axis
        let mut tabs: Vec<Vec<Complex64>> = Vec::new();
        for d in 0..3 {
            let w = self.mmax[d] + 1;
            let mut t = try_zeroed_vec::<Complex64>(n * w, "Ewald k-sum tables")?;
            for i in 0..n {
                let z = Complex64::from_polar(1.0, tp * s[i][d]);
                let mut p = Complex64::new(1.0, 0.0);
                for m in 0..w {
                    t[i * w + m] = p;
                    p *= z;
                }
            }
            tabs.push(t);
        }
        let nt = threads.count().max(1);
        let mut accs: Vec<Vec<f64>> = (0..nt).map(|_| try_zeroed_vec(4 * n, "Ewald k-sum accumulators")).collect::<Result<_>>()?;
        let mut virs = vec![[0.0f64; 6]; nt];
        let ap = super::Shared(accs.as_mut_ptr());
        let vp = super::Shared(virs.as_mut_ptr());
        let parallel = threads.parallel();
        let pref = 8.0 * std::f64::consts::PI / bx.volume; // (4π/V), doubled for the half space
        let a = 1.0 / (4.0 * self.xi * self.xi);
        let w = [self.mmax[0] + 1, self.mmax[1] + 1, self.mmax[2] + 1];
        let chunk = 16;
        let ntask = self.modes.len().div_ceil(chunk);
        let want_field = field.is_some();
        let tabs = &tabs;
        threads.for_each(ntask, |task| {
            let (ap, vp) = (ap, vp);
            let t = if parallel { rayon::current_thread_index().expect("in the plan's pool") } else { 0 };
            assert!(t < nt);
            // SAFETY: one buffer per pool thread; tasks on a thread run one after the other.
            let acc = unsafe { &mut *ap.0.add(t) };
            let vir = unsafe { &mut *vp.0.add(t) };
            let mut e = vec![Complex64::new(0.0, 0.0); n];
            for m in &self.modes[task * chunk..((task + 1) * chunk).min(self.modes.len())] {
                let k = bx.kvec([m[0] as f64, m[1] as f64, m[2] as f64]);
                let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
                let th = pref * (-a * k2).exp() / k2;
                let mut sk = Complex64::new(0.0, 0.0);
                for i in 0..n {
                    let z2 = tabs[1][i * w[1] + m[1].unsigned_abs() as usize];
                    let mut z = tabs[0][i * w[0] + m[0] as usize] * if m[1] < 0 { z2.conj() } else { z2 };
                    let z3 = tabs[2][i * w[2] + m[2].unsigned_abs() as usize];
                    z *= if m[2] < 0 { z3.conj() } else { z3 };
                    e[i] = z; // e^{ik·r_i}
                    sk += z.conj() * q[i];
                }
                for i in 0..n {
                    let v = e[i] * sk;
                    acc[i] += th * v.re;
                    if want_field {
                        let g = th * v.im;
                        acc[n + i] += g * k[0];
                        acc[2 * n + i] += g * k[1];
                        acc[3 * n + i] += g * k[2];
                    }
                }
                if virial {
                    // ½θ|S|² for m and −m together (pref already doubled)
                    add_virial(bx, self.xi, [m[0] as i64, m[1] as i64, m[2] as i64], 0.5 * th * sk.norm_sqr(), vir);
                }
            }
        });
        let mut vsum = [0.0; 6];
        for v in &virs {
            for d in 0..6 {
                vsum[d] += v[d];
            }
        }
        for i in 0..n {
            phi[i] = accs.iter().map(|a| a[i]).sum();
        }
        if let Some(f) = field {
            for i in 0..n {
                for d in 0..3 {
                    f[3 * i + d] = accs.iter().map(|a| a[(d + 1) * n + i]).sum();
                }
            }
        }
        Ok(vsum)
    }
}
