//! Spectral Ewald k-space part (Lindbo & Tornberg, J. Comput. Phys. 230 (2011) 8744;
//! Boström's gridding report, docs/design.md §12, §2, Lemma 3): spread the charges with a truncated
//! Gaussian, FFT, scale, inverse FFT, gather with the same Gaussian; fields by ik-differentiation
//! in Fourier space.
//!
//! The window is `ψ(u) = e^{−u²/(4τ)}` per axis in grid units (fractional coordinate times
//! `K_d`), truncated to `P` points, spread through [`crate::spread`] (fast Gaussian gridding).
//! Deconvolution divides by the exact `ψ̂_d(m)² = 4πτ e^{−2τ(2πm/K_d)²}` per axis (see
//! [`super::influence`]); in an orthorhombic cell with grid spacing `h` this is Lindbo–Tornberg's
//! scaling `e^{−(1−η)k²/4ξ²}/k²` with shape `η = 8ξ²h²τ` and Gaussian `e^{−2ξ²|x|²/η}`; in a
//! triclinic cell the Gaussian is taken in fractional coordinates, which keeps it separable.
//!
//! Grids: the charge grid is real; it is spread as complex strengths with zero imaginary part.
//! After the forward FFT and scaling, two real outputs are packed per complex grid
//! (the inverse transform of `F + iG` with Hermitian `F`, `G` has real part `f`, imaginary `g`):
//! grid 1 holds `(φ, E_x)`, grid 2 `(E_y, E_z)`, so a potential+field evaluation costs one
//! forward FFT, two inverse FFTs, one spread and two interpolations.

use super::box_::PeriodicBox;
use super::influence::{add_virial, influence, mode_of, spectral_corr};
use crate::error::{try_grow, try_resize, Result};
use crate::fft::{AlignedVec, FftPlan, Sign};
use crate::kernel::gaussian::GaussParams;
use crate::kernel::Kernel;
use crate::spread::{SpreadOpts, Spreader};
use crate::threads::{SyncPtr, Threads};
use num_complex::Complex64;

/// Spectral Ewald solver state (grids, FFT plans, spreader), reused across evaluations.
pub(crate) struct Spectral {
    nf: [usize; 3],
    xi: f64,
    kernel: Kernel,
    spreader: Spreader<f64>,
    g1: AlignedVec<Complex64>,
    g2: AlignedVec<Complex64>,
    fwd: FftPlan<f64>,
    bwd: FftPlan<f64>,
    theta: Vec<f64>,
    c: Vec<Complex64>,
    o1: Vec<Complex64>,
    o2: Vec<Complex64>,
    xs: [Vec<f64>; 3],
}

impl Spectral {
    /// Plans grids `nf` (each even, ≥ 2P), window support `p` (even) and shape `tau`.
    pub fn new(bx: &PeriodicBox, xi: f64, nf: [usize; 3], p: usize, tau: f64, fftw: u32, nthreads: usize) -> Result<Self> {
        let kernel = Kernel::Gaussian(GaussParams { w: p, tau });
        let n = nf[0] * nf[1] * nf[2];
        let spreader = Spreader::<f64>::new(3, &nf, &kernel, SpreadOpts::default())?;
        let mut g1 = AlignedVec::<Complex64>::zeroed(n, "spectral Ewald grid")?;
        let g2 = AlignedVec::<Complex64>::zeroed(n, "spectral Ewald grid")?;
        let fwd = FftPlan::c2c_inplace(&nf, 1, Sign::Forward, &mut g1, fftw, nthreads)?;
        let bwd = FftPlan::c2c_inplace(&nf, 1, Sign::Backward, &mut g1, fftw, nthreads)?;
        let mut s = Spectral {
            nf,
            xi,
            kernel,
            spreader,
            g1,
            g2,
            fwd,
            bwd,
            theta: Vec::new(),
            c: Vec::new(),
            o1: Vec::new(),
            o2: Vec::new(),
            xs: [Vec::new(), Vec::new(), Vec::new()],
        };
        s.set_box(bx)?;
        Ok(s)
    }

    /// Recomputes the influence function for a new cell (same grid). Errors:
    /// [`crate::Error::Alloc`] (the state is then unchanged).
    pub fn set_box(&mut self, bx: &PeriodicBox) -> Result<()> {
        let corr = spectral_corr(self.nf, &self.kernel);
        self.theta = influence(bx, self.xi, self.nf, self.nf[0], &corr)?;
        Ok(())
    }

