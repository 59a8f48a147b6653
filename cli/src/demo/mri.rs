//! MRI-style reconstruction from golden-angle radial k-space samples.
//!
//! Forward model (docs/design.md §11.1): the image `f[row, col]` sits on a uniform grid with
//! centred pixel coordinates `x = col − Nx/2`, `y = row − Ny/2`; its k-space signal at a
//! non-uniform point `k = (kx, ky)` (radians per pixel, `k ∈ [−π, π)²`) is
//! `F(k) = Σ_pixels f · e^{−i k·(x, y)}`, a 2-D **type-2** NUFFT with `iflag = −1`.
//! In the library's layout (modes x fastest, CMCL order) the row-major image *is* the mode
//! array: column ↔ first mode index (`k1 = col − Nx/2`), row ↔ second (`k2 = row − Ny/2`).
//! The adjoint `A^H` is the **type-1** NUFFT with `iflag = +1` from the same points.
//!
//! Reconstructions:
//! * adjoint with ramp density compensation: `x₀ = A^H W y`, `W = diag(w)`,
//!   `w = |k_r| · (π Δk / N_spokes) / (2π)²` — the area of k-space each sample represents
//!   (annulus sector of width `Δk = 2π/N_r`, angle `π/N_spokes`) times the `1/(2π)²` of the
//!   inverse Fourier integral, so `A^H W A ≈ I` on the sampled disc and `x₀` needs no
//!   rescaling; the centre sample (`k_r = 0`, shared by all spokes) gets the disc of radius
//!   `Δk/2` split among the spokes, i.e. `|k_r| → Δk/4`;
//! * conjugate gradients on the density-weighted normal equations `A^H W A x = A^H W y`
//!   from `x = 0` (so its first iterate is a multiple of `x₀`). Each iteration applies one
//!   type 2 and one type 1; both plans get their points once.

use crate::progress;
use crate::CliResult;
use farfield::nufft::NufftOpts;
use farfield::NufftPlan;
use num_complex::Complex64;
use std::f64::consts::PI;
use std::time::Instant;

/// A radial k-space trajectory, spoke-major: sample `s * n_readout + r`.
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// kx of every sample (radians per pixel).
    pub kx: Vec<f64>,
    /// ky of every sample.
    pub ky: Vec<f64>,
    /// Signed radius `k_r` of every sample.
    pub kr: Vec<f64>,
    /// Spoke angles θ_s (radians, in [0, π)).
    pub angles: Vec<f64>,
    /// Readout points per spoke N_r.
    pub n_readout: usize,
}

impl Trajectory {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.kx.len()
    }
    /// Number of spokes.
    pub fn n_spokes(&self) -> usize {
        self.angles.len()
    }
    /// Radial sample spacing Δk = 2π / N_r.
    pub fn dk(&self) -> f64 {
        2.0 * PI / self.n_readout as f64
    }
}

/// Golden-angle increment π(√5 − 1)/2 ≈ 111.246° (Winkelmann et al. 2007).
pub const GOLDEN_ANGLE: f64 = PI * 0.618_033_988_749_894_9;

/// Golden-angle radial trajectory: `n_spokes` full-diameter spokes of `n_readout` points,
/// `k_r = π (r − N_r/2)/(N_r/2)` for `r = 0 … N_r − 1` (so `k_r ∈ [−π, π)`), spoke angle
/// `θ_s = s · GOLDEN_ANGLE mod π`, `k = k_r (cos θ_s, sin θ_s)`.
pub fn golden_angle_radial(n_spokes: usize, n_readout: usize) -> Trajectory {
    let m = n_spokes * n_readout;
    let (mut kx, mut ky, mut kr) = (Vec::with_capacity(m), Vec::with_capacity(m), Vec::with_capacity(m));
    let half = n_readout as f64 / 2.0;
    let mut angles = Vec::with_capacity(n_spokes);
    for s in 0..n_spokes {
        let theta = (s as f64 * GOLDEN_ANGLE).rem_euclid(PI);
        angles.push(theta);
        let (sn, cs) = theta.sin_cos();
        for r in 0..n_readout {
            let k = PI * (r as f64 - half) / half;
            kr.push(k);
            kx.push(k * cs);
            ky.push(k * sn);
        }
    }
    Trajectory { kx, ky, kr, angles, n_readout }
}

/// Number of spokes for Nyquist sampling of an N-pixel-wide image: ⌈(π/2)·N⌉.
pub fn nyquist_spokes(n: usize) -> usize {
    (PI / 2.0 * n as f64).ceil() as usize
}

