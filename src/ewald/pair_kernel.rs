//! The real-space pair kernel: for one atom `i` against a run of atoms `j` (structure of arrays,
//! padded to multiples of 4), accumulates `erfc(ξr)/r` potentials, fields and the virial,
//! updating both atoms (each pair is visited once).
//!
//! Per pair, with `d = r_i − r_j`, `r = |d| < r_c`, `x = ξ r`:
//! `v(r) = erfc(x)/r`, `φ_i += q_j v`, `φ_j += q_i v`, `E_i += q_j f d`, `E_j −= q_i f d`,
//! `W += q_i q_j f d⊗d` with `f = −v'(r)/r = (erfc(x)/r + (2ξ/√π) e^{−x²}) / r²`.
//!
//! Two implementations with the same arithmetic: a portable scalar loop, and an AVX2/FMA loop
//! (4 pairs per step, chosen at run time) with `1/r` from `rsqrtps` refined by two Newton steps
//! (relative error ≈ 1e-13) and the pair functions from the polynomials of
//! [`super::erfc::PairFit`] (no `exp`, no division; the even and odd parts of both polynomials
//! are four independent Horner chains). Blocks of 4 with no pair inside the cutoff are skipped
//! after the distance test. Coincident atoms (`r = 0`) are skipped.

use super::erfc::{poly, PairFit};

/// Constants of the pair kernel.
#[derive(Debug, Clone)]
pub(crate) struct PairConsts {
    pub xi: f64,
    pub rc2: f64,
    /// `2ξ/√π`.
    pub c2: f64,
    pub fit: PairFit,
    /// Use `libm::erfc` (the reference path of the direct sum) instead of the fit.
    pub exact: bool,
}

impl PairConsts {
    pub fn new(xi: f64, rc: f64, rel_acc: f64, exact: bool) -> Self {
        PairConsts {
            xi,
            rc2: rc * rc,
            c2: 2.0 * xi / std::f64::consts::PI.sqrt(),
            fit: PairFit::new(xi, rc, if exact { 1e-3 } else { rel_acc }),
            exact,
        }
    }

    /// `(v(r), f(r))` of the module docs for `0 < r² ≤ r_c²`.
    #[inline(always)]
    pub fn pair(&self, r2: f64) -> (f64, f64) {
        let rinv = 1.0 / r2.sqrt();
        if self.exact {
            let r = r2 * rinv;
            let x = self.xi * r;
            let pot = libm::erfc(x) * rinv;
            return (pot, (pot + self.c2 * (-x * x).exp()) * rinv * rinv);
        }
        let w = r2 * self.fit.s - 1.0;
        let pot = rinv - poly(&self.fit.g, w);
        (pot, rinv * rinv * rinv - poly(&self.fit.h, w))
    }
}

/// Sorted atoms, structure of arrays (padding slots have `q = 0` and far-away positions).
#[derive(Clone, Copy)]
pub(crate) struct Soa {
    pub x: *const f64,
    pub y: *const f64,
    pub z: *const f64,
    pub q: *const f64,
}
// SAFETY: the arrays behind `Soa` are only read while a kernel runs.
unsafe impl Send for Soa {}
unsafe impl Sync for Soa {}

/// Per-thread accumulators of the `j` side, same slots as [`Soa`].
#[derive(Clone, Copy)]
pub(crate) struct Acc {
    pub phi: *mut f64,
    pub ex: *mut f64,
    pub ey: *mut f64,
    pub ez: *mut f64,
}

/// Interactions of atom `i` (position `xi`, already moved to the image of the `j` run, charge
/// `qi`) with the slots `j0..j1` (`j1 − j0` a multiple of 4), counting only slots `j ≥ jmin`.
/// Adds `[φ_i, E_i]` into `out_i`, the `j` side into `acc`, `W` (xx, xy, xz, yy, yz, zz) into `vir`.
///
/// # Safety
/// `s` and `acc` must be valid for the slots `j0..j1`; no other thread may write `acc` there.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn block<const FIELD: bool, const VIR: bool>(
    k: &PairConsts, s: Soa, xi: [f64; 3], qi: f64, jmin: usize, j0: usize, j1: usize, acc: Acc,
    out_i: &mut [f64; 4], vir: &mut [f64; 6],
) {
    #[cfg(target_arch = "x86_64")]
    if !k.exact && crate::ewald::simd_ok() {
        block_avx2::<FIELD, VIR>(k, s, xi, qi, jmin, j0, j1, acc, out_i, vir);
        return;
    }
    block_scalar::<FIELD, VIR>(k, s, xi, qi, jmin, j0, j1, acc, out_i, vir)
}

