//! Smooth particle-mesh Ewald k-space part (Essmann, Perera, Berkowitz, Darden, Lee, Pedersen,
//! J. Chem. Phys. 103 (1995) 8577): cardinal B-spline charge assignment of order `n` on a
//! `K_1 × K_2 × K_3` grid over the fractional coordinates (so triclinic cells need nothing
//! special), real-to-complex FFT, multiplication by `θ(m) = (4π/V) e^{−k²/4ξ²}/k² · B(m)` with
//! Essmann's `B(m) = Π_d |b_d(m_d)|²` (eq. 4.7–4.8), complex-to-real FFT, and interpolation of the
//! potential and of its gradient with the same B-splines (analytic forces, eq. 4.9; the forces
//! are the exact gradient of the SPME energy).
//!
//! Essmann's assignment `Q(l) = Σ_j q_j Π_d M_n(u_jd − l_d)` is done by the spreader's centred
//! B-spline at the coordinates `u − n/2` (see [`crate::kernel::bspline`]). The charges are
//! spread onto a real grid ([`Spreader::spread_real`]) and transformed with a real-to-complex
//! FFT (half the cost of a complex one).

use super::box_::PeriodicBox;
use super::influence::{add_virial, influence, mode_of, spme_corr};
use crate::error::{try_grow, try_resize, Result};
use crate::fft::{half_len, AlignedVec, FftPlan};
use crate::kernel::bspline::BSplineParams;
use crate::spread::{SpreadOpts, Spreader};
use crate::threads::{SyncPtr, Threads};
use num_complex::Complex64;

/// SPME solver state (grids, FFT plans, spreader), reused across evaluations.
pub(crate) struct Spme {
    nf: [usize; 3],
    order: usize,
    xi: f64,
    spreader: Spreader<f64>,
    rgrid: AlignedVec<f64>,
    spec: AlignedVec<Complex64>,
    r2c: FftPlan<f64>,
    c2r: FftPlan<f64>,
    theta: Vec<f64>,
    out: Vec<[f64; 4]>,
    xs: [Vec<f64>; 3],
}

impl Spme {
    /// Plans grids `nf` (each even, ≥ 2·order) and B-splines of order `order`.
    pub fn new(bx: &PeriodicBox, xi: f64, nf: [usize; 3], order: usize, fftw: u32, nthreads: usize) -> Result<Self> {
        let n = nf[0] * nf[1] * nf[2];
        let spreader = Spreader::<f64>::new_bspline(3, &nf, &BSplineParams { order }, SpreadOpts::default())?;
        let mut rgrid = AlignedVec::<f64>::zeroed(n, "SPME real grid")?;
        let mut spec = AlignedVec::<Complex64>::zeroed(half_len(&nf), "SPME spectrum")?;
        let r2c = FftPlan::r2c(&nf, &mut rgrid, &mut spec, fftw, nthreads)?;
        let c2r = FftPlan::c2r(&nf, &mut spec, &mut rgrid, fftw, nthreads)?;
        let mut s = Spme {
            nf,
            order,
            xi,
            spreader,
            rgrid,
            spec,
            r2c,
            c2r,
            theta: Vec::new(),
            out: Vec::new(),
            xs: [Vec::new(), Vec::new(), Vec::new()],
        };
        s.set_box(bx)?;
        Ok(s)
    }

    /// Recomputes the influence function for a new cell (same grid). Errors:
    /// [`crate::Error::Alloc`] (the state is then unchanged).
    pub fn set_box(&mut self, bx: &PeriodicBox) -> Result<()> {
        let corr = spme_corr(self.nf, self.order);
        self.theta = influence(bx, self.xi, self.nf, self.nf[0] / 2 + 1, &corr)?;
        Ok(())
    }

    /// Writes the k-space potentials into `phi` and fields into `field` (both overwritten),
    /// returns the k-space virial (zeros unless `virial`). `s`: wrapped fractional coordinates.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(
        &mut self, bx: &PeriodicBox, s: &[[f64; 3]], q: &[f64], threads: &Threads, phi: &mut [f64],
        field: Option<&mut [f64]>, virial: bool,
    ) -> Result<[f64; 6]> {
        let n = s.len();
        let nf = self.nf;
        let tp = 2.0 * std::f64::consts::PI;
        let shift = 0.5 * self.order as f64;
        for d in 0..3 {
            let sh = shift / nf[d] as f64;
            self.xs[d].clear();
            try_grow(&mut self.xs[d], n, "SPME point coordinates")?;
            self.xs[d].extend(s.iter().map(|v| tp * (v[d] - sh)));
        }
        self.spreader.setpts([&self.xs[0], &self.xs[1], &self.xs[2]], threads)?;
        // spreading overwrites the grid: no zeroing needed
        self.spreader.try_spread_real(q, &mut self.rgrid, threads)?;
        self.r2c.execute_r2c(&mut self.rgrid, &mut self.spec);
        let nx = nf[0] / 2 + 1;
        let sp = SyncPtr(self.spec.as_mut_ptr());
        let mut vplanes = vec![[0.0f64; 6]; nf[2]];
        let vp = SyncPtr(vplanes.as_mut_ptr());
        let theta = &self.theta;
        let xi = self.xi;
        threads.for_each(nf[2], |i2| {
            let (sp, vp) = (sp, vp);
            let mut v = [0.0f64; 6];
            for i1 in 0..nf[1] {
                for i0 in 0..nx {
                    let l = i0 + nx * (i1 + nf[1] * i2);
                    let th = theta[l];
                    // SAFETY: plane i2 belongs to this task only.
                    let b = unsafe { *sp.0.add(l) };
                    if virial && th != 0.0 {
                        // entries 0 < i0 < K/2 also stand for their conjugate partners
                        let w = if i0 == 0 { 1.0 } else { 2.0 };
                        let m = [mode_of(i0, nf[0]).unwrap_or(0), mode_of(i1, nf[1]).unwrap_or(0), mode_of(i2, nf[2]).unwrap_or(0)];
                        add_virial(bx, xi, m, 0.5 * w * th * b.norm_sqr(), &mut v);
                    }
                    unsafe { *sp.0.add(l) = b * th };
                }
            }
            // SAFETY: entry i2 belongs to this task only.
            unsafe { *vp.0.add(i2) = v };
        });
        self.c2r.execute_c2r(&mut self.spec, &mut self.rgrid);
        try_resize(&mut self.out, n, [0.0; 4], "SPME interpolation output")?;
        self.spreader.interp_grad_real(&self.rgrid, &mut self.out, threads)?;
        // E_α = −Σ_d ∂φ/∂u_d · K_d a*_dα
        let g: [[f64; 3]; 3] = [0, 1, 2].map(|d| [0, 1, 2].map(|a| nf[d] as f64 * bx.recip[d][a]));
        match field {
            Some(fl) => {
                for i in 0..n {
                    let o = self.out[i];
                    phi[i] = o[0];
                    for a in 0..3 {
                        fl[3 * i + a] = -(o[1] * g[0][a] + o[2] * g[1][a] + o[3] * g[2][a]);
                    }
                }
            }
            None => {
                for i in 0..n {
                    phi[i] = self.out[i][0];
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
