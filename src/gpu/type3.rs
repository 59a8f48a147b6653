//! GPU NUFFT type 3 (`f_k = Σ_j c_j e^{± i s_k·x_j}`, non-uniform points to non-uniform
//! frequencies), through the same spreading kernels and the GPU type 2: the algorithm of
//! [`crate::nufft::type3`] (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41 (2019)
//! C479, §3; docs/design.md §9.4) with its host-side set-up shared, not copied —
//! [`Type3Params`] (σ, tolerance, kernel, ψ̂) and [`Type3Geometry`] (extents, fine grids,
//! rescaled points and frequencies, pre-phase and deconvolution factors) — so that the CPU
//! and GPU executors compute the same approximation.
//!
//! On the device: pre-phase `c'_j = c_j e^{± i D·x_j}` (`ff_cmul`, skipped when `D = 0`), spread
//! `c'` at the rescaled points onto the fine grid ([`GpuSpreader`], which overwrites it), the
//! inner type 2 ([`GpuNufft`], FFT-ordered modes, the rescaled frequencies as its points),
//! deconvolution and post-phase (`ff_cmul`). Layout as on the CPU: `c[t*M + j]`,
//! `f[t*N + k]`. `ntrans > 1` runs in the inner type 2's batches of `B` vectors
//! (docs/design.md §5.2): each stage is one launch (or one batched FFT) per batch. The outputs
//! are collected in scratch on the device and written to the caller (one download, or one
//! device copy) only after every batch succeeded, so a failure leaves the output untouched.
//!
//! Device memory: `B` fine grids (`2·sizeof(T)·Π nf_d` bytes each) and the inner type 2's
//! `B` grids (`σ^d` times as many), the spreader's point structures, `2·sizeof(T)·(M + N)`
//! bytes of factors, and per execute the inputs and outputs of all `ntrans` vectors.

use super::device::{download_vec, upload_new, Arg, FftDevice};
use super::nufft::GpuNufft;
use super::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use super::types::{as_bytes_mut, from_ord};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::nufft::exec::{NufftExec, Points as ExecPoints, Timings};
use crate::nufft::options::{NufftInfo, NufftOpts};
use crate::nufft::params::Backend;
use crate::nufft::type3::{non_finite, Extent, Type3Geometry, Type3Grid, Type3Params};
use crate::real::Real;
use crate::threads::Threads;
use num_complex::Complex;

/// What `setpts` builds on the device.
struct Points<T: Real, D: FftDevice> {
    geo: Type3Geometry,
    spreader: GpuSpreader<T, D>,
    inner: GpuNufft<T, D>,
    /// `e^{± i D·x_j}` (M values; `None` when `D = 0` on every axis).
    prephase: Option<D::Buf>,
    /// `e^{± i (s_k − D)·C} / Π_d ψ̂(s'_{dk})` (N values).
    deconv: D::Buf,
    /// The fine grids of one batch (`inner.batch()` grids of Π nf complex values).
    fine: std::sync::Mutex<D::Buf>,
    /// Tolerance used and warnings for these points (`Type3Params::accuracy_at`).
    accuracy: (f64, i32),
}

/// A type-3 NUFFT plan on device `D` in precision `T` (see the module docs).
pub struct GpuType3<T: Real, D: FftDevice> {
    dev: D,
    params: Type3Params,
    sopts: GpuSpreadOpts,
    threads: Threads,
    pts: Option<Points<T, D>>,
}

impl<T: Real, D: FftDevice> GpuType3<T, D> {
    /// Makes a plan: arguments as [`crate::nufft::Type3Plan::new`] (validated and chosen by
    /// [`Type3Params::new`]; `opts.backend` is not read), GPU spreading options `sopts` for
    /// both the type-3 spreading and the inner type 2. The grids are sized at `setpts`.
    /// Errors: [`Error::Dim`], [`Error::InvalidArg`], [`Error::Tol`].
    pub fn new(dev: D, dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts, sopts: GpuSpreadOpts) -> Result<Self> {
        let params = Type3Params::new::<T>(dim, iflag, ntrans, tol, opts)?;
        let threads = Threads::new(opts.nthreads)?;
        Ok(GpuType3 { dev, params, sopts, threads, pts: None })
    }

