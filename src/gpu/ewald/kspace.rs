//! The k-space (smooth) part of periodic electrostatics on the device: smooth particle-mesh
//! Ewald (cardinal B-splines, [`Method::Spme`]; Essmann, Perera, Berkowitz, Darden, Lee,
//! Pedersen, J. Chem. Phys. 103 (1995) 8577) and spectral Ewald (truncated Gaussians,
//! [`Method::Spectral`]; Lindbo & Tornberg, J. Comput. Phys. 230 (2011) 8744), the same
//! approximation as the CPU path ([`crate::ewald`]'s `spme.rs` and `spectral.rs`) on the same
//! parameters, so that both agree to rounding.
//!
//! Steps of [`GpuKspace::execute`] (kernels in `kernels/ewald_kspace.cu`, all on the device's
//! stream):
//! 1. positions → wrapped fractional coordinates through the cell's reciprocal vectors
//!    (triclinic cells need nothing special) → spreader coordinates `2π(s_d − sh_d)`, with the
//!    shift `sh_d = p/(2K_d)` of SPME's centred B-spline of order `p` (0 for spectral Ewald);
//!    charges → complex strengths `(q, 0)`; non-finite input is reported by index;
//! 2. spreading of the charges with [`GpuSpreader`] (GM, GM-sort, SM, CSR single mesh, GROUP
//!    mesh: the particle-mesh spreading methods of Guo, Liu, Xu, Du & Chow, Procedia Comput.
//!    Sci. 51 (2015) 120, and cuFINUFFT's subproblems): GM unless fixed in the options, for
//!    plans of fewer than 2¹⁷ charges (MD: new positions every execute, one or two grid passes
//!    per configuration, so no sort or tile set-up is amortised — measured on an H100 with JAC
//!    DHFR, 23 558 charges, grids 72–96³, order 6–10, per evaluation: GM 0.99–2.08 ms, GM-sort
//!    1.08–2.05, SM 1.30–3.24, CSR 1.40–5.0; `benches/results/ewald_gpu_2026-11-25.md`), else
//!    by [`crate::gpu::spread::select_method`];
//! 3. forward c2c FFT ([`FftDevice`]: cuFFT, or FFTW on the emulator);
//! 4. multiplication by the influence function `θ(m) = (4π/V) e^{−k²/4ξ²}/k² / Π_d C_d(m_d)`
//!    (`crate::ewald::influence`; the B-spline deconvolution of SPME, `C_d = 1/|b_d(m_d)|²` with
//!    Essmann's `b_d`, and the Gaussian one of spectral Ewald, `C_d = ψ̂_d(m_d)²`), computed on
//!    the host by the CPU code once per cell and kept on the device; the k-space virial
//!    `Σ_m ½θ|B|² [δ − 2(1/(4ξ²) + 1/k²) k ⊗ k]` is reduced in the same pass (f64 partial
//!    sums per block, added in a fixed order);
//! 5. inverse FFT and interpolation at the charges, as the CPU path:
//!    * SPME: the potential and its gradient with the same B-splines and their derivatives
//!      (Essmann et al. eq. 4.9: analytic forces), `E_α = −Σ_d ∂φ/∂u_d K_d a*_dα`;
//!    * spectral Ewald: fields by ik-differentiation, `θB(1 + k_x)` and `θB(k_z − ik_y)` in two
//!      grids whose inverse transforms are `φ + iE_x` and `E_y + iE_z`, interpolated with the
//!      Gaussian by the spreader (one batched interpolation of both grids);
//! 6. `Σ q_i φ_i`, `Σ q_i`, `Σ q_i²` by a device reduction (f64): the k-space energy
//!    `U_k = ½ Σ q_i φ^k_i`, and the sums the self and background terms need.
//!
//! Conventions as [`crate::ewald`] (docs/design.md §2): positions interleaved `xyz[3i + d]`,
//! charges `q[i]`, potentials `φ[i]`, fields `field[3i + d]` (`E = −∇φ`), all `f64` device
//! buffers in the caller's units (no Coulomb constant); the cell `cell[3i + j]` = component `j`
//! of lattice vector `i` (lower-triangular). The grids and the FFT are in precision `T`
//! (`f64`, or `f32` for mixed precision); interpolation sums and every reduction accumulate in
//! `f64`. Unlike the CPU plan the device works in the caller's units directly (no power-of-two
//! rescaling), so cells and charges of ordinary magnitude are assumed (in `f32`, grid values
//! must stay within its range).

