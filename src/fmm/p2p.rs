//! P2P: direct interactions of a leaf's particles with the particles of its neighbour leaves
//! (26 neighbours + itself; periodic images carry a coordinate shift):
//! `φ_i += Σ_j q_j/r_ij`, `E_i += Σ_j q_j (x_i − x_j)/r_ij³`.
//!
//! Vectorised over `W` targets (lanes) with the sources broadcast one at a time; coordinates are
//! structure-of-arrays in leaf (Morton) order. Branch-free: a pair at distance zero (the particle
//! itself) contributes nothing (`1/r` is replaced by 0 by a select), so coincident distinct
//! particles are skipped as well (their interaction is infinite anyway).

use super::simd::{Scalar, Simd, W};

/// One source range of a target leaf: sorted particles `start..end`, shifted by `shift`.
#[derive(Debug, Clone, Copy)]
pub struct SourceRange {
    /// First sorted particle.
    pub start: u32,
    /// One past the last.
    pub end: u32,
    /// Image shift added to the source coordinates (zero for open boundaries).
    pub shift: [f64; 3],
}

/// Sorted particle arrays (structure of arrays).
#[derive(Clone, Copy)]
pub struct Particles<'a> {
    /// x coordinates.
    pub x: &'a [f64],
    /// y coordinates.
    pub y: &'a [f64],
    /// z coordinates.
    pub z: &'a [f64],
    /// Charges.
    pub q: &'a [f64],
}

/// Adds to the targets `t0..t1` (sorted indices) the potential (`phi[i − t0]`) and, with
/// `FIELD`, the field (`ex, ey, ez[i − t0]`) of the sources `srcs`.
#[inline(always)]
pub fn p2p_body<S: Simd, const FIELD: bool>(v: S, pt: Particles, t0: usize, t1: usize, srcs: &[SourceRange], phi: &mut [f64], ex: &mut [f64], ey: &mut [f64], ez: &mut [f64]) {
    let mut i0 = t0;
    while i0 < t1 {
        let cnt = W.min(t1 - i0);
        let (mut txa, mut tya, mut tza) = ([0.0; W], [0.0; W], [0.0; W]);
        for k in 0..W {
            let i = if k < cnt { i0 + k } else { i0 };
            txa[k] = pt.x[i];
            tya[k] = pt.y[i];
            tza[k] = pt.z[i];
        }
        let (tx, ty, tz) = (v.load(&txa), v.load(&tya), v.load(&tza));
        let z = v.splat(0.0);
        let (mut ap, mut ax, mut ay, mut az) = (z, z, z, z);
        for s in srcs {
            let (a, b) = (s.start as usize, s.end as usize);
            let (xs, ys, zs, qs) = (&pt.x[a..b], &pt.y[a..b], &pt.z[a..b], &pt.q[a..b]);
            // the image shift is applied to the targets instead of every source
            let (sx, sy, sz) = (v.sub(tx, v.splat(s.shift[0])), v.sub(ty, v.splat(s.shift[1])), v.sub(tz, v.splat(s.shift[2])));
            for j in 0..b - a {
                let dx = v.sub(sx, v.splat(xs[j]));
                let dy = v.sub(sy, v.splat(ys[j]));
                let dz = v.sub(sz, v.splat(zs[j]));
                let r2 = v.fma(dx, dx, v.fma(dy, dy, v.mul(dz, dz)));
                let inv = v.rsqrt_or_zero(r2);
                let qi = v.mul(v.splat(qs[j]), inv);
                ap = v.add(ap, qi);
                if FIELD {
                    let q3 = v.mul(qi, v.mul(inv, inv));
                    ax = v.fma(q3, dx, ax);
                    ay = v.fma(q3, dy, ay);
                    az = v.fma(q3, dz, az);
                }
            }
        }
        let mut out = [[0.0; W]; 4];
        v.store(&mut out[0], ap);
        v.store(&mut out[1], ax);
        v.store(&mut out[2], ay);
        v.store(&mut out[3], az);
        let o = i0 - t0;
        for k in 0..cnt {
            phi[o + k] += out[0][k];
            if FIELD {
                ex[o + k] += out[1][k];
                ey[o + k] += out[2][k];
                ez[o + k] += out[3][k];
            }
        }
        i0 += W;
    }
}

/// [`p2p_body`] with run-time CPU dispatch; `field = None` computes the potential only.
pub fn p2p(pt: Particles, t0: usize, t1: usize, srcs: &[SourceRange], phi: &mut [f64], field: Option<(&mut [f64], &mut [f64], &mut [f64])>) {
    match field {
        Some((ex, ey, ez)) => {
            #[cfg(target_arch = "x86_64")]
            if crate::simd::has_avx2_fma() {
                // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
                return unsafe { p2p_avx2::<true>(pt, t0, t1, srcs, phi, ex, ey, ez) };
            }
            p2p_body::<_, true>(Scalar, pt, t0, t1, srcs, phi, ex, ey, ez)
        }
        None => {
            let (mut a, mut b, mut c) = ([0.0; 0], [0.0; 0], [0.0; 0]);
            #[cfg(target_arch = "x86_64")]
            if crate::simd::has_avx2_fma() {
                // SAFETY: as above.
                return unsafe { p2p_avx2::<false>(pt, t0, t1, srcs, phi, &mut a, &mut b, &mut c) };
            }
            p2p_body::<_, false>(Scalar, pt, t0, t1, srcs, phi, &mut a, &mut b, &mut c)
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn p2p_avx2<const FIELD: bool>(pt: Particles, t0: usize, t1: usize, srcs: &[SourceRange], phi: &mut [f64], ex: &mut [f64], ey: &mut [f64], ez: &mut [f64]) {
    p2p_body::<_, FIELD>(super::simd::Avx2::new_unchecked(), pt, t0, t1, srcs, phi, ex, ey, ez)
}