    /// Sets (replaces) the `M` points `xs` and the `N` target frequencies `ss` (axes ≥ dim
    /// ignored), any finite reals, from host arrays: checks their lengths, uploads them and
    /// continues as [`GpuType3::setpts_dev`]. Errors: [`Error::NPoints`] (unequal lengths and
    /// the limits of [`Type3Params::check_counts`]), then those of [`GpuType3::setpts_dev`].
    pub fn setpts(&mut self, xs: [&[T]; 3], ss: [&[T]; 3]) -> Result<()> {
        let dim = self.params.dim;
        self.params.check_sizes(&xs, &ss)?;
        let (m, n) = (xs[0].len(), ss[0].len());
        let upload = |v: &[&[T]; 3]| -> Result<Vec<D::Buf>> { v[..dim].iter().map(|a| upload_new(&self.dev, a)).collect() };
        let (xb, sb) = (upload(&xs)?, upload(&ss)?);
        self.setpts_owned(m, xb, n, sb)
    }

    /// Sets (replaces) the `m` points and `n` target frequencies from device buffers of this
    /// device: `xs[d]` holds `m` coordinates of axis `d`, `ss[d]` `n` frequencies, precision
    /// `T`, any finite reals (axes ≥ dim ignored; `None` allowed for an empty set). They are
    /// copied on the device; the whole set-up runs there ([`GpuType3::setpts_owned`]).
    /// Errors: [`Error::NPoints`] (the limits of [`Type3Params::check_counts`]),
    /// [`Error::InvalidArg`] (a used axis missing or shorter than its count), then those of
    /// [`GpuType3::setpts_owned`].
    pub fn setpts_dev(&mut self, m: usize, xs: [Option<&D::Buf>; 3], n: usize, ss: [Option<&D::Buf>; 3]) -> Result<()> {
        self.params.check_counts(m, n)?;
        let dim = self.params.dim;
        let own = |len: usize, bufs: [Option<&D::Buf>; 3], names: [&str; 3]| -> Result<Vec<D::Buf>> {
            (0..dim).map(|d| self.owned_copy(len, bufs[d], names[d])).collect()
        };
        let xb = own(m, xs, ["x", "y", "z"])?;
        let sb = own(n, ss, ["s", "t", "u"])?;
        self.setpts_owned(m, xb, n, sb)
    }

    /// The plan's own copy of `len` values of precision `T` from the device buffer `src` (axis
    /// `name`; not read when `len` is 0), which the set-up then rescales in place.
    /// Errors: [`Error::InvalidArg`] (`src` missing or shorter than `len` values),
    /// [`Error::Alloc`] and device errors.
    fn owned_copy(&self, len: usize, src: Option<&D::Buf>, name: &str) -> Result<D::Buf> {
        let tb = std::mem::size_of::<T>();
        let mut b = self.dev.alloc((len * tb).max(1))?;
        match src {
            _ if len == 0 => {}
            Some(src) if self.dev.len(src) >= len * tb => self.dev.copy(&mut b, 0, src, 0, len * tb)?,
            Some(src) => {
                return Err(Error::InvalidArg(format!(
                    "{name}: a device buffer of {} bytes holds fewer than {len} values of {tb} bytes", self.dev.len(src))))
            }
            None => return Err(Error::InvalidArg(format!("{name}: no device buffer for {len} values"))),
        }
        Ok(b)
    }