use crate::error::{Error, Result};
use crate::ewald::influence::{influence, spectral_corr, spme_corr};
use crate::ewald::{EwaldParams, Method, PeriodicBox};
use crate::gpu::device::{download_vec, Arg, FftDevice};
use crate::gpu::phases::Phases;
use crate::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use crate::gpu::types::GpuReal;
use crate::kernel::bspline::BSplineParams;
use crate::kernel::gaussian::GaussParams;
use crate::kernel::Kernel;

/// Threads per block of the Ewald kernels (`FF_EW_BLOCK` of `ewald_kspace.cu`; the block
/// reductions assume it).
pub(crate) const EW_BLOCK: u32 = 128;
/// Most blocks of a grid-stride launch (also the most partial sums of one reduction).
const EW_MAX_BLOCKS: usize = 1024;
/// SPME orders with a gather kernel of their own (`ff_ewald_spme_gather_<precision>_p<order>`
/// in `kernels/ewald_kspace.cu`, `FF_EWALD_DEFINE_GATHERS`: the orders the parameter selection
/// chooses), whose x-axis weights stay in registers; other orders run the kernel that reads the
/// order at run time.
pub const SPECIALISED_ORDERS: std::ops::RangeInclusive<usize> = 4..=10;
/// Index of `Σ q_i` in the device sums ([`GpuKspace::sums`]).
pub(crate) const SUM_Q: i32 = 1;

/// Blocks of a grid-stride launch over `n` items.
pub(crate) fn ew_blocks(n: usize) -> u32 {
    n.div_ceil(EW_BLOCK as usize).clamp(1, EW_MAX_BLOCKS) as u32
}

/// Energy, virial and charge sums of one k-space evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KspaceResult {
    /// k-space energy `U_k = ½ Σ_i q_i φ^k_i`.
    pub energy: f64,
    /// k-space virial `W_αβ` at `[3α + β]` (symmetric; zeros unless requested), the
    /// convention of [`crate::ewald`] (`W = −∂U/∂ε`).
    pub virial: [f64; 9],
    /// Net charge `Σ_i q_i`.
    pub q_sum: f64,
    /// `Σ_i q_i²`.
    pub q2_sum: f64,
}

/// Plans for fewer charges than this spread with GM unless a method is given (module docs).
const GM_BELOW_CHARGES: usize = 1 << 17;

/// What a [`GpuKspace`] computes: the method, `ξ`, the grid `K_d`, the SPME order `p` or the
/// spectral Ewald support, the kernel and the largest number of charges.
struct KspaceConfig {
    method: Method,
    xi: f64,
    nf: [usize; 3],
    order: usize,
    n_max: usize,
    kernel: Kernel,
}

/// The mesh side of a [`GpuKspace`]: the grids, their FFT plans and what multiplies the
/// spectrum (steps 3–5 of the module docs).
struct KspaceMesh<D: FftDevice> {
    /// One grid (forward; SPME and potential-only inverse).
    fft1: D::FftPlan,
    /// Both grids (spectral Ewald inverse with fields).
    fft2: Option<D::FftPlan>,
    /// Reciprocal vectors `a*_d` (9 f64, row `d`).
    rb: D::Buf,
    /// `θ` on the full spectrum (Π K values of `T`).
    theta: D::Buf,
    /// One (SPME) or two (spectral Ewald) complex grids of `T`.
    grid: D::Buf,
}

/// The charge side of a [`GpuKspace`], `O(n_max)`: spreader coordinates and strengths, the
/// spectral Ewald interpolated values, a potential scratch for calls without one, and the
/// first invalid index per check (steps 1, 5, 6).
struct KspacePoints<D: FftDevice> {
    coords: [D::Buf; 3],
    strengths: D::Buf,
    /// Spectral Ewald: interpolated values (2 `n_max` complex `T`).
    vals: D::Buf,
    phi_scratch: D::Buf,
    bad: D::Buf,
}

/// The device reductions of a [`GpuKspace`] (f64).
struct KspaceSums<D: FftDevice> {
    /// Per-block partial sums of one reduction.
    partials: D::Buf,
    /// `[Σ qφ, Σ q, Σ q², W_xx, W_xy, W_xz, W_yy, W_yz, W_zz]` of the last execute.
    sums: D::Buf,
}