/// Portable version of [`block`].
///
/// # Safety
/// As [`block`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn block_scalar<const FIELD: bool, const VIR: bool>(
    k: &PairConsts, s: Soa, xi: [f64; 3], qi: f64, jmin: usize, j0: usize, j1: usize, acc: Acc,
    out_i: &mut [f64; 4], vir: &mut [f64; 6],
) {
    let mut oi = [0.0f64; 4];
    let mut w = [0.0f64; 6];
    for j in j0.max(jmin)..j1 {
        let dx = xi[0] - *s.x.add(j);
        let dy = xi[1] - *s.y.add(j);
        let dz = xi[2] - *s.z.add(j);
        let r2 = dx * dx + dy * dy + dz * dz;
        if !(r2 < k.rc2 && r2 > 0.0) {
            continue;
        }
        let qj = *s.q.add(j);
        let (pot, fs) = k.pair(r2);
        oi[0] += qj * pot;
        *acc.phi.add(j) += qi * pot;
        if FIELD {
            let (fx, fy, fz) = (fs * dx, fs * dy, fs * dz);
            oi[1] += qj * fx;
            oi[2] += qj * fy;
            oi[3] += qj * fz;
            *acc.ex.add(j) -= qi * fx;
            *acc.ey.add(j) -= qi * fy;
            *acc.ez.add(j) -= qi * fz;
        }
        if VIR {
            let c = qi * qj * fs;
            w[0] += c * dx * dx;
            w[1] += c * dx * dy;
            w[2] += c * dx * dz;
            w[3] += c * dy * dy;
            w[4] += c * dy * dz;
            w[5] += c * dz * dz;
        }
    }
    for d in 0..4 {
        out_i[d] += oi[d];
    }
    for d in 0..6 {
        vir[d] += w[d];
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hsum(v: std::arch::x86_64::__m256d) -> f64 {
    use std::arch::x86_64::*;
    let lo = _mm256_castpd256_pd128(v);
    let hi = _mm256_extractf128_pd(v, 1);
    let s = _mm_add_pd(lo, hi);
    _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)))
}