    /// The set-up of [`GpuType3::setpts`] on the plan's own copies (`xb[d]`: `m` points,
    /// `sb[d]`: `n` frequencies of axis `d < dim`, precision `T`, rescaled in place), all on
    /// the device: the finiteness check and the extents per axis (`ff_t3_bounds`: the host
    /// reads back three integers per axis), the geometry from them on the host
    /// ([`Type3Params::geometry_of`], the CPU's), the pre-phase and deconvolution factors
    /// (`ff_t3_prephase`, `ff_t3_deconv`, with [`crate::nufft::type3::KernelFt::tables`]), the
    /// rescaling (`ff_t3_rescale`), then the spreader on the fine grid and the inner GPU type 2
    /// from the rescaled device arrays ([`GpuSpreader::setpts_dev`], [`GpuNufft::setpts_dev`]).
    /// Errors: [`Error::NonFinite`] (naming the first bad value of the lowest axis, points
    /// before frequencies, as the CPU), [`Error::Range`], [`Error::Modes`] — the previous
    /// points kept —, then [`Error::NotSupported`] (M or N ≥ 2³¹), [`Error::Alloc`],
    /// [`Error::Modes`] (a fine grid of 2³¹ or more points, the GPU limit) and device errors
    /// (the plan left without points).
    fn setpts_owned(&mut self, m: usize, mut xb: Vec<D::Buf>, n: usize, mut sb: Vec<D::Buf>) -> Result<()> {
        let p = &self.params;
        let dim = p.dim;
        let dev = &self.dev;
        let block = self.sopts.block;
        let blocks = |len: usize| -> u32 { len.div_ceil(block as usize).clamp(1, u32::MAX as usize) as u32 };
        // 1. finiteness and extents: [first bad index, ord(min), ord(max)] per axis, x then s
        let axes: Vec<(&D::Buf, usize)> = xb.iter().map(|b| (b, m)).chain(sb.iter().map(|b| (b, n))).collect();
        let init: Vec<u64> = axes.iter().flat_map(|_| [u64::MAX, u64::MAX, 0]).collect();
        let bounds = upload_new(dev, &init)?;
        let addr = dev.addr(&bounds);
        for (k, &(b, len)) in axes.iter().enumerate() {
            if len > 0 {
                dev.launch(&format!("ff_t3_bounds_{}", T::NAME), blocks(len).min(1024), block, 0,
                           &[Arg::U64(len as u64), Arg::Buf(b), Arg::U64(addr + 24 * k as u64)])?;
            }
        }
        let bv: Vec<u64> = download_vec(dev, &bounds, init.len())?;
        for (k, &(b, _)) in axes.iter().enumerate() {
            if bv[3 * k] != u64::MAX {
                let (i, d) = (bv[3 * k] as usize, k % dim);
                let (names, what) = if k < dim { (["x", "y", "z"], "point") } else { (["s", "t", "u"], "target frequency") };
                let mut v = [T::zero()];
                dev.download(b, i * std::mem::size_of::<T>(), as_bytes_mut(&mut v))?;
                return Err(non_finite(names[d], d, what, i, v[0]));
            }
        }
        let ext = |k: usize, len: usize| {
            if len == 0 { Extent { centre: 0.0, half: 0.0 } } else { Extent::from_bounds(from_ord(bv[3 * k + 1]), from_ord(bv[3 * k + 2])) }
        };
        let mut ext_x = [Extent { centre: 0.0, half: 0.0 }; 3];
        let mut ext_s = ext_x;
        for d in 0..dim {
            ext_x[d] = ext(d, m);
            ext_s[d] = ext(dim + d, n);
        }
        let geo = p.geometry_of(m, n, ext_x, ext_s)?;
        self.pts = None;
        for (v, what) in [(geo.m, "points M"), (geo.n, "target frequencies N")] {
            if v > i32::MAX as usize {
                return Err(Error::NotSupported(format!("GPU NUFFT type 3 with {v} {what} (at most 2^31 − 1)")));
            }
        }
        // 2. the factors, from the points and frequencies as given
        let z = 2 * std::mem::size_of::<T>();
        fn arg<B>(v: &[B], d: usize) -> Arg<'_, B> {
            v.get(d).map_or(Arg::Null, Arg::Buf)
        }
        let prephase = if geo.has_prephase() && m > 0 {
            let b = dev.alloc(m * z)?;
            let c = geo.ext_s.map(|e| e.centre);
            dev.launch(&format!("ff_t3_prephase_{}", T::NAME), blocks(m), block, 0, &[
                Arg::U64(m as u64), Arg::I32(dim as i32), arg(&xb, 0), arg(&xb, 1), arg(&xb, 2), Arg::F64(c[0]), Arg::F64(c[1]),
                Arg::F64(c[2]), Arg::F64(geo.sign()), Arg::Buf(&b),
            ])?;
            Some(b)
        } else {
            None
        };
        let deconv = dev.alloc((n * z).max(1))?;
        if n > 0 {
            let (band, tq, aq) = p.kft.tables();
            let mut par = vec![0.0f64; 12];
            for d in 0..dim {
                par[d] = geo.ext_s[d].centre;
                par[3 + d] = geo.ext_x[d].centre;
                par[6 + d] = geo.grids[d].h * geo.grids[d].gamma;
            }
            par[9] = band.map_or(-1.0, |b| b.0);
            par[10] = band.map_or(0, |b| b.1.len()) as f64;
            par[11] = tq.len() as f64;
            par.extend_from_slice(band.map_or(&[][..], |b| b.1));
            par.extend_from_slice(tq);
            par.extend_from_slice(aq);
            let pb = upload_new(dev, &par)?;
            dev.launch(&format!("ff_t3_deconv_{}", T::NAME), blocks(n), block, 0, &[
                Arg::U64(n as u64), Arg::I32(dim as i32), arg(&sb, 0), arg(&sb, 1), arg(&sb, 2), Arg::Buf(&pb), Arg::F64(geo.sign()),
                Arg::Buf(&deconv),
            ])?;
        }
        // 3. rescaled in place: the type-3 grid's points (x − C)/γ, the inner type 2's hγ(s − D)
        for d in 0..dim {
            let g = geo.grids[d];
            for (b, len, centre, scale) in [(&mut xb[d], m, geo.ext_x[d].centre, 1.0 / g.gamma), (&mut sb[d], n, geo.ext_s[d].centre, g.h * g.gamma)] {
                if len > 0 {
                    dev.launch(&format!("ff_t3_rescale_{}", T::NAME), blocks(len), block, 0,
                               &[Arg::U64(len as u64), Arg::Buf(&*b), Arg::F64(centre), Arg::F64(scale)])?;
                }
            }
        }
        // 4. the spreader on the fine grid and the inner type 2
        let nf = geo.nf();
        let mut spreader = GpuSpreader::<T, D>::new(dev.clone(), dim, &nf[..dim], &p.kernel, self.sopts)?;
        spreader.setpts_dev(m, [xb.first(), xb.get(1), xb.get(2)])?;
        let (inner_params, _) = p.inner_params::<T>(&geo, Backend::Cuda)?;
        let accuracy = p.accuracy_at::<T>(&geo, &inner_params);
        // the inner type 2 batches the ntrans vectors as a GPU type 2 would (its batch B and
        // chunks are the type-3 plan's); only its per-batch buffers are used
        let inner_params = crate::nufft::params::NufftParams { ntrans: p.ntrans, ..inner_params };
        let mut inner = GpuNufft::<T, D>::new(dev.clone(), inner_params, self.sopts)?;
        inner.setpts_dev(n, [sb.first(), sb.get(1), sb.get(2)])?;
        let fine_bytes = (geo.total() * z).checked_mul(inner.batch())
            .ok_or_else(|| Error::Alloc(format!("{} type-3 fine grids", inner.batch())))?;
        let fine = dev.alloc(fine_bytes)?;
        if p.opts.debug > 0 {
            eprintln!("[farfield nufft{} type 3 gpu] setpts {}, inner type 2 nf {:?}",
                      if T::NAME == "f32" { "f" } else { "" }, geo.describe(), &inner.info().nf[..dim]);
        }
        self.pts = Some(Points { geo, spreader, inner, prephase, deconv, fine: std::sync::Mutex::new(fine), accuracy });
        Ok(())
    }

    /// `a[v·n + i] ← a[v·n + i]·b[i]` for `i < n` and `v < nvec` on the device.
    fn cmul(&self, n: usize, nvec: usize, b: &D::Buf, a: &mut D::Buf) -> Result<()> {
        if n == 0 || nvec == 0 {
            return Ok(());
        }
        let block = self.sopts.block;
        let grid = u32::try_from(n.div_ceil(block as usize)).map_err(|_| Error::NotSupported("too many values for one launch".into()))?;
        self.dev.launch(&format!("ff_cmul_{}", T::NAME), grid, block, 0, &[Arg::I32(n as i32), Arg::I32(nvec as i32), Arg::Buf(b), Arg::Buf(a)])
    }

    /// All `ntrans` vectors, device to device, in the inner type 2's batches of `B` vectors:
    /// the pre-phase on a copy of all of `c` (`ntrans·M` complex values), then per batch one
    /// batched spreading onto `B` fine grids, the batched inner type 2 and the batched
    /// deconvolution/post-phase; the results go to scratch and reach `f` (`ntrans·N`) by one
    /// device copy after the last batch succeeded.
    fn run_all(&self, c: &D::Buf, f: &mut D::Buf) -> Result<()> {
        let p = self.points()?;
        let dev = &self.dev;
        let (m, n, nt, bsz) = (p.geo.m, p.geo.n, self.params.ntrans, p.inner.batch());
        let z = 2 * std::mem::size_of::<T>();
        let (cb, fb) = (m * z, n * z);
        let mut cv = dev.alloc((nt * cb).max(1))?;
        if nt * cb > 0 {
            dev.copy(&mut cv, 0, c, 0, nt * cb)?;
        }
        if let Some(ph) = &p.prephase {
            self.cmul(m, nt, ph, &mut cv)?;
        }
        let mut gv = dev.alloc((bsz * fb).max(1))?;
        let mut out = dev.alloc((nt * fb).max(1))?;
        let mut fine = p.fine.lock().unwrap_or_else(|e| e.into_inner());
        for v0 in (0..nt).step_by(bsz) {
            let nv = bsz.min(nt - v0);
            p.spreader.spread_dev_batch(&cv, v0, nv, &mut fine)?;
            if n > 0 {
                p.inner.execute_dev_batch(&fine, &mut gv, nv)?;
                self.cmul(n, nv, &p.deconv, &mut gv)?;
                dev.copy(&mut out, v0 * fb, &gv, 0, nv * fb)?;
            }
        }
        if nt * fb > 0 {
            dev.copy(f, 0, &out, 0, nt * fb)?;
        }
        Ok(())
    }

    fn points(&self) -> Result<&Points<T, D>> {
        self.pts.as_ref().ok_or_else(|| Error::NoPoints("call setpts before execute".into()))
    }

    /// All `ntrans` transforms on device buffers: reads `c` (`ntrans·M` interleaved complex
    /// values), writes `f` (`ntrans·N`); on an error `f` is untouched.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (buffer sizes), device errors.
    pub fn execute_dev_all(&self, c: &D::Buf, f: &mut D::Buf) -> Result<()> {
        let p = self.points()?;
        let z = 2 * std::mem::size_of::<T>();
        let nt = self.params.ntrans;
        let (cb, fb) = (nt * p.geo.m * z, nt * p.geo.n * z);
        if self.dev.len(c) < cb || self.dev.len(f) < fb {
            return Err(Error::InvalidArg(format!("device buffers of {} and {} bytes for c and f, need {cb} and {fb}",
                                                 self.dev.len(c), self.dev.len(f))));
        }
        self.run_all(c, f)
    }

    /// All `ntrans` transforms with host arrays: reads `c` (`ntrans·M`, `c[t*M + j]`), writes
    /// `f[t*N + k] = Σ_j c[t*M + j] e^{± i s_k·x_j}` (`ntrans·N`) with one download after
    /// every vector succeeded: on an error `f` is untouched.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), device errors.
    pub fn execute(&self, c: &[Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        let p = self.points()?;
        let nt = self.params.ntrans;
        if c.len() != nt * p.geo.m || f.len() != nt * p.geo.n {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {}, f = {} do not match ntrans·M = {}, ntrans·N = {}",
                c.len(), f.len(), nt * p.geo.m, nt * p.geo.n)));
        }
        let cb = upload_new(&self.dev, c)?;
        let mut fb = self.dev.alloc(std::mem::size_of_val(f).max(1))?;
        self.run_all(&cb, &mut fb)?;
        if !f.is_empty() {
            self.dev.download(&fb, 0, as_bytes_mut(f))?;
        }
        Ok(())
    }

    /// What the plan chose: the type-3 fine grid `nf` (zeros before `setpts`), kernel, σ,
    /// tolerance used, warnings; `backend` = CUDA.
    pub fn info(&self) -> NufftInfo {
        let p = &self.params;
        let nf = self.pts.as_ref().map_or([0; 3], |pt| pt.geo.nf());
        let (tol_used, warnings) = self.pts.as_ref().map_or((p.tol_used, p.warnings), |pt| pt.accuracy);
        NufftInfo {
            nf,
            kernel_width: p.kernel.width(),
            nthreads: self.threads.count(),
            upsampfac: p.sigma,
            kernel_param: p.kernel.shape_param(),
            tol_used,
            warnings,
            backend: Backend::Cuda,
        }
    }

    /// The fine grid of each axis (`None` before `setpts`).
    pub fn grids(&self) -> Option<[Type3Grid; 3]> {
        self.pts.as_ref().map(|p| p.geo.grids)
    }

    /// What the inner type 2 chose (`None` before `setpts`).
    pub fn inner_info(&self) -> Option<NufftInfo> {
        self.pts.as_ref().map(|p| p.inner.info())
    }

    /// The spreading methods of the current points: (type-3 spreading, inner interpolation).
    pub fn methods(&self) -> Option<(Option<GpuMethod>, Option<GpuMethod>)> {
        self.pts.as_ref().map(|p| (p.spreader.method(), p.inner.method()))
    }

    /// Number of points M (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.geo.m)
    }

    /// Number of target frequencies N (0 before `setpts`).
    pub fn num_targets(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.geo.n)
    }

    /// The spreading kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.params.kernel
    }
}