/// The k-space part of SPME or spectral Ewald on device `D`, grids and FFT in precision `T`
/// (module docs). Owns its grids, FFT plans, spreader and scratch: `execute` with new
/// positions reuses everything.
pub struct GpuKspace<T: GpuReal, D: FftDevice> {
    dev: D,
    cfg: KspaceConfig,
    spreader: GpuSpreader<T, D>,
    mesh: KspaceMesh<D>,
    points: KspacePoints<D>,
    red: KspaceSums<D>,
    /// Print per-phase device timings of each execute ([`crate::gpu::phases::Phases`]).
    debug: bool,
}

fn check_len<D: FftDevice>(dev: &D, b: &D::Buf, need: usize, what: &str) -> Result<()> {
    if dev.len(b) < need {
        return Err(Error::InvalidArg(format!("{what}: a device buffer of {} bytes, need {need}", dev.len(b))));
    }
    Ok(())
}

impl<T: GpuReal, D: FftDevice> GpuKspace<T, D> {
    /// Makes the k-space part for up to `n_max` charges in the cell `cell` (`cell[3i + j]`,
    /// lower-triangular, caller's units) with the parameters `params` the CPU rule chose
    /// ([`crate::ewald::CpuEwald::params`], or `GpuEwaldPlan`, which uses the same rule):
    /// `ξ`, the grid `K_d` (each even, at least twice the window), the SPME order `p` or the
    /// spectral Ewald support `P` and Gaussian shape `τ`. `sopts`: the spreader's options; a
    /// zero `reuse_hint` becomes the number of grid passes per point configuration (SPME 1:
    /// one spread; spectral Ewald 2: a spread and an interpolation), since every `execute`
    /// sets new points.
    ///
    /// Device memory: the grid (`2·ΠK·sizeof T` bytes, twice that for spectral Ewald), `θ`
    /// (`ΠK·sizeof T`), and `O(n_max)` scratch. Errors: [`Error::NotSupported`] (the direct
    /// method), [`Error::InvalidArg`] (cell, `ξ`, grid, order/support, `τ`, `n_max`),
    /// [`Error::Modes`] (a grid the spreader cannot index), [`Error::Alloc`] and device errors.
    pub fn new(dev: D, method: Method, cell: &[f64; 9], params: &EwaldParams, n_max: usize, sopts: GpuSpreadOpts) -> Result<Self> {
        let bx = PeriodicBox::new(cell)?;
        let (nf, order, xi) = (params.grid, params.order, params.xi);
        if !(xi.is_finite() && xi > 0.0) {
            return Err(Error::InvalidArg(format!("xi = {xi:e} must be finite and positive")));
        }
        if n_max == 0 || n_max > i32::MAX as usize / 4 {
            return Err(Error::NPoints(format!("n_max = {n_max}; the device k-space part takes 1 … 2^29 − 1 charges")));
        }
        let kernel = match method {
            Method::Spme => Kernel::BSpline(BSplineParams { order }),
            Method::Spectral => {
                if !(params.tau.is_finite() && params.tau > 0.0) {
                    return Err(Error::InvalidArg(format!("spectral Ewald shape tau = {:e} must be finite and positive", params.tau)));
                }
                Kernel::Gaussian(GaussParams { w: order, tau: params.tau })
            }
            Method::Direct => {
                return Err(Error::NotSupported("the direct Ewald sum has no device k-space part (use SPME or spectral Ewald)".into()))
            }
        };
        if method == Method::Spme && !(2..=crate::kernel::MAX_WIDTH).contains(&order) {
            return Err(Error::InvalidArg(format!("SPME order {order} not in 2 … {}", crate::kernel::MAX_WIDTH)));
        }
        if nf.iter().any(|&k| k == 0 || k % 2 != 0) {
            return Err(Error::InvalidArg(format!("grid {nf:?}: every size must be even and positive")));
        }
        let hint = if sopts.reuse_hint == 0 { if method == Method::Spme { 1 } else { 2 } } else { sopts.reuse_hint };
        // one point configuration per execute, a few tens of thousands of charges: GM unless a
        // method is given (module docs, step 2)
        let gm = (sopts.method.is_none() && n_max < GM_BELOW_CHARGES).then_some(GpuMethod::Gm);
        let sopts = GpuSpreadOpts { reuse_hint: hint, method: sopts.method.or(gm), ..sopts };
        let spreader = GpuSpreader::<T, D>::new(dev.clone(), 3, &nf, &kernel, sopts)?;
        let total: usize = nf.iter().product();
        let tb = std::mem::size_of::<T>();
        let ngrids = if method == Method::Spectral { 2 } else { 1 };
        let double = T::NAME == "f64";
        let fft1 = dev.fft_plan(&nf, double, 1)?;
        let fft2 = if ngrids == 2 { Some(dev.fft_plan(&nf, double, 2)?) } else { None };
        let grid = dev.alloc(ngrids * total * 2 * tb)?;
        let coords = [dev.alloc(n_max * tb)?, dev.alloc(n_max * tb)?, dev.alloc(n_max * tb)?];
        let strengths = dev.alloc(n_max * 2 * tb)?;
        let vals = dev.alloc(if method == Method::Spectral { 2 * n_max * 2 * tb } else { 1 })?;
        let phi_scratch = dev.alloc(n_max * 8)?;
        let bad = dev.alloc(3 * 4)?;
        let partials = dev.alloc(EW_MAX_BLOCKS * 6 * 8)?;
        let sums = dev.alloc(9 * 8)?;
        let rb = dev.alloc(9 * 8)?;
        let theta = dev.alloc(total * tb)?;
        let mut s = GpuKspace {
            dev,
            cfg: KspaceConfig { method, xi, nf, order, n_max, kernel },
            spreader,
            mesh: KspaceMesh { fft1, fft2, rb, theta, grid },
            points: KspacePoints { coords, strengths, vals, phi_scratch, bad },
            red: KspaceSums { partials, sums },
            debug: false,
        };
        s.upload_box(&bx)?;
        Ok(s)
    }