/// Ramp density-compensation weights (see the module docs), normalised so that
/// `A^H W A ≈ I`.
pub fn ramp_weights(t: &Trajectory) -> Vec<f64> {
    let dk = t.dk();
    let area = PI * dk / t.n_spokes() as f64 / (4.0 * PI * PI);
    t.kr.iter().map(|&k| if k == 0.0 { dk / 4.0 } else { k.abs() } * area).collect()
}

/// Fraction of the image's l2 norm carried by DFT frequencies outside the disc `|k| < π`
/// that a radial trajectory with `k_r ∈ [−π, π)` samples: `‖P_out f‖ / ‖f‖` (Parseval).
/// The samples say almost nothing about those frequencies (only through the leakage of
/// the pixel basis), so this is roughly the floor of any reconstruction's relative error.
pub fn out_of_disc_fraction(img: &[f64], nx: usize, ny: usize) -> CliResult<f64> {
    use farfield::fft::{AlignedVec, FftPlan, Sign, FFTW_ESTIMATE};
    let e = |e: farfield::Error| format!("FFT: {e}");
    let mut buf = AlignedVec::<Complex64>::zeroed(nx * ny, "image DFT").map_err(e)?;
    let plan = FftPlan::c2c_inplace(&[nx, ny], 1, Sign::Forward, &mut buf, FFTW_ESTIMATE, 1).map_err(e)?;
    for (b, &v) in buf.iter_mut().zip(img) {
        *b = Complex64::new(v, 0.0);
    }
    plan.execute_c2c(&mut buf);
    // frequency of DFT index i on an axis of n points, radians per pixel, in [−π, π)
    let freq = |i: usize, n: usize| 2.0 * PI * (if 2 * i < n { i as f64 } else { i as f64 - n as f64 }) / n as f64;
    let (mut out, mut all) = (0.0, 0.0);
    for row in 0..ny {
        let ky = freq(row, ny);
        for col in 0..nx {
            let p = buf[row * nx + col].norm_sqr();
            all += p;
            if freq(col, nx).hypot(ky) >= PI {
                out += p;
            }
        }
    }
    Ok(if all > 0.0 { (out / all).sqrt() } else { 0.0 })
}

/// Settings of the MRI section.
#[derive(Debug, Clone)]
pub struct MriSettings {
    /// NUFFT tolerance.
    pub tol: f64,
    /// Threads (0 = all cores).
    pub threads: usize,
    /// Number of spokes (0 = Nyquist, ⌈(π/2)·N⌉).
    pub spokes: usize,
    /// Readout oversampling: N_r = oversampling · N.
    pub readout_oversampling: usize,
    /// CG iterations.
    pub cg_iters: usize,
    /// Show a progress bar for CG.
    pub progress: bool,
}

/// NUFFT time accounting.
#[derive(Debug, Clone, Default)]
pub struct NufftClock {
    /// Seconds creating the two plans.
    pub plan_s: f64,
    /// Seconds in the two `setpts` calls.
    pub setpts_s: f64,
    /// Type-1 executes and their seconds.
    pub type1: (usize, f64),
    /// Type-2 executes and their seconds.
    pub type2: (usize, f64),
}

impl NufftClock {
    /// Seconds in all executes.
    pub fn exec_s(&self) -> f64 {
        self.type1.1 + self.type2.1
    }
    /// Number of executes.
    pub fn transforms(&self) -> usize {
        self.type1.0 + self.type2.0
    }
}

/// What the MRI section produced.
pub struct MriResult {
    /// The trajectory used.
    pub traj: Trajectory,
    /// Adjoint (density-compensated) reconstruction, row-major.
    pub adjoint: Vec<Complex64>,
    /// Least-squares scale α minimising ‖α·x₀ − f‖ (ideally ≈ 1).
    pub adjoint_scale: f64,
    /// ‖α·x₀ − f‖ / ‖f‖.
    pub adjoint_rel_error: f64,
    /// ‖x₀ − f‖ / ‖f‖ without rescaling.
    pub adjoint_rel_error_unscaled: f64,
    /// CG reconstruction, row-major.
    pub cg: Vec<Complex64>,
    /// ‖x_CG − f‖ / ‖f‖ (no rescaling).
    pub cg_rel_error: f64,
    /// Relative error after each CG iteration.
    pub cg_error_history: Vec<f64>,
    /// Relative normal-equation residual ‖r‖/‖b‖ after each CG iteration.
    pub cg_residual_history: Vec<f64>,
    /// [`out_of_disc_fraction`] of the image: about the best error any reconstruction from
    /// these samples can reach.
    pub out_of_disc: f64,
    /// NUFFT timing.
    pub clock: NufftClock,
    /// Fine grid and kernel width the plans chose.
    pub nf: [i64; 2],
    /// Kernel width.
    pub kernel_width: i32,
    /// Upsampling factor.
    pub upsampfac: f64,
    /// Threads used.
    pub threads: i32,
    /// Wall seconds of the whole section.
    pub wall_s: f64,
}