/// The executor of type 3 behind the NUFFT plan front for backend CUDA: a [`GpuType3`]
/// behind the [`NufftExec`] interface, on any device — [`CudaType3`] (the CUDA device) and the
/// emulator's plans (the `farfield-gpu-emu` test crate); host-array `setpts`, `execute_device`
/// on addresses of buffers of that device ([`super::device::Device::with_foreign`]).
pub struct GpuType3Exec<T: Real, D: FftDevice> {
    plan: GpuType3<T, D>,
}

/// The CUDA executor of type 3 behind the NUFFT plan front (`opts.backend = CUDA`): a
/// [`GpuType3`] on device 0.
pub type CudaType3<T> = GpuType3Exec<T, super::cuda::CudaDevice>;

// SAFETY: as for `GpuNufftExec`: the device handles are used behind the NUFFT plan's own lock
// (`&mut self` / the C API's mutex); cudarc's context binds itself to the calling thread; the
// emulator's buffers are plain host memory.
unsafe impl<T: Real, D: FftDevice> Send for GpuType3Exec<T, D> {}

impl<T: Real, D: FftDevice> GpuType3Exec<T, D> {
    /// The executor of `plan`.
    pub fn from_plan(plan: GpuType3<T, D>) -> Self {
        GpuType3Exec { plan }
    }
}

