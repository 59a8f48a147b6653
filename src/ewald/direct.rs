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
use crate::error::{try_vec, try_zeroed_vec, Result};
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
    /// Errors: as [`DirectKspace::set_box`].
    pub fn new(bx: &PeriodicBox, xi: f64, kc: f64) -> Result<Self> {
        let mut s = DirectKspace { xi, kc, mmax: [0; 3], modes: Vec::new() };
        s.set_box(bx)?;
        Ok(s)
    }

    /// Calls `f(m0, m1, m2_lo, m2_hi)` for each column `(m0, m1)` of the half space whose
    /// `m2` range (inclusive, possibly empty) may hold modes with `|k| ≤ kc`; ranges are
    /// widened by one, and each mode is tested exactly by the caller. Cost: the columns, which
    /// [`super::params::direct_mmax`] bounds.
    fn columns(bx: &PeriodicBox, kc: f64, mm: [i64; 3], mut f: impl FnMut(i64, i64, i64, i64)) {
        let tp = 2.0 * std::f64::consts::PI;
        let a = &bx.recip;
        for m0 in 0..=mm[0] {
            let kx = tp * m0 as f64 * a[0][0];
            let r1 = kc * kc - kx * kx;
            if r1 < 0.0 {
                continue;
            }
            // k_y = 2π (m0 a01 + m1 a11): |k_y| ≤ √r1
            let c1 = m0 as f64 * a[0][1];
            let w1 = r1.sqrt() / (tp * a[1][1]);
            let lo1 = ((-w1 - c1 / a[1][1]).floor() as i64 - 1).max(-mm[1]);
            let hi1 = ((w1 - c1 / a[1][1]).ceil() as i64 + 1).min(mm[1]);
            for m1 in lo1..=hi1 {
                let ky = tp * (c1 + m1 as f64 * a[1][1]);
                let r2 = r1 - ky * ky;
                if r2 < 0.0 {
                    continue;
                }
                let c2 = m0 as f64 * a[0][2] + m1 as f64 * a[1][2];
                let w2 = r2.sqrt() / (tp * a[2][2]);
                let lo2 = ((-w2 - c2 / a[2][2]).floor() as i64 - 1).max(-mm[2]);
                let hi2 = ((w2 - c2 / a[2][2]).ceil() as i64 + 1).min(mm[2]);
                f(m0, m1, lo2, hi2);
            }
        }
    }

    /// Lists the half-space modes inside the cutoff sphere for a cell (counted first, then
    /// stored in a fallibly reserved list). Errors: [`crate::Error::Range`] (more wave vectors
    /// than the limits of [`super::params::direct_mmax`]), [`crate::Error::Alloc`]. On error the
    /// state is unchanged.
    pub fn set_box(&mut self, bx: &PeriodicBox) -> Result<()> {
        let mm = super::params::direct_mmax(bx, self.kc)?;
        let mmi = mm.map(|v| v as i64);
        let kc2 = self.kc * self.kc;
        let inside = |m0: i64, m1: i64, m2: i64| {
            let half = m0 > 0 || (m0 == 0 && (m1 > 0 || (m1 == 0 && m2 > 0)));
            let k = bx.kvec([m0 as f64, m1 as f64, m2 as f64]);
            half && k[0] * k[0] + k[1] * k[1] + k[2] * k[2] <= kc2
        };
        let mut count = 0usize;
        let mut visited = 0usize;
        let mut over = false;
        Self::columns(bx, self.kc, mmi, |m0, m1, lo, hi| {
            if over {
                return;
            }
            visited += (hi - lo + 1).max(0) as usize;
            if visited > 4 * super::params::MAX_DIRECT_MODES {
                over = true;
                return;
            }
            count += (lo..=hi).filter(|&m2| inside(m0, m1, m2)).count();
        });
        if over || count > super::params::MAX_DIRECT_MODES {
            return Err(crate::Error::Range(format!(
                "the direct sum needs more than 2^26 wave vectors for this cell and cutoff k_c = {:.3e}; use SPME or spectral Ewald",
                self.kc
            )));
        }
        let mut modes = try_vec::<[i32; 3]>(count, "direct-sum wave vector list")?;
        Self::columns(bx, self.kc, mmi, |m0, m1, lo, hi| {
            for m2 in lo..=hi {
                if inside(m0, m1, m2) && modes.len() < count {
                    modes.push([m0 as i32, m1 as i32, m2 as i32]);
                }
            }
        });
        self.mmax = mm;
        self.modes = modes;
        Ok(())
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
        let mut es: Vec<Vec<Complex64>> = (0..nt).map(|_| try_zeroed_vec(n, "Ewald k-sum phases")).collect::<Result<_>>()?;
        let ep = super::Shared(es.as_mut_ptr());
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
            let (ap, vp, ep) = (ap, vp, ep);
            let t = if parallel { rayon::current_thread_index().expect("in the plan's pool") } else { 0 };
            assert!(t < nt);
            // SAFETY: one buffer per pool thread; tasks on a thread run one after the other.
            let acc = unsafe { &mut *ap.0.add(t) };
            let vir = unsafe { &mut *vp.0.add(t) };
            // SAFETY: as acc.
            let e = unsafe { &mut *ep.0.add(t) };
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