/// The encoding operator `A` (type 2) and its adjoint `A^H` (type 1) on one trajectory.
struct Encoding {
    t1: NufftPlan<f64>,
    t2: NufftPlan<f64>,
    clock: NufftClock,
}

impl Encoding {
    fn new(nx: usize, ny: usize, traj: &Trajectory, s: &MriSettings) -> CliResult<Self> {
        let opts = NufftOpts { nthreads: s.threads, ..NufftOpts::default() };
        let modes = [nx as i64, ny as i64];
        let e = |e: farfield::Error| format!("NUFFT: {e}");
        let t0 = Instant::now();
        let mut t1 = NufftPlan::<f64>::new(1, 2, &modes, 1, 1, s.tol, &opts).map_err(e)?;
        let mut t2 = NufftPlan::<f64>::new(2, 2, &modes, -1, 1, s.tol, &opts).map_err(e)?;
        let plan_s = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        t1.setpts(&traj.kx, &traj.ky, &[]).map_err(e)?;
        t2.setpts(&traj.kx, &traj.ky, &[]).map_err(e)?;
        let setpts_s = t0.elapsed().as_secs_f64();
        Ok(Encoding { t1, t2, clock: NufftClock { plan_s, setpts_s, ..Default::default() } })
    }

    /// `y = A x` (type 2). `x` is taken by `&mut` only because the plan's API wants it.
    fn forward(&mut self, x: &mut [Complex64], y: &mut [Complex64]) -> CliResult<()> {
        let t0 = Instant::now();
        self.t2.execute(y, x).map_err(|e| format!("NUFFT type 2: {e}"))?;
        self.clock.type2.0 += 1;
        self.clock.type2.1 += t0.elapsed().as_secs_f64();
        Ok(())
    }

    /// `x = A^H y` (type 1). `y` is taken by `&mut` only because the plan's API wants it.
    fn adjoint(&mut self, y: &mut [Complex64], x: &mut [Complex64]) -> CliResult<()> {
        let t0 = Instant::now();
        self.t1.execute(y, x).map_err(|e| format!("NUFFT type 1: {e}"))?;
        self.clock.type1.0 += 1;
        self.clock.type1.1 += t0.elapsed().as_secs_f64();
        Ok(())
    }
}

fn dot(a: &[Complex64], b: &[Complex64]) -> Complex64 {
    a.iter().zip(b).map(|(x, y)| x.conj() * y).sum()
}

fn norm2(a: &[Complex64]) -> f64 {
    a.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt()
}

/// ‖α·x − f‖/‖f‖ for a complex reconstruction `x` of a real image `f`.
pub fn rel_error(x: &[Complex64], f: &[f64], alpha: f64) -> f64 {
    let num: f64 = x.iter().zip(f).map(|(z, &v)| (z * alpha - v).norm_sqr()).sum();
    let den: f64 = f.iter().map(|v| v * v).sum();
    (num / den).sqrt()
}