impl<T: Real> CudaType3<T> {
    /// Opens device 0 and makes the plan (arguments as [`GpuType3::new`], GPU options from
    /// `opts`). Errors: [`Error::NoDevice`], those of [`GpuType3::new`].
    pub fn new(dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        let dev = super::cuda::CudaDevice::for_nufft(opts)?;
        let plan = GpuType3::new(dev, dim, iflag, ntrans, tol, opts, GpuSpreadOpts::from_nufft_opts(opts))?;
        Ok(GpuType3Exec { plan })
    }

    /// [`CudaType3::new`] as a boxed executor.
    pub fn boxed(dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Box<dyn NufftExec<T>>> {
        Ok(Box::new(Self::new(dim, iflag, ntrans, tol, opts)?))
    }
}

impl<T: Real, D: FftDevice> NufftExec<T> for GpuType3Exec<T, D> {
    fn setpts(&mut self, pts: ExecPoints<'_, T>) -> Result<()> {
        self.plan.setpts(pts.x, pts.s)
    }
    unsafe fn setpts_device_type3(&mut self, m: usize, x: [u64; 3], n: usize, s: [u64; 3]) -> Result<()> {
        let plan = &mut self.plan;
        plan.params.check_counts(m, n)?;
        let dim = plan.params.dim;
        for (len, ptrs, names) in [(m, x, ["x", "y", "z"]), (n, s, ["s", "t", "u"])] {
            if let Some(d) = (0..dim).find(|&d| len > 0 && ptrs[d] == 0) {
                return Err(Error::NullPointer(format!("device array {} is NULL ({len} values)", names[d])));
            }
        }
        // the caller's arrays copied into the plan's own buffers, which the set-up rescales
        let tb = std::mem::size_of::<T>();
        let own = |len: usize, ptrs: [u64; 3], names: [&str; 3]| -> Result<Vec<D::Buf>> {
            (0..dim)
                .map(|d| match len {
                    0 => plan.owned_copy(0, None, names[d]),
                    _ => plan.dev.with_foreign(ptrs[d], len * tb, |src| plan.owned_copy(len, Some(&*src), names[d])),
                })
                .collect()
        };
        let (xb, sb) = (own(m, x, ["x", "y", "z"])?, own(n, s, ["s", "t", "u"])?);
        plan.setpts_owned(m, xb, n, sb)
    }
    fn has_points(&self) -> bool {
        self.plan.pts.is_some()
    }
    fn num_points(&self) -> usize {
        self.plan.num_points()
    }
    fn num_modes(&self) -> usize {
        self.plan.num_targets()
    }
    fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        self.plan.execute(c, f)
    }
    unsafe fn execute_device(&mut self, c: u64, f: u64) -> Result<()> {
        let plan = &self.plan;
        let nt = plan.params.ntrans;
        plan.dev.with_foreign_pair::<Complex<T>>(c, nt * plan.num_points(), f, nt * plan.num_targets(), |cs, fs| plan.execute_dev_all(cs, fs))
    }
    fn info(&self) -> NufftInfo {
        self.plan.info()
    }
    fn kernel(&self) -> &Kernel {
        self.plan.kernel()
    }
    fn timings(&self) -> Timings {
        Timings::default()
    }
}
