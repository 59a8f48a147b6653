//! Direct (exact, O(M·outputs)) NUFFT sums in f64, to check the fast transforms on a subset
//! of outputs. Written independently of the library: modes in CMCL order
//! (`k = i − ⌊N/2⌋`, x fastest), exponent sign `s = ±1`.
//!
//! The type-1 sum over all M points for each checked mode needs M·K complex exponentials
//! (1e9 for M = 1e7 and K = 100), so it uses [`sincos`], a branch-free sine/cosine that the
//! compiler vectorises (AVX2 chosen at run time): Cody–Waite reduction by π/2 in three
//! parts (exact for |θ| < 2²² ≈ 4·10⁶, more than any |k·x| of the benchmarks) and fdlibm's
//! minimax polynomials on [−π/4, π/4]; error ≤ 2.3e-16 absolute (tested against `sin_cos`).
//! Beyond that range it falls back to the standard library.
//!
//! The phases `k·x` are exact: the product of an integer frequency and a coordinate, rounded to
//! f64, is off by up to half an ulp of `k·x` (1.2e-10 rad at |k·x| = 1.6e6, N = 10⁶ modes in
//! 1D), which alone puts a relative error of about 5e-11 into a sum of random terms — the
//! level every library showed at tol 1e-12 in 1D against the rounded phases. So each product
//! is kept as an unevaluated sum `hi + lo` ([`exact_product`], Dekker's product; [`two_sum`]
//! over the axes) and the reduction of [`sincos_dd`] adds `lo` to the reduced argument.

use farfield::Real;
use num_complex::{Complex, Complex64};
use rayon::prelude::*;

/// Integer frequency of CMCL mode index `i` on an axis of `n` modes.
pub fn freq(i: usize, n: usize) -> f64 {
    i as f64 - (n / 2) as f64
}

/// Largest |θ| for which the fast reduction in [`sincos`] is exact.
pub const SINCOS_FAST_MAX: f64 = 4.0e6;

/// `(sin θ, cos θ)` for |θ| ≤ [`SINCOS_FAST_MAX`] (larger arguments are not reduced exactly:
/// callers check the range first).
#[inline(always)]
pub fn sincos(t: f64) -> (f64, f64) {
    sincos_dd(t, 0.0)
}

/// The exact product `k·x = hi + lo` of an integer `k` (|k| < 2²⁶) and any `x` (Dekker's
/// product, Numer. Math. 18 (1971); `x` split into halves of 26 and 27 bits by Veltkamp's
/// method, `k` needs no split, so both partial products are exact).
#[inline(always)]
pub fn exact_product(k: f64, x: f64) -> (f64, f64) {
    const SPLIT: f64 = 134_217_729.0; // 2^27 + 1
    let t = SPLIT * x;
    let xh = t - (t - x);
    let xl = x - xh;
    let p = k * x;
    (p, (k * xh - p) + k * xl)
}

/// `a + b = s + e` exactly, `s` the rounded sum (Knuth's TwoSum).
#[inline(always)]
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `(sin θ, cos θ)` for `θ = hi + lo` with |hi| ≤ [`SINCOS_FAST_MAX`] and |lo| at most a few
/// ulps of `hi`: the reduction of [`sincos`] applied to `hi`, then `lo` added to the reduced
/// argument.
#[inline(always)]
pub fn sincos_dd(t: f64, lo: f64) -> (f64, f64) {
    // π/2 = P1 + P2 + P3, P1 and P2 with 30 significant bits, so n·P1 and n·P2 are exact
    // for |n| < 2²³
    const P1: f64 = 1.570_796_325_802_803;
    const P2: f64 = 9.920_935_791_635_221e-10;
    const P3: f64 = 5.170_182_981_794_105e-19;
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5·2⁵²: adding it rounds to an integer
    let big = t * std::f64::consts::FRAC_2_PI + MAGIC;
    let n = big - MAGIC;
    let q = big.to_bits() & 3; // n mod 4 (the mantissa holds 2⁵¹ + n)
    let r = (((t - n * P1) - n * P2) - n * P3) + lo;
    let z = r * r;
    let s = r + r * z * (-0.16666666666666632
        + z * (0.00833333333332249
            + z * (-0.0001984126982985795
                + z * (2.755731370707007e-06 + z * (-2.5050760253406863e-08 + z * 1.58969099521155e-10)))));
    let c = 1.0 - 0.5 * z
        + z * z
            * (0.0416666666666666
                + z * (-0.001388888888887411
                    + z * (2.480158728947673e-05
                        + z * (-2.7557314351390663e-07 + z * (2.087572321298175e-09 + z * -1.1359647557788195e-11)))));
    let (a, b) = if q & 1 != 0 { (c, s) } else { (s, c) };
    let sn = if q & 2 != 0 { -a } else { a };
    let cs = if (q + 1) & 2 != 0 { -b } else { b };
    (sn, cs)
}

