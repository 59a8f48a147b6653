//! Solid harmonics and the coefficient storage of the FMM expansions.
//!
//! # Convention (Dachsel; White & Head-Gordon 1994; the seed paper's eqs. 7–8)
//! With `P_l^m` the associated Legendre functions *with* the Condon–Shortley phase,
//!
//! * regular solid harmonics   `O_lm(r) = r^l P_l^m(cos θ) e^{imφ} / (l+m)!`,
//! * irregular solid harmonics `M_lm(r) = (l−m)! P_l^m(cos θ) e^{imφ} / r^{l+1}`.
//!
//! Both obey `X_{l,−m} = (−1)^m conj(X_lm)`, so only `m ≥ 0` is stored (complex values, real
//! and imaginary parts in separate planes). In this normalisation the addition theorems carry
//! no extra factors (Tough & Stone 1977; White & Head-Gordon, J. Chem. Phys. 101, 6593 (1994)):
//!
//! * `1/|x − s| = Σ_lm conj(O_lm(s)) M_lm(x)` for `|s| < |x|`,
//! * `O_lm(a + b) = Σ_jk O_jk(a) O_{l−j,m−k}(b)` (finite sum),
//! * `M_lm(R + y) = Σ_jk (−1)^j conj(O_jk(y)) M_{l+j,m+k}(R)` for `|y| < |R|`.
//!
//! Recurrences used below (from the Legendre recurrences):
//! `O_mm = −(x+iy)/(2m) O_{m−1,m−1}`, `(l+m)(l−m) O_lm = (2l−1) z O_{l−1,m} − r² O_{l−2,m}`;
//! `M_mm = −(2m−1)(x+iy)/r² M_{m−1,m−1}`,
//! `r² M_lm = (2l−1) z M_{l−1,m} − (l−1+m)(l−1−m) M_{l−2,m}`.
//!
//! Gradients of regular harmonics are regular harmonics one degree lower:
//! `∂z O_lm = O_{l−1,m}`, `∂x O_lm = (O_{l−1,m+1} − O_{l−1,m−1})/2`,
//! `∂y O_lm = −i (O_{l−1,m−1} + O_{l−1,m+1})/2` (from the addition theorem with `l = 1`).
//!
//! # Expansions and scaling
//! A box of side `h` and centre `c` carries a multipole expansion `ω̃` and a local expansion
//! `μ̃` **in box units**:
//! `ω̃_lm = Σ_i q_i O_lm((s_i − c)/h)` and `φ(x) = (1/h) Σ_lm μ̃_lm O_lm((x − c)/h)`, the far
//! potential of the box's charges being `φ(x) = (1/h) Σ_lm ω̃_lm conj(M_lm((x − c)/h))`.
//! With this scaling the M2L operator depends only on the integer offset of the two boxes, not
//! on the level, and all coefficients stay O(charge) whatever the length unit.
//!
//! # Storage ("layout the GPU port reuses")
//! One expansion of order `p` is a block of `2·nc` doubles, `nc = (p+1)(p+2)/2`:
//! `block[idx(l,m)]` = real part, `block[nc + idx(l,m)]` = imaginary part, `idx(l,m) =
//! l(l+1)/2 + m`, `0 ≤ m ≤ l ≤ p`. A level stores its occupied boxes box-major:
//! `level[b·2nc + …]` (boxes in Morton order), so one box's coefficients are contiguous.

use super::simd::{Simd, W};

/// Number of stored complex coefficients (`m ≥ 0`) of an expansion of order `p`.
#[inline(always)]
pub const fn ncoef(p: usize) -> usize {
    (p + 1) * (p + 2) / 2
}

/// Index of `(l, m)`, `0 ≤ m ≤ l`, in a coefficient plane.
#[inline(always)]
pub const fn idx(l: usize, m: usize) -> usize {
    l * (l + 1) / 2 + m
}

/// `(−1)^n` as f64.
#[inline(always)]
pub fn sgn(n: i64) -> f64 {
    if n & 1 == 0 {
        1.0
    } else {
        -1.0
    }
}

/// Coefficient `(l, m)` of a block for any `m` (`|m| ≤ l`, else zero), using
/// `X_{l,−m} = (−1)^m conj(X_lm)`.
#[inline(always)]
pub fn get(block: &[f64], nc: usize, l: i64, m: i64) -> (f64, f64) {
    if l < 0 || m.abs() > l {
        return (0.0, 0.0);
    }
    let i = idx(l as usize, m.unsigned_abs() as usize);
    let (re, im) = (block[i], block[nc + i]);
    if m >= 0 {
        (re, im)
    } else {
        let s = sgn(m);
        (s * re, -s * im)
    }
}

/// Factorials `n!` for `n ≤ nmax` as f64.
pub fn factorials(nmax: usize) -> Vec<f64> {
    let mut f = vec![1.0; nmax + 1];
    for n in 1..=nmax {
        f[n] = f[n - 1] * n as f64;
    }
    f
}