    /// Prints the device time of each phase of every execute to stderr when `on`.
    pub fn set_debug(&mut self, on: bool) {
        self.debug = on;
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.cfg.method
    }

    /// Largest number of charges per `execute`.
    pub fn n_max(&self) -> usize {
        self.cfg.n_max
    }

    /// The spreader (its method, bins and compute units are readable there).
    pub fn spreader(&self) -> &GpuSpreader<T, D> {
        &self.spreader
    }

    /// Changes the cell, keeping the parameters: recomputes `θ` (on the host, by the CPU code)
    /// and uploads it with the reciprocal vectors. Whether the parameters are still adequate is
    /// the caller's decision (`GpuEwaldPlan::set_box` applies the CPU rule). Errors:
    /// [`Error::InvalidArg`] (cell), [`Error::Alloc`], device errors.
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        let bx = PeriodicBox::new(cell)?;
        self.upload_box(&bx)
    }

    fn upload_box(&mut self, bx: &PeriodicBox) -> Result<()> {
        let corr = match self.cfg.method {
            Method::Spme => spme_corr(self.cfg.nf, self.cfg.order),
            _ => spectral_corr(self.cfg.nf, &self.cfg.kernel),
        };
        let th = influence(bx, self.cfg.xi, self.cfg.nf, self.cfg.nf[0], &corr)?;
        let tt: Vec<T> = th.iter().map(|&v| T::of(v)).collect();
        let rb: Vec<f64> = bx.recip.iter().flatten().copied().collect();
        self.dev.upload(&mut self.mesh.theta, crate::gpu::types::as_bytes(&tt))?;
        self.dev.upload(&mut self.mesh.rb, crate::gpu::types::as_bytes(&rb))?;
        Ok(())
    }

    /// The device sums of the last `execute` (9 f64: `Σ q_i φ^k_i`, `Σ q_i` at index
    /// [`SUM_Q`], `Σ q_i²`, then the k-space virial xx, xy, xz, yy, yz, zz).
    pub(crate) fn sums(&self) -> &D::Buf {
        &self.red.sums
    }

    /// Evaluates the k-space part for `n ≤ n_max` charges: `xyz` (3n f64, interleaved, any
    /// values: wrapped into the cell), `q` (n f64). **Overwrites** `phi` (n f64) with the
    /// k-space potentials and `field` (3n f64, `field[3i + d]`) with the k-space fields, when
    /// given; returns the k-space energy, the virial (zeros unless `virial`) and the charge sums
    /// (one download of 72 bytes). Errors: [`Error::NPoints`] (`n > n_max`),
    /// [`Error::InvalidArg`] (a buffer too small), [`Error::NonFinite`] (naming the first
    /// non-finite position or charge), [`Error::Range`] (a position too far outside the cell
    /// for its fractional coordinates to be represented) — all reported before any output is
    /// written —, and device errors, after which the outputs are unspecified.
    pub fn execute(
        &mut self, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>, virial: bool,
    ) -> Result<KspaceResult> {
        if n > self.cfg.n_max {
            return Err(Error::NPoints(format!("n = {n} exceeds the plan's n_max = {}", self.cfg.n_max)));
        }
        let dev = self.dev.clone();
        check_len(&dev, xyz, 3 * n * 8, "xyz")?;
        check_len(&dev, q, n * 8, "q")?;
        if let Some(p) = &phi {
            check_len(&dev, p, n * 8, "phi")?;
        }
        if let Some(f) = &field {
            check_len(&dev, f, 3 * n * 8, "field")?;
        }
        let sfx = T::SUFFIX;
        let nfi = self.cfg.nf.map(|k| k as i32);
        let sh = if self.cfg.method == Method::Spme { self.cfg.nf.map(|k| 0.5 * self.cfg.order as f64 / k as f64) } else { [0.0; 3] };
        let mut ph = Phases::start(&dev, self.debug, "ewald gpu")?;
        // 1. coordinates and strengths, checked
        dev.upload(&mut self.points.bad, crate::gpu::types::as_bytes(&[n as i32; 3]))?;
        dev.launch(&format!("ff_ewald_prep_{sfx}"), ew_blocks(n), EW_BLOCK, 0, &[
            Arg::I32(n as i32), Arg::Buf(xyz), Arg::Buf(q), Arg::Buf(&self.mesh.rb), Arg::F64(sh[0]), Arg::F64(sh[1]), Arg::F64(sh[2]),
            Arg::Buf(&self.points.coords[0]), Arg::Buf(&self.points.coords[1]), Arg::Buf(&self.points.coords[2]), Arg::Buf(&self.points.strengths),
            Arg::Buf(&self.points.bad),
        ])?;
        let bad = download_vec::<D, i32>(&dev, &self.points.bad, 3)?;
        if (bad[0] as usize) < n || (bad[2] as usize) < n {
            let i = (bad[0].min(bad[2])) as usize;
            let r = download_at::<D>(&dev, xyz, 3 * i, 3)?;
            return Err(if let Some(d) = (0..3).find(|&d| !r[d].is_finite()) {
                Error::NonFinite(format!("xyz[{}] (coordinate {} of charge {i}) is {}", 3 * i + d, ["x", "y", "z"][d], r[d]))
            } else {
                Error::Range(format!(
                    "charge {i} at ({:e}, {:e}, {:e}) is too far outside the cell for its fractional coordinates to be represented",
                    r[0], r[1], r[2]
                ))
            });
        }
        if (bad[1] as usize) < n {
            let i = bad[1] as usize;
            return Err(Error::NonFinite(format!("q[{i}] is {}", download_at::<D>(&dev, q, i, 1)?[0])));
        }
        ph.end("prep+check")?;
        // 2. spreading, 3. forward FFT
        self.spreader.setpts_dev(n, [Some(&self.points.coords[0]), Some(&self.points.coords[1]), Some(&self.points.coords[2])])?;
        ph.end("setpts")?;
        self.spreader.spread_dev(&self.points.strengths, &mut self.mesh.grid)?;
        ph.end("spread")?;
        dev.fft_exec(&self.mesh.fft1, &mut self.mesh.grid, -1)?;
        ph.end("fft")?;
        // 4. influence function, ik-differentiation, virial
        let total: usize = self.cfg.nf.iter().product();
        let gblocks = ew_blocks(total);
        let with_field = field.is_some();
        let packed = self.cfg.method == Method::Spectral && with_field;
        let tb = std::mem::size_of::<T>();
        {
            // the second grid of the spectral Ewald pair, as an address inside the grid buffer
            let g2 = if packed { Arg::U64(dev.addr(&self.mesh.grid) + (total * 2 * tb) as u64) } else { Arg::Null };
            dev.launch(&format!("ff_ewald_scale_{sfx}"), gblocks, EW_BLOCK, 0, &[
                Arg::I32(nfi[0]), Arg::I32(nfi[1]), Arg::I32(nfi[2]), Arg::Buf(&self.mesh.rb), Arg::Buf(&self.mesh.theta), Arg::F64(self.cfg.xi),
                Arg::I32(packed as i32), Arg::I32(virial as i32), Arg::Buf(&self.mesh.grid), g2, Arg::Buf(&self.red.partials),
            ])?;
        }
        if virial {
            dev.launch("ff_ewald_sum_partials", 1, EW_BLOCK, 0, &[
                Arg::I32(gblocks as i32), Arg::I32(6), Arg::I32(3), Arg::Buf(&self.red.partials), Arg::Buf(&self.red.sums),
            ])?;
        }
        ph.end("influence")?;
        // 5. inverse FFT, interpolation
        match (&self.mesh.fft2, packed) {
            (Some(f2), true) => dev.fft_exec(f2, &mut self.mesh.grid, 1)?,
            _ => dev.fft_exec(&self.mesh.fft1, &mut self.mesh.grid, 1)?,
        }
        ph.end("ifft")?;
        let phi_out: &mut D::Buf = match phi {
            Some(p) => p,
            None => &mut self.points.phi_scratch,
        };
        let field_arg = match &field {
            Some(f) => Arg::Buf(&**f),
            None => Arg::Null,
        };
        match self.cfg.method {
            Method::Spme => {
                let g = self.spreader.folded_coords().ok_or_else(|| Error::Internal("SPME gather without points".into()))?;
                let order = self.cfg.order;
                let name = if SPECIALISED_ORDERS.contains(&order) {
                    format!("ff_ewald_spme_gather_{sfx}_p{order}")
                } else {
                    format!("ff_ewald_spme_gather_{sfx}")
                };
                dev.launch(&name, ew_blocks(n), EW_BLOCK, 0, &[
                    Arg::I32(n as i32), Arg::I32(nfi[0]), Arg::I32(nfi[1]), Arg::I32(nfi[2]), Arg::I32(self.cfg.order as i32),
                    Arg::Buf(&g[0]), Arg::Buf(&g[1]), Arg::Buf(&g[2]), Arg::Buf(&self.mesh.grid), Arg::Buf(&self.mesh.rb), Arg::Buf(&*phi_out),
                    field_arg,
                ])?;
            }
            _ => {
                self.spreader.interp_dev_batch(&self.mesh.grid, &mut self.points.vals, 0, if packed { 2 } else { 1 })?;
                dev.launch(&format!("ff_ewald_spectral_out_{sfx}"), ew_blocks(n), EW_BLOCK, 0, &[
                    Arg::I32(n as i32), Arg::Buf(&self.points.vals), Arg::Buf(&*phi_out), field_arg,
                ])?;
            }
        }
        ph.end("interp")?;
        // 6. Σ qφ, Σ q, Σ q²
        let pblocks = ew_blocks(n);
        dev.launch("ff_ewald_charge_sums", pblocks, EW_BLOCK, 0, &[
            Arg::I32(n as i32), Arg::Buf(q), Arg::Buf(&*phi_out), Arg::Buf(&self.red.partials),
        ])?;
        dev.launch("ff_ewald_sum_partials", 1, EW_BLOCK, 0, &[
            Arg::I32(pblocks as i32), Arg::I32(3), Arg::I32(0), Arg::Buf(&self.red.partials), Arg::Buf(&self.red.sums),
        ])?;
        let s = download_vec::<D, f64>(&dev, &self.red.sums, 9)?;
        ph.end("sums")?;
        ph.report("k-space (ms)")?;
        let mut w = [0.0; 9];
        if virial {
            let idx = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];
            for (c, &(a, b)) in idx.iter().enumerate() {
                w[3 * a + b] = s[3 + c];
                w[3 * b + a] = s[3 + c];
            }
        }
        Ok(KspaceResult { energy: 0.5 * s[0], virial: w, q_sum: s[1], q2_sum: s[2] })
    }
}

/// Downloads `len` f64 values of `buf` starting at value `i`.
fn download_at<D: FftDevice>(dev: &D, buf: &D::Buf, i: usize, len: usize) -> Result<Vec<f64>> {
    let mut v = vec![0.0f64; len];
    dev.download(buf, 8 * i, crate::gpu::types::as_bytes_mut(&mut v))?;
    Ok(v)
}