/// `(sin θ, cos θ)` of the exact phase `θ = Σ_d k_d x_d` (integer `k_d`, |θ| ≤
/// [`SINCOS_FAST_MAX`]): [`exact_product`] per axis, [`two_sum`] across them, [`sincos_dd`].
#[inline(always)]
pub fn exact_phase_sincos(k: [f64; 3], x: [f64; 3]) -> (f64, f64) {
    let (p0, e0) = exact_product(k[0], x[0]);
    let (p1, e1) = exact_product(k[1], x[1]);
    let (p2, e2) = exact_product(k[2], x[2]);
    let (s1, t1) = two_sum(p0, p1);
    let (hi, t2) = two_sum(s1, p2);
    sincos_dd(hi, ((e0 + e1) + (e2 + t1)) + t2)
}

const LANES: usize = 8;
const CHUNK: usize = 2048; // points per task, a multiple of LANES

/// One chunk of points in f64 structure-of-arrays form (zero-padded to a multiple of LANES).
struct Chunk {
    x: [Vec<f64>; 3],
    cr: Vec<f64>,
    ci: Vec<f64>,
}

/// Adds `Σ_j c_j e^{i s k·x_j}` over the chunk to `acc[m]` for every mode `ks[m]`.
#[inline(always)]
fn chunk_sums_impl(ks: &[[f64; 3]], sign: f64, ch: &Chunk, acc: &mut [Complex64]) {
    let len = ch.cr.len();
    let (x0, x1, x2) = (&ch.x[0][..len], &ch.x[1][..len], &ch.x[2][..len]);
    let (cr, ci) = (&ch.cr[..len], &ch.ci[..len]);
    for (a, k) in acc.iter_mut().zip(ks) {
        let (k0, k1, k2) = (sign * k[0], sign * k[1], sign * k[2]);
        let mut re = [0.0f64; LANES];
        let mut im = [0.0f64; LANES];
        let lanes = x0
            .chunks_exact(LANES)
            .zip(x1.chunks_exact(LANES))
            .zip(x2.chunks_exact(LANES))
            .zip(cr.chunks_exact(LANES).zip(ci.chunks_exact(LANES)));
        for (((xa, ya), za), (ra, ia)) in lanes {
            for l in 0..LANES {
                let (s, c) = exact_phase_sincos([k0, k1, k2], [xa[l], ya[l], za[l]]);
                re[l] += ra[l] * c - ia[l] * s;
                im[l] += ra[l] * s + ia[l] * c;
            }
        }
        *a += Complex64::new(re.iter().sum(), im.iter().sum());
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn chunk_sums_avx2(ks: &[[f64; 3]], sign: f64, ch: &Chunk, acc: &mut [Complex64]) {
    chunk_sums_impl(ks, sign, ch, acc)
}

fn chunk_sums(ks: &[[f64; 3]], sign: f64, ch: &Chunk, acc: &mut [Complex64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { chunk_sums_avx2(ks, sign, ch, acc) };
    }
    chunk_sums_impl(ks, sign, ch, acc)
}

/// Type-1 direct sums `f_k = Σ_j c_j e^{i s k·x_j}` in f64 for the flat mode indices `which`
/// (x fastest) of an `n[0]×n[1]×n[2]` mode array; `coords[d]` for `d < dim`.
pub fn type1<T: Real>(n: &[usize; 3], dim: usize, coords: &[Vec<T>; 3], c: &[Complex<T>], sign: f64, which: &[usize])
    -> Vec<Complex64> {
    let ks: Vec<[f64; 3]> = which
        .iter()
        .map(|&i| [freq(i % n[0], n[0]), freq((i / n[0]) % n[1], n[1]), freq(i / (n[0] * n[1]), n[2])])
        .collect();
    let m = c.len();
    let nk = ks.len();
    // the fast reduction needs |k·x| ≤ SINCOS_FAST_MAX; |x| ≤ max |x_j|
    let xmax: Vec<f64> = (0..3)
        .map(|d| if d < dim { coords[d].iter().fold(0.0f64, |a, v| a.max(v.to_f64v().abs())) } else { 0.0 })
        .collect();
    let tmax = ks.iter().map(|k| (0..3).map(|d| k[d].abs() * xmax[d]).sum::<f64>()).fold(0.0, f64::max);
    let fast = tmax <= SINCOS_FAST_MAX;
    (0..m.div_ceil(CHUNK))
        .into_par_iter()
        .fold(
            || vec![Complex64::default(); nk],
            |mut acc, b| {
                let (j0, j1) = (b * CHUNK, ((b + 1) * CHUNK).min(m));
                if fast {
                    let padded = (j1 - j0).div_ceil(LANES) * LANES;
                    let axis = |d: usize| {
                        let mut v = vec![0.0; padded];
                        if d < dim {
                            for (o, x) in v.iter_mut().zip(&coords[d][j0..j1]) {
                                *o = x.to_f64v();
                            }
                        }
                        v
                    };
                    let mut cr = vec![0.0; padded];
                    let mut ci = vec![0.0; padded];
                    for (i, z) in c[j0..j1].iter().enumerate() {
                        cr[i] = z.re.to_f64v();
                        ci[i] = z.im.to_f64v();
                    }
                    let ch = Chunk { x: [axis(0), axis(1), axis(2)], cr, ci };
                    chunk_sums(&ks, sign, &ch, &mut acc);
                } else {
                    let coord = |d: usize, j: usize| if d < dim { coords[d][j].to_f64v() } else { 0.0 };
                    for (j, cz) in c.iter().enumerate().take(j1).skip(j0) {
                        let cj = Complex64::new(cz.re.to_f64v(), cz.im.to_f64v());
                        for (a, k) in acc.iter_mut().zip(&ks) {
                            let t = sign * (k[0] * coord(0, j) + k[1] * coord(1, j) + k[2] * coord(2, j));
                            let (s, co) = t.sin_cos();
                            *a += cj * Complex64::new(co, s);
                        }
                    }
                }
                acc
            },
        )
        .reduce(|| vec![Complex64::default(); nk], |a, b| a.iter().zip(&b).map(|(u, v)| u + v).collect())
}

/// Type-2 direct sums `c_j = Σ_k f_k e^{i s k·x_j}` in f64 for the points `which`,
/// factorised per axis (N1 + N2 + N3 exponentials and N1·N2·N3 products per point).
pub fn type2<T: Real>(n: &[usize; 3], dim: usize, coords: &[Vec<T>; 3], f: &[Complex<T>], sign: f64, which: &[usize])
    -> Vec<Complex64> {
    which
        .par_iter()
        .map(|&j| {
            let e: Vec<Vec<Complex64>> = (0..3)
                .map(|d| {
                    let xd = if d < dim { coords[d][j].to_f64v() } else { 0.0 };
                    let exact = (n[d] as f64 / 2.0 + 1.0) * xd.abs() <= SINCOS_FAST_MAX;
                    (0..n[d])
                        .map(|i| {
                            let k = sign * freq(i, n[d]);
                            let (s, c) = if exact { exact_phase_sincos([k, 0.0, 0.0], [xd, 0.0, 0.0]) } else { (k * xd).sin_cos() };
                            Complex64::new(c, s)
                        })
                        .collect()
                })
                .collect();
            let mut total = Complex64::default();
            for i3 in 0..n[2] {
                for i2 in 0..n[1] {
                    let row = &f[n[0] * (i2 + n[1] * i3)..n[0] * (i2 + 1 + n[1] * i3)];
                    let s: Complex64 =
                        row.iter().zip(&e[0]).map(|(a, b)| Complex64::new(a.re.to_f64v(), a.im.to_f64v()) * b).sum();
                    total += s * e[1][i2] * e[2][i3];
                }
            }
            total
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn sincos_matches_std() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let mut worst = 0.0f64;
        for scale in [1.0, 3.0, 1e2, 1e4, 1e6, SINCOS_FAST_MAX] {
            for _ in 0..200_000 {
                let t: f64 = rng.gen_range(-scale..scale);
                let (s, c) = sincos(t);
                let (s0, c0) = t.sin_cos();
                worst = worst.max((s - s0).abs()).max((c - c0).abs());
            }
        }
        for t in [0.0, -0.0, 1e-300, std::f64::consts::FRAC_PI_2, std::f64::consts::PI, -std::f64::consts::PI, 1e5 * std::f64::consts::PI] {
            let (s, c) = sincos(t);
            let (s0, c0) = t.sin_cos();
            worst = worst.max((s - s0).abs()).max((c - c0).abs());
        }
        assert!(worst < 4e-16, "worst abs error {worst:e}");
    }

    fn naive(n: &[usize; 3], x: &[Vec<f64>; 3], c: &[Complex64], sign: f64, i: usize, j: usize) -> Complex64 {
        let k = [freq(i % n[0], n[0]), freq((i / n[0]) % n[1], n[1]), freq(i / (n[0] * n[1]), n[2])];
        c[j] * Complex64::from_polar(1.0, sign * (k[0] * x[0][j] + k[1] * x[1][j] + k[2] * x[2][j]))
    }

    /// The exact phase against an independent split: `x = xh + xl` with `xh` of 26 bits, so
    /// `a = k·xh` and `b = k·xl` are exact doubles and `sin(a + b) = sin a cos b + cos a sin b`
    /// with the standard library's (fully reduced) sine of the exact `a`. The rounded product
    /// `k·x` misses by up to 1e-10 at these sizes, which the same check would catch.
    #[test]
    fn exact_phase_matches_split_reference() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        let (mut worst, mut worst_rounded) = (0.0f64, 0.0f64);
        for _ in 0..100_000 {
            let k = rng.gen_range(-(1i64 << 20)..(1i64 << 20)) as f64;
            let x: f64 = rng.gen_range(-std::f64::consts::PI..std::f64::consts::PI);
            let xh = ((x * 67_108_864.0).trunc()) / 67_108_864.0; // 26 fraction bits: |x| < 4
            let xl = x - xh;
            let (a, b) = (k * xh, k * xl);
            let (sa, ca) = a.sin_cos();
            let (sb, cb) = b.sin_cos();
            let (s_ref, c_ref) = (sa * cb + ca * sb, ca * cb - sa * sb);
            let (s, c) = exact_phase_sincos([k, 0.0, 0.0], [x, 0.0, 0.0]);
            worst = worst.max((s - s_ref).abs()).max((c - c_ref).abs());
            let (s1, c1) = (k * x).sin_cos();
            worst_rounded = worst_rounded.max((s1 - s_ref).abs()).max((c1 - c_ref).abs());
        }
        assert!(worst < 1e-15, "exact phase: worst abs error {worst:e}");
        assert!(worst_rounded > 1e-11, "the rounded phase should miss visibly: {worst_rounded:e}");
        // three axes: the exact sum of three exact products
        let (s, c) = exact_phase_sincos([3.0, -5.0, 7.0], [0.1, 0.2, 0.3]);
        let (s0, c0) = (0.3f64 - 1.0 + 2.1).sin_cos();
        assert!((s - s0).abs() < 1e-15 && (c - c0).abs() < 1e-15);
    }

    #[test]
    fn direct_sums_match_naive_sums() {
        let n = [4usize, 3, 5];
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let m = 4100; // two chunks and a padded tail
        let x: [Vec<f64>; 3] = std::array::from_fn(|_| (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect());
        let c: Vec<Complex64> = (0..m).map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
        let which: Vec<usize> = (0..60).collect();
        let t1 = type1(&n, 3, &x, &c, -1.0, &which);
        for (&i, v) in which.iter().zip(&t1) {
            let d: Complex64 = (0..m).map(|j| naive(&n, &x, &c, -1.0, i, j)).sum();
            assert!((d - v).norm() < 1e-11 * (m as f64).sqrt(), "mode {i}: {v} vs {d}");
        }
        // type 2 with M = 60 modes' worth of coefficients, at a few points
        let f: Vec<Complex64> = (0..60).map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
        let t2 = type2(&n, 3, &x, &f, 1.0, &[0, 3, 4099]);
        for (&j, v) in [0usize, 3, 4099].iter().zip(&t2) {
            let d: Complex64 = (0..60)
                .map(|i| {
                    let k = [freq(i % 4, 4), freq((i / 4) % 3, 3), freq(i / 12, 5)];
                    f[i] * Complex64::from_polar(1.0, k[0] * x[0][j] + k[1] * x[1][j] + k[2] * x[2][j])
                })
                .sum();
            assert!((d - v).norm() < 1e-12, "point {j}");
        }
        assert_eq!((freq(0, 5), freq(4, 5), freq(0, 4), freq(3, 4)), (-2.0, 2.0, -2.0, 1.0));
    }

    #[test]
    fn type1_in_1d_and_f32() {
        let n = [7usize, 1, 1];
        let x: [Vec<f32>; 3] = [vec![0.5, -1.25, 3.0], Vec::new(), Vec::new()];
        let c = vec![Complex::new(1.0f32, 0.0), Complex::new(0.0, 2.0), Complex::new(-1.0, 1.0)];
        let got = type1(&n, 1, &x, &c, 1.0, &[0, 3, 6]);
        for (&i, v) in [0usize, 3, 6].iter().zip(&got) {
            let k = freq(i, 7);
            let d: Complex64 = (0..3)
                .map(|j| Complex64::new(c[j].re as f64, c[j].im as f64) * Complex64::from_polar(1.0, k * x[0][j] as f64))
                .sum();
            assert!((d - v).norm() < 1e-14);
        }
    }
}