/// The real α minimising ‖α·x − f‖.
pub fn best_scale(x: &[Complex64], f: &[f64]) -> f64 {
    let num: f64 = x.iter().zip(f).map(|(z, &v)| z.re * v).sum();
    let den: f64 = x.iter().map(|z| z.norm_sqr()).sum();
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Runs the MRI section on the row-major image `img` (`ny` rows × `nx` columns).
pub fn run(img: &[f64], nx: usize, ny: usize, s: &MriSettings) -> CliResult<MriResult> {
    let wall = Instant::now();
    let n = nx.max(ny);
    let spokes = if s.spokes == 0 { nyquist_spokes(n) } else { s.spokes };
    let traj = golden_angle_radial(spokes, s.readout_oversampling.max(1) * n);
    let m = traj.len();
    let w = ramp_weights(&traj);
    let mut enc = Encoding::new(nx, ny, &traj, s)?;
    let info = enc.t1.info();
    let npix = nx * ny;

    // simulate the data: y = A f
    let mut f: Vec<Complex64> = img.iter().map(|&v| Complex64::new(v, 0.0)).collect();
    let mut y = vec![Complex64::default(); m];
    enc.forward(&mut f, &mut y)?;

    // adjoint with density compensation: b = A^H W y
    let mut wy: Vec<Complex64> = y.iter().zip(&w).map(|(z, &wi)| z * wi).collect();
    let mut b = vec![Complex64::default(); npix];
    enc.adjoint(&mut wy, &mut b)?;
    let adjoint_scale = best_scale(&b, img);
    let adjoint_rel_error = rel_error(&b, img, adjoint_scale);
    let adjoint_rel_error_unscaled = rel_error(&b, img, 1.0);

    // CG on A^H W A x = b, x₀ = 0
    let mut x = vec![Complex64::default(); npix];
    let mut r = b.clone();
    let mut p = r.clone();
    let mut q = vec![Complex64::default(); npix];
    let mut ap = vec![Complex64::default(); m];
    let bnorm = norm2(&b);
    let mut rs = dot(&r, &r).re;
    let mut err_hist = Vec::with_capacity(s.cg_iters);
    let mut res_hist = Vec::with_capacity(s.cg_iters);
    let bar = progress::bar(s.cg_iters as u64, "CG", s.progress);
    for _ in 0..s.cg_iters {
        if rs == 0.0 {
            break;
        }
        enc.forward(&mut p, &mut ap)?;
        for (z, &wi) in ap.iter_mut().zip(&w) {
            *z *= wi;
        }
        enc.adjoint(&mut ap, &mut q)?;
        let pq = dot(&p, &q).re;
        if pq <= 0.0 {
            break;
        }
        let alpha = rs / pq;
        for i in 0..npix {
            x[i] += p[i] * alpha;
            r[i] -= q[i] * alpha;
        }
        let rs_new = dot(&r, &r).re;
        let beta = rs_new / rs;
        for i in 0..npix {
            p[i] = r[i] + p[i] * beta;
        }
        rs = rs_new;
        err_hist.push(rel_error(&x, img, 1.0));
        res_hist.push(rs.sqrt() / bnorm);
        bar.set_message(format!("error {:.4}", err_hist.last().unwrap()));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let cg_rel_error = err_hist.last().copied().unwrap_or_else(|| rel_error(&x, img, 1.0));
    let out_of_disc = out_of_disc_fraction(img, nx, ny)?;
    Ok(MriResult {
        out_of_disc,
        traj,
        adjoint: b,
        adjoint_scale,
        adjoint_rel_error,
        adjoint_rel_error_unscaled,
        cg: x,
        cg_rel_error,
        cg_error_history: err_hist,
        cg_residual_history: res_hist,
        clock: enc.clock.clone(),
        nf: [info.nf[0] as i64, info.nf[1] as i64],
        kernel_width: info.kernel_width as i32,
        upsampfac: info.upsampfac,
        threads: info.nthreads as i32,
        wall_s: wall.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trajectory_shape_and_range() {
        let t = golden_angle_radial(5, 8);
        assert_eq!(t.len(), 40);
        assert_eq!(t.n_spokes(), 5);
        // k_r = π (r − 4)/4: −π, −3π/4, …, 3π/4 on every spoke; centre sample r = 4
        for s in 0..5 {
            assert_eq!(t.kr[s * 8], -PI);
            assert_eq!(t.kr[s * 8 + 4], 0.0);
            assert!((t.kr[s * 8 + 7] - 0.75 * PI).abs() < 1e-15);
        }
        for i in 0..t.len() {
            assert!(t.kx[i] >= -PI && t.kx[i] <= PI && t.ky[i] >= -PI && t.ky[i] <= PI);
            assert!(((t.kx[i].hypot(t.ky[i])) - t.kr[i].abs()).abs() < 1e-14);
        }
        // angles: s · 111.246…° mod 180°
        assert_eq!(t.angles[0], 0.0);
        assert!((t.angles[1].to_degrees() - 111.246_117_974_981).abs() < 1e-9);
        assert!((t.angles[2].to_degrees() - (2.0 * 111.246_117_974_981 - 180.0)).abs() < 1e-9);
        assert!(t.angles.iter().all(|&a| (0.0..PI).contains(&a)));
    }

    #[test]
    fn golden_angles_cover_half_circle_nearly_uniformly() {
        // any run of spokes leaves no angular gap much larger than the uniform spacing
        let t = golden_angle_radial(402, 4);
        let mut a = t.angles.clone();
        a.sort_by(|x, y| x.partial_cmp(y).unwrap());
        let mut gap = PI - a[a.len() - 1] + a[0];
        for i in 1..a.len() {
            gap = gap.max(a[i] - a[i - 1]);
        }
        assert!(gap < 2.7 * PI / 402.0, "largest gap {gap}");
    }

    #[test]
    fn out_of_disc_fraction_of_pure_tones() {
        // a tone at DFT index (1, 0) is inside the disc, the checkerboard (N/2, N/2) outside;
        // their sum: ‖cos‖² = N²/2 inside, ‖(−1)^(row+col)‖² = N² outside → fraction √(2/3)
        let n = 16;
        let tone = |i: usize, j: usize, row: usize, col: usize| (2.0 * PI * (i * col + j * row) as f64 / n as f64).cos();
        let low: Vec<f64> = (0..n * n).map(|p| tone(1, 0, p / n, p % n)).collect();
        let high: Vec<f64> = (0..n * n).map(|p| tone(8, 8, p / n, p % n)).collect();
        let both: Vec<f64> = low.iter().zip(&high).map(|(a, b)| a + b).collect();
        assert!(out_of_disc_fraction(&low, n, n).unwrap() < 1e-12);
        assert!((out_of_disc_fraction(&high, n, n).unwrap() - 1.0).abs() < 1e-12);
        assert!((out_of_disc_fraction(&both, n, n).unwrap() - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn nyquist_counts() {
        assert_eq!(nyquist_spokes(256), 403);
        assert_eq!(nyquist_spokes(400), 629);
    }

    #[test]
    fn ramp_weights_integrate_the_disc() {
        // Σ w = (area of the disc of radius π) / (2π)² = π³/(4π²) = π/4, up to O(Δk)
        let t = golden_angle_radial(201, 256);
        let w = ramp_weights(&t);
        let s: f64 = w.iter().sum();
        assert!((s / (PI / 4.0) - 1.0).abs() < 0.02, "sum {s}");
        assert!(w.iter().all(|&v| v > 0.0));
    }

    #[test]
    fn cg_beats_adjoint_on_small_phantom() {
        let im = crate::phantom::shepp_logan(32);
        let s = MriSettings { tol: 1e-9, threads: 1, spokes: 0, readout_oversampling: 2, cg_iters: 10, progress: false };
        let r = run(&im.data, 32, 32, &s).unwrap();
        assert_eq!(r.traj.len(), 51 * 64);
        assert!((r.adjoint_scale - 1.0).abs() < 0.2, "scale {}", r.adjoint_scale);
        assert!(r.cg_rel_error < r.adjoint_rel_error, "{} vs {}", r.cg_rel_error, r.adjoint_rel_error);
        assert_eq!(r.clock.type1.0, 11);
        assert_eq!(r.clock.type2.0, 11);
        // residual decreases
        assert!(r.cg_residual_history.last().unwrap() < &r.cg_residual_history[0]);
    }

    #[test]
    fn forward_model_matches_direct_sum() {
        // F(k) = Σ f e^{−i k·(col − N/2, row − N/2)}, on a non-square image
        let (nx, ny) = (6usize, 4usize);
        let img: Vec<f64> = (0..nx * ny).map(|i| ((i * 7) % 5) as f64 - 1.0).collect();
        let traj = golden_angle_radial(3, 5);
        let s = MriSettings { tol: 1e-12, threads: 1, spokes: 3, readout_oversampling: 1, cg_iters: 0, progress: false };
        let mut enc = Encoding::new(nx, ny, &traj, &s).unwrap();
        let mut f: Vec<Complex64> = img.iter().map(|&v| Complex64::new(v, 0.0)).collect();
        let mut y = vec![Complex64::default(); traj.len()];
        enc.forward(&mut f, &mut y).unwrap();
        for (j, yj) in y.iter().enumerate() {
            let mut d = Complex64::default();
            for row in 0..ny {
                for col in 0..nx {
                    let ph = -(traj.kx[j] * (col as f64 - (nx / 2) as f64) + traj.ky[j] * (row as f64 - (ny / 2) as f64));
                    d += Complex64::from_polar(img[row * nx + col], ph);
                }
            }
            assert!((yj - d).norm() < 1e-10, "sample {j}: {yj} vs {d}");
        }
    }
}