/// AVX2/FMA version of [`block`].
///
/// # Safety
/// As [`block`], and the CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn block_avx2<const FIELD: bool, const VIR: bool>(
    k: &PairConsts, s: Soa, xi: [f64; 3], qi: f64, jmin: usize, j0: usize, j1: usize, acc: Acc,
    out_i: &mut [f64; 4], vir: &mut [f64; 6],
) {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_pd();
    let one = _mm256_set1_pd(1.0);
    let xv = _mm256_set1_pd(xi[0]);
    let yv = _mm256_set1_pd(xi[1]);
    let zv = _mm256_set1_pd(xi[2]);
    let qiv = _mm256_set1_pd(qi);
    let rc2 = _mm256_set1_pd(k.rc2);
    let r2min = _mm256_set1_pd(k.rc2 * 1e-24);
    let sv = _mm256_set1_pd(k.fit.s);
    let gc = &k.fit.g;
    let hc = &k.fit.h;
    let nc = gc.len();
    debug_assert_eq!(hc.len(), nc);
    let ne = nc.div_ceil(2);
    let half = _mm256_set1_pd(0.5);
    let three_half = _mm256_set1_pd(1.5);
    let lane = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
    let jminv = _mm256_set1_pd(jmin as f64);
    let (mut phi_i, mut ex_i, mut ey_i, mut ez_i) = (zero, zero, zero, zero);
    let (mut wxx, mut wxy, mut wxz, mut wyy, mut wyz, mut wzz) = (zero, zero, zero, zero, zero, zero);
    let mut j = j0;
    while j < j1 {
        let dx = _mm256_sub_pd(xv, _mm256_loadu_pd(s.x.add(j)));
        let dy = _mm256_sub_pd(yv, _mm256_loadu_pd(s.y.add(j)));
        let dz = _mm256_sub_pd(zv, _mm256_loadu_pd(s.z.add(j)));
        let r2 = _mm256_fmadd_pd(dx, dx, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dz, dz)));
        let mut m = _mm256_and_pd(_mm256_cmp_pd(r2, rc2, _CMP_LT_OQ), _mm256_cmp_pd(r2, zero, _CMP_GT_OQ));
        if jmin > j {
            let jv = _mm256_add_pd(_mm256_set1_pd(j as f64), lane);
            m = _mm256_and_pd(m, _mm256_cmp_pd(jv, jminv, _CMP_GE_OQ));
        }
        if _mm256_movemask_pd(m) == 0 {
            j += 4;
            continue;
        }
        let r2c = _mm256_max_pd(_mm256_min_pd(r2, rc2), r2min);
        // 1/r: single-precision estimate, two Newton steps y ← y(3/2 − r²y²/2)
        let y = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(r2c)));
        let h = _mm256_mul_pd(half, r2c);
        let y = _mm256_mul_pd(y, _mm256_fnmadd_pd(h, _mm256_mul_pd(y, y), three_half));
        let rinv = _mm256_mul_pd(y, _mm256_fnmadd_pd(h, _mm256_mul_pd(y, y), three_half));
        // ξG and ξ³H in w = r²s − 1: even/odd Horner chains in w²
        let w = _mm256_fmsub_pd(r2c, sv, one);
        let w2 = _mm256_mul_pd(w, w);
        let (mut ge, mut go, mut he, mut ho) = (zero, zero, zero, zero);
        let mut kk = ne;
        if nc % 2 == 1 {
            kk -= 1;
            ge = _mm256_set1_pd(*gc.get_unchecked(2 * kk));
            he = _mm256_set1_pd(*hc.get_unchecked(2 * kk));
        }
        while kk > 0 {
            kk -= 1;
            ge = _mm256_fmadd_pd(ge, w2, _mm256_set1_pd(*gc.get_unchecked(2 * kk)));
            go = _mm256_fmadd_pd(go, w2, _mm256_set1_pd(*gc.get_unchecked(2 * kk + 1)));
            he = _mm256_fmadd_pd(he, w2, _mm256_set1_pd(*hc.get_unchecked(2 * kk)));
            ho = _mm256_fmadd_pd(ho, w2, _mm256_set1_pd(*hc.get_unchecked(2 * kk + 1)));
        }
        let pot = _mm256_sub_pd(rinv, _mm256_fmadd_pd(go, w, ge));
        let fs = _mm256_fmsub_pd(_mm256_mul_pd(rinv, rinv), rinv, _mm256_fmadd_pd(ho, w, he));
        let pot = _mm256_and_pd(m, pot);
        let fs = _mm256_and_pd(m, fs);
        let qj = _mm256_loadu_pd(s.q.add(j));
        phi_i = _mm256_fmadd_pd(qj, pot, phi_i);
        let ap = acc.phi.add(j);
        _mm256_storeu_pd(ap, _mm256_fmadd_pd(qiv, pot, _mm256_loadu_pd(ap)));
        if FIELD {
            let fx = _mm256_mul_pd(fs, dx);
            let fy = _mm256_mul_pd(fs, dy);
            let fz = _mm256_mul_pd(fs, dz);
            ex_i = _mm256_fmadd_pd(qj, fx, ex_i);
            ey_i = _mm256_fmadd_pd(qj, fy, ey_i);
            ez_i = _mm256_fmadd_pd(qj, fz, ez_i);
            let (px, py, pz) = (acc.ex.add(j), acc.ey.add(j), acc.ez.add(j));
            _mm256_storeu_pd(px, _mm256_fnmadd_pd(qiv, fx, _mm256_loadu_pd(px)));
            _mm256_storeu_pd(py, _mm256_fnmadd_pd(qiv, fy, _mm256_loadu_pd(py)));
            _mm256_storeu_pd(pz, _mm256_fnmadd_pd(qiv, fz, _mm256_loadu_pd(pz)));
        }
        if VIR {
            let w = _mm256_mul_pd(_mm256_mul_pd(qiv, qj), fs);
            let wx = _mm256_mul_pd(w, dx);
            let wy = _mm256_mul_pd(w, dy);
            wxx = _mm256_fmadd_pd(wx, dx, wxx);
            wxy = _mm256_fmadd_pd(wx, dy, wxy);
            wxz = _mm256_fmadd_pd(wx, dz, wxz);
            wyy = _mm256_fmadd_pd(wy, dy, wyy);
            wyz = _mm256_fmadd_pd(wy, dz, wyz);
            wzz = _mm256_fmadd_pd(_mm256_mul_pd(w, dz), dz, wzz);
        }
        j += 4;
    }
    out_i[0] += hsum(phi_i);
    if FIELD {
        out_i[1] += hsum(ex_i);
        out_i[2] += hsum(ey_i);
        out_i[3] += hsum(ez_i);
    }
    if VIR {
        for (v, r) in vir.iter_mut().zip([wxx, wxy, wxz, wyy, wyz, wzz]) {
            *v += hsum(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avx2_matches_scalar() {
        #[cfg(target_arch = "x86_64")]
        {
            if !crate::ewald::simd_ok() {
                return;
            }
            let k = PairConsts::new(3.1, 1.2, 1e-13, false);
            let n = 64;
            let mut x = vec![0.0; n];
            let mut y = vec![0.0; n];
            let mut z = vec![0.0; n];
            let mut q = vec![0.0; n];
            for j in 0..n {
                let t = j as f64 * 0.37;
                x[j] = 0.9 * t.sin();
                y[j] = 0.8 * (1.3 * t).cos();
                z[j] = 0.7 * (0.7 * t).sin();
                q[j] = if j % 3 == 0 { -0.8 } else { 0.4 };
            }
            x[5] = 1e30; // padding-like slot
            let s = Soa { x: x.as_ptr(), y: y.as_ptr(), z: z.as_ptr(), q: q.as_ptr() };
            let run = |avx: bool, jmin: usize| {
                let mut a = vec![0.0; 4 * n];
                let p = a.as_mut_ptr();
                let acc = unsafe { Acc { phi: p, ex: p.add(n), ey: p.add(2 * n), ez: p.add(3 * n) } };
                let mut oi = [0.0; 4];
                let mut vir = [0.0; 6];
                unsafe {
                    if avx {
                        block_avx2::<true, true>(&k, s, [0.1, -0.2, 0.05], 0.7, jmin, 0, n, acc, &mut oi, &mut vir);
                    } else {
                        block_scalar::<true, true>(&k, s, [0.1, -0.2, 0.05], 0.7, jmin, 0, n, acc, &mut oi, &mut vir);
                    }
                }
                (a, oi, vir)
            };
            for jmin in [0usize, 7] {
                let (a1, o1, v1) = run(true, jmin);
                let (a2, o2, v2) = run(false, jmin);
                for i in 0..4 * n {
                    assert!((a1[i] - a2[i]).abs() <= 1e-12 * (1.0 + a2[i].abs()), "{i}: {} {}", a1[i], a2[i]);
                }
                for i in 0..4 {
                    assert!((o1[i] - o2[i]).abs() <= 1e-12 * (1.0 + o2[i].abs()));
                }
                for i in 0..6 {
                    assert!((v1[i] - v2[i]).abs() <= 1e-12 * (1.0 + v2[i].abs()));
                }
                assert!(a2[5] == 0.0);
                if jmin == 7 {
                    assert!(a2[6] == 0.0 && a2[7] != 0.0);
                } else {
                    assert!(a2[6] != 0.0);
                }
            }
        }
    }
}

#[cfg(test)]
mod bench {
    use super::*;

    /// Time per 4-lane block of the AVX2 kernel with all lanes inside the cutoff (ignored).
    #[test]
    #[ignore]
    fn bench_block() {
        let k = PairConsts::new(4.74, 0.68, 1e-6, false);
        let n = 256;
        let mut x = vec![0.0; n];
        let mut y = vec![0.0; n];
        let mut z = vec![0.0; n];
        let q = vec![0.3; n];
        for j in 0..n {
            let t = j as f64 * 0.37;
            x[j] = 0.3 * t.sin();
            y[j] = 0.3 * (1.3 * t).cos();
            z[j] = 0.3 * (0.7 * t).sin();
        }
        let s = Soa { x: x.as_ptr(), y: y.as_ptr(), z: z.as_ptr(), q: q.as_ptr() };
        let mut a = vec![0.0; 4 * n];
        let p = a.as_mut_ptr();
        let acc = unsafe { Acc { phi: p, ex: p.add(n), ey: p.add(2 * n), ez: p.add(3 * n) } };
        let mut oi = [0.0; 4];
        let mut vir = [0.0; 6];
        let reps = 20000;
        for (name, f) in [("avx2", true), ("scalar", false)] {
            let cpu = || {
                let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                // SAFETY: valid pointer.
                unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
                ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64
            };
            let t = cpu();
            for r in 0..reps {
                let xi = [0.01 * (r % 7) as f64, 0.0, 0.0];
                unsafe {
                    if f {
                        block_avx2::<true, false>(&k, s, xi, 0.5, 0, 0, n, acc, &mut oi, &mut vir);
                    } else {
                        block_scalar::<true, false>(&k, s, xi, 0.5, 0, 0, n, acc, &mut oi, &mut vir);
                    }
                }
            }
            let dt = cpu() - t;
            eprintln!("{name}: {:.2} ns (thread CPU) per pair ({} coefficients)", dt / (reps * n) as f64 * 1e9, k.fit.g.len());
        }
        assert!(oi[0].is_finite());
    }
}