/// Tables of the recurrence coefficients for the regular harmonics of order `p`.
#[derive(Debug, Clone)]
pub struct RegTables {
    /// Order.
    pub p: usize,
    /// `(2l−1)/((l+m)(l−m))` at `idx(l,m)` (for `l ≥ m+2`).
    a: Vec<f64>,
    /// `1/((l+m)(l−m))` at `idx(l,m)`.
    b: Vec<f64>,
}

impl RegTables {
    /// Tables for order `p`.
    pub fn new(p: usize) -> Self {
        let n = ncoef(p);
        let mut a = vec![0.0; n];
        let mut b = vec![0.0; n];
        for m in 0..=p {
            for l in m + 2..=p {
                let d = ((l + m) * (l - m)) as f64;
                a[idx(l, m)] = (2 * l - 1) as f64 / d;
                b[idx(l, m)] = 1.0 / d;
            }
        }
        RegTables { p, a, b }
    }

    /// Regular solid harmonics `O_lm` (`l ≤ p`, `m ≥ 0`) of `W` points at once, lane-major:
    /// `re[idx(l,m)][lane]`, `im[idx(l,m)][lane]`. The slices must hold `ncoef(p)` rows.
    #[inline(always)]
    pub fn regular_lanes<S: Simd>(&self, s: S, x: &[f64; W], y: &[f64; W], z: &[f64; W], re: &mut [[f64; W]], im: &mut [[f64; W]]) {
        let p = self.p;
        let (x, y, z) = (s.load(x), s.load(y), s.load(z));
        let r2 = s.fma(x, x, s.fma(y, y, s.mul(z, z)));
        // diagonal O_mm and the column m, kept in registers along l
        let (mut dr, mut di) = (s.splat(1.0), s.splat(0.0));
        for m in 0..=p {
            if m > 0 {
                // O_mm = −(x + iy)/(2m) O_{m−1,m−1}
                let f = s.splat(-0.5 / m as f64);
                let nr = s.mul(f, s.fnma(y, di, s.mul(x, dr)));
                let ni = s.mul(f, s.fma(y, dr, s.mul(x, di)));
                dr = nr;
                di = ni;
            }
            s.store(&mut re[idx(m, m)], dr);
            s.store(&mut im[idx(m, m)], di);
            if m == p {
                break;
            }
            let (mut ar, mut ai) = (dr, di); // O_{l−2,m}
            let (mut br, mut bi) = (s.mul(z, dr), s.mul(z, di)); // O_{l−1,m} = O_{m+1,m}
            s.store(&mut re[idx(m + 1, m)], br);
            s.store(&mut im[idx(m + 1, m)], bi);
            for l in m + 2..=p {
                let i = idx(l, m);
                let (a, b) = (s.splat(self.a[i]), s.splat(self.b[i]));
                let az = s.mul(a, z);
                let br2 = s.mul(b, r2);
                let cr = s.fnma(br2, ar, s.mul(az, br));
                let ci = s.fnma(br2, ai, s.mul(az, bi));
                s.store(&mut re[i], cr);
                s.store(&mut im[i], ci);
                ar = br;
                ai = bi;
                br = cr;
                bi = ci;
            }
        }
    }

    /// Regular solid harmonics of one point into a block (`re` = `out[..nc]`, `im` = `out[nc..]`).
    pub fn regular(&self, r: [f64; 3], out: &mut [f64]) {
        let p = self.p;
        let nc = ncoef(p);
        let (x, y, z) = (r[0], r[1], r[2]);
        let r2 = x * x + y * y + z * z;
        let (re, im) = out.split_at_mut(nc);
        re[0] = 1.0;
        im[0] = 0.0;
        for m in 0..=p {
            let imm = idx(m, m);
            if m > 0 {
                let prev = idx(m - 1, m - 1);
                let f = -0.5 / m as f64;
                let (pr, pi) = (re[prev], im[prev]);
                re[imm] = f * (x * pr - y * pi);
                im[imm] = f * (x * pi + y * pr);
            }
            if m < p {
                let i1 = idx(m + 1, m);
                re[i1] = z * re[imm];
                im[i1] = z * im[imm];
            }
            for l in m + 2..=p {
                let i = idx(l, m);
                let (i1, i2) = (idx(l - 1, m), idx(l - 2, m));
                let (a, b) = (self.a[i], self.b[i]);
                re[i] = a * z * re[i1] - b * r2 * re[i2];
                im[i] = a * z * im[i1] - b * r2 * im[i2];
            }
        }
    }
}