    /// Writes the k-space potentials into `phi` and fields into `field` (both overwritten), returns the k-space virial (zeros unless `virial`). `s`: wrapped fractional
    /// coordinates.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(
        &mut self, bx: &PeriodicBox, s: &[[f64; 3]], q: &[f64], threads: &Threads, phi: &mut [f64],
        field: Option<&mut [f64]>, virial: bool,
    ) -> Result<[f64; 6]> {
        let n = s.len();
        let tp = 2.0 * std::f64::consts::PI;
        for d in 0..3 {
            self.xs[d].clear();
            try_grow(&mut self.xs[d], n, "spectral Ewald point coordinates")?;
            self.xs[d].extend(s.iter().map(|v| tp * v[d]));
        }
        self.spreader.setpts([&self.xs[0], &self.xs[1], &self.xs[2]], threads)?;
        self.c.clear();
        try_grow(&mut self.c, n, "spectral Ewald strengths")?;
        self.c.extend(q.iter().map(|&v| Complex64::new(v, 0.0)));
        // spreading overwrites the grid: no zeroing needed
        self.spreader.try_spread(&self.c, &mut self.g1, threads)?;
        self.fwd.execute_c2c(&mut self.g1);
        let nf = self.nf;
        let want_field = field.is_some();
        let g1p = SyncPtr(self.g1.as_mut_ptr());
        let g2p = SyncPtr(self.g2.as_mut_ptr());
        let mut vplanes = vec![[0.0f64; 6]; nf[2]];
        let vp = SyncPtr(vplanes.as_mut_ptr());
        let theta = &self.theta;
        let xi = self.xi;
        threads.for_each(nf[2], |i2| {
            let (g1p, g2p, vp) = (g1p, g2p, vp);
            let mut v = [0.0f64; 6];
            for i1 in 0..nf[1] {
                for i0 in 0..nf[0] {
                    let l = i0 + nf[0] * (i1 + nf[1] * i2);
                    let th = theta[l];
                    // SAFETY: plane i2 belongs to this task only.
                    let b = unsafe { *g1p.0.add(l) };
                    let f = b * th;
                    if virial && th != 0.0 {
                        let m = [mode_of(i0, nf[0]).unwrap_or(0), mode_of(i1, nf[1]).unwrap_or(0), mode_of(i2, nf[2]).unwrap_or(0)];
                        add_virial(bx, xi, m, 0.5 * th * b.norm_sqr(), &mut v);
                    }
                    unsafe {
                        if want_field && th != 0.0 {
                            let m = [mode_of(i0, nf[0]).unwrap_or(0), mode_of(i1, nf[1]).unwrap_or(0), mode_of(i2, nf[2]).unwrap_or(0)];
                            let k = bx.kvec([m[0] as f64, m[1] as f64, m[2] as f64]);
                            *g1p.0.add(l) = f * (1.0 + k[0]);
                            *g2p.0.add(l) = f * Complex64::new(k[2], -k[1]);
                        } else {
                            *g1p.0.add(l) = f;
                            if want_field {
                                *g2p.0.add(l) = Complex64::new(0.0, 0.0);
                            }
                        }
                    }
                }
            }
            // SAFETY: entry i2 belongs to this task only.
            unsafe { *vp.0.add(i2) = v };
        });
        self.bwd.execute_c2c(&mut self.g1);
        try_resize(&mut self.o1, n, Complex64::new(0.0, 0.0), "spectral Ewald interpolation output")?;
        self.spreader.try_interp(&self.g1, &mut self.o1, threads)?;
        match field {
            Some(fl) => {
                self.bwd.execute_c2c(&mut self.g2);
                try_resize(&mut self.o2, n, Complex64::new(0.0, 0.0), "spectral Ewald interpolation output")?;
                self.spreader.try_interp(&self.g2, &mut self.o2, threads)?;
                for i in 0..n {
                    phi[i] = self.o1[i].re;
                    fl[3 * i] = self.o1[i].im;
                    fl[3 * i + 1] = self.o2[i].re;
                    fl[3 * i + 2] = self.o2[i].im;
                }
            }
            None => {
                for i in 0..n {
                    phi[i] = self.o1[i].re;
                }
            }
        }
        let mut vir = [0.0; 6];
        for v in &vplanes {
            for d in 0..6 {
                vir[d] += v[d];
            }
        }
        Ok(vir)
    }
}