/// Irregular solid harmonics `M_lm(r)` (`l ≤ p`, `m ≥ 0`) of one point `r ≠ 0` into a block.
pub fn irregular(p: usize, r: [f64; 3], out: &mut [f64]) {
    let nc = ncoef(p);
    let (x, y, z) = (r[0], r[1], r[2]);
    let inv_r2 = 1.0 / (x * x + y * y + z * z);
    let (re, im) = out.split_at_mut(nc);
    re[0] = inv_r2.sqrt();
    im[0] = 0.0;
    for m in 0..=p {
        let imm = idx(m, m);
        if m > 0 {
            let prev = idx(m - 1, m - 1);
            let f = -((2 * m - 1) as f64) * inv_r2;
            let (pr, pi) = (re[prev], im[prev]);
            re[imm] = f * (x * pr - y * pi);
            im[imm] = f * (x * pi + y * pr);
        }
        if m < p {
            let i1 = idx(m + 1, m);
            let f = (2 * m + 1) as f64 * z * inv_r2;
            re[i1] = f * re[imm];
            im[i1] = f * im[imm];
        }
        for l in m + 2..=p {
            let i = idx(l, m);
            let (i1, i2) = (idx(l - 1, m), idx(l - 2, m));
            let a = (2 * l - 1) as f64 * z * inv_r2;
            let b = ((l - 1 + m) * (l - 1 - m)) as f64 * inv_r2;
            re[i] = a * re[i1] - b * re[i2];
            im[i] = a * im[i1] - b * im[i2];
        }
    }
}

/// Irregular solid harmonics `M_lm` (`l ≤ p`, `m ≥ 0`) of `W` points at once, lane-major
/// (`re[idx(l,m)][lane]`, `im[idx(l,m)][lane]`; the slices hold `ncoef(p)` rows), by the
/// recurrences of [`irregular`]. A lane at the origin gets zeros (padding lanes).
#[inline(always)]
pub fn irregular_lanes<S: Simd>(s: S, p: usize, x: &[f64; W], y: &[f64; W], z: &[f64; W], re: &mut [[f64; W]], im: &mut [[f64; W]]) {
    let (x, y, z) = (s.load(x), s.load(y), s.load(z));
    let inv_r = s.rsqrt_or_zero(s.fma(x, x, s.fma(y, y, s.mul(z, z))));
    let inv_r2 = s.mul(inv_r, inv_r);
    let (xs, ys, zs) = (s.mul(x, inv_r2), s.mul(y, inv_r2), s.mul(z, inv_r2));
    let (mut dr, mut di) = (inv_r, s.splat(0.0));
    for m in 0..=p {
        if m > 0 {
            // M_mm = −(2m−1)(x + iy)/r² M_{m−1,m−1}
            let f = s.splat(-((2 * m - 1) as f64));
            let nr = s.mul(f, s.fnma(ys, di, s.mul(xs, dr)));
            let ni = s.mul(f, s.fma(ys, dr, s.mul(xs, di)));
            dr = nr;
            di = ni;
        }
        s.store(&mut re[idx(m, m)], dr);
        s.store(&mut im[idx(m, m)], di);
        if m == p {
            break;
        }
        let f = s.mul(s.splat((2 * m + 1) as f64), zs);
        let (mut ar, mut ai) = (dr, di); // M_{l−2,m}
        let (mut br, mut bi) = (s.mul(f, dr), s.mul(f, di)); // M_{l−1,m} = M_{m+1,m}
        s.store(&mut re[idx(m + 1, m)], br);
        s.store(&mut im[idx(m + 1, m)], bi);
        for l in m + 2..=p {
            let i = idx(l, m);
            let a = s.mul(s.splat((2 * l - 1) as f64), zs);
            let b = s.mul(s.splat(((l - 1 + m) * (l - 1 - m)) as f64), inv_r2);
            let cr = s.fnma(b, ar, s.mul(a, br));
            let ci = s.fnma(b, ai, s.mul(a, bi));
            s.store(&mut re[i], cr);
            s.store(&mut im[i], ci);
            ar = br;
            ai = bi;
            br = cr;
            bi = ci;
        }
    }
}

/// `Σ_lm a_lm b_lm` over all `m` (both signs) for two blocks with the `(−1)^m conj` symmetry:
/// `Σ_l [a_l0 b_l0 + 2 Σ_{m>0} Re(a_lm b_lm)]` (real). Used to evaluate local expansions.
pub fn dot_local(p: usize, a: &[f64], b: &[f64]) -> f64 {
    let nc = ncoef(p);
    let mut s = 0.0;
    for l in 0..=p {
        s += a[idx(l, 0)] * b[idx(l, 0)];
        for m in 1..=l {
            let i = idx(l, m);
            s += 2.0 * (a[i] * b[i] - a[nc + i] * b[nc + i]);
        }
    }
    s
}

/// `Σ_lm a_lm conj(b_lm)` over all `m` (real): evaluates a multipole expansion `a` against
/// irregular harmonics `b`.
pub fn dot_multipole(p: usize, a: &[f64], b: &[f64]) -> f64 {
    let nc = ncoef(p);
    let mut s = 0.0;
    for l in 0..=p {
        s += a[idx(l, 0)] * b[idx(l, 0)];
        for m in 1..=l {
            let i = idx(l, m);
            s += 2.0 * (a[i] * b[i] + a[nc + i] * b[nc + i]);
        }
    }
    s
}
