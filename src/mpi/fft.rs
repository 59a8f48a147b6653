//! FFTW's MPI transforms (`libfftw3_mpi`, FFTW manual §6), double precision: slab
//! decompositions along the slowest (first row-major) axis, as FFTW-MPI's `local_size`
//! functions give them.
//!
//! Sizes here are **row-major** (FFTW's order, slowest axis first): a farfield grid stored x
//! fastest with sizes `[n_x, n_y, n_z]` is the row-major `[n_z, n_y, n_x]`, split in slabs of
//! z-planes (y-rows in 2D).

use super::Comm;
use crate::error::{Error, Result};
use crate::fft::{planner_lock, AlignedVec};
use num_complex::Complex64;
use std::os::raw::{c_int, c_uint, c_void};
use std::sync::Once;

type Plan = *mut c_void;


const DEFAULT_BLOCK: isize = 0;
/// `FFTW_MPI_TRANSPOSED_IN`.
const TRANSPOSED_IN: c_uint = 1 << 29;
/// `FFTW_MPI_TRANSPOSED_OUT`.
const TRANSPOSED_OUT: c_uint = 1 << 30;
/// `FFTW_REDFT00`.
const REDFT00: c_int = 3;

#[link(name = "fftw3_mpi")]
extern "C" {
    fn fftw_mpi_init();
    fn fftw_mpi_local_size_many_transposed(rnk: c_int, n: *const isize, howmany: isize, block0: isize, block1: isize,
                                           comm: ::mpi::ffi::MPI_Comm, local_n0: *mut isize, local_0_start: *mut isize,
                                           local_n1: *mut isize, local_1_start: *mut isize) -> isize;
    fn fftw_mpi_local_size_many(rnk: c_int, n: *const isize, howmany: isize, block0: isize, comm: ::mpi::ffi::MPI_Comm,
                                local_n0: *mut isize, local_0_start: *mut isize) -> isize;
    fn fftw_mpi_plan_many_dft_r2c(rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize,
                                  input: *mut f64, output: *mut Complex64, comm: ::mpi::ffi::MPI_Comm, flags: c_uint) -> Plan;
    fn fftw_mpi_plan_many_dft_c2r(rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize,
                                  input: *mut Complex64, output: *mut f64, comm: ::mpi::ffi::MPI_Comm, flags: c_uint) -> Plan;
    fn fftw_mpi_plan_many_r2r(rnk: c_int, n: *const isize, howmany: isize, iblock: isize, oblock: isize,
                              input: *mut f64, output: *mut f64, comm: ::mpi::ffi::MPI_Comm, kind: *const c_int,
                              flags: c_uint) -> Plan;
    fn fftw_mpi_execute_dft_r2c(p: Plan, input: *mut f64, output: *mut Complex64);
    fn fftw_mpi_execute_dft_c2r(p: Plan, input: *mut Complex64, output: *mut f64);
    fn fftw_mpi_execute_r2r(p: Plan, input: *mut f64, output: *mut f64);
}

static MPI_INIT: Once = Once::new();

/// Takes the planner lock and initialises FFTW-MPI once (after FFTW's threads, as its manual
/// requires).
fn mpi_planner_lock() -> std::sync::MutexGuard<'static, ()> {
    let g = planner_lock();
    // SAFETY: MPI is initialised (every Comm checks it); called once, under the lock.
    MPI_INIT.call_once(|| unsafe { fftw_mpi_init() });
    g
}

/// A complex buffer seen as its interleaved doubles (scratch for packed planes, or a real grid
/// kept in a spectrum buffer while the spectrum is not in use).
pub(crate) fn as_real(v: &mut [Complex64]) -> &mut [f64] {
    // SAFETY: Complex64 is #[repr(C)] { re: f64, im: f64 }: 2·len doubles, same alignment.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut f64, 2 * v.len()) }
}

/// One rank's part of a slab decomposition: `n` planes from `start` (row-major axis 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slab {
    /// First plane held here.
    pub start: usize,
    /// Number of planes held here (may be 0).
    pub n: usize,
}

impl Slab {
    /// The planes `start..start + n`.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.start + self.n
    }
}

fn dims_isize(dims: &[usize]) -> Result<Vec<isize>> {
    dims.iter()
        .map(|&d| isize::try_from(d).map_err(|_| Error::Range(format!("FFT size {d} exceeds ptrdiff_t"))))
        .collect()
}

/// FFTW-MPI's default slab of `dims` (row-major) on this rank (`fftw_mpi_local_size_many`)
/// and the number of elements to allocate for it (`alloc_local`, in elements of the
/// transform's data type: complex for DFTs, real for r2r).
pub fn local_slab(dims: &[usize], comm: &Comm) -> Result<(Slab, usize)> {
    let n = dims_isize(dims)?;
    let _g = mpi_planner_lock();
    let (mut ln, mut ls) = (0isize, 0isize);
    // SAFETY: n has dims.len() entries; comm is valid.
    let alloc = unsafe { fftw_mpi_local_size_many(n.len() as c_int, n.as_ptr(), 1, DEFAULT_BLOCK, comm.raw(), &mut ln, &mut ls) };
    Ok((Slab { start: ls as usize, n: ln as usize }, alloc.max(1) as usize))
}

/// A distributed FFTW plan (double precision), destroyed on drop.
pub struct DistPlan {
    raw: Plan,
}

// SAFETY: an FFTW plan is immutable after planning; execution from one thread at a time (the
// owner holds &self and the plans' owners are not Sync).
unsafe impl Send for DistPlan {}

impl Drop for DistPlan {
    fn drop(&mut self) {
        let _g = planner_lock();
        // SAFETY: a plan made by FFTW, destroyed once.
        unsafe { fftw_sys::fftw_destroy_plan(self.raw as fftw_sys::fftw_plan) };
    }
}

fn finish(raw: Plan, what: &str, dims: &[usize]) -> Result<DistPlan> {
    if raw.is_null() {
        return Err(Error::Fft(format!("FFTW-MPI returned no plan for the {what} of size {dims:?} (row-major)")));
    }
    Ok(DistPlan { raw })
}

/// The doubled-grid transform pair of a distributed convolution: r2c with transposed output
/// and c2r with transposed input (FFTW manual §6.4.3: the spectrum stays transposed, which
/// saves both global transposes).
///
/// Real data: slabs of row-major axis 0 ([`R2cPair::real`]), rows padded to `2(n_last/2 + 1)`.
/// Spectrum (transposed): row-major axes 0 and 1 swapped, slabs of the original axis 1
/// ([`R2cPair::spectrum`]): `[n1_local][n0][n_last/2+1]` in 3D, `[(n1/2+1)_local][n0]` in 2D.
pub struct R2cPair {
    /// Forward (r2c, transposed out).
    pub fwd: DistPlan,
    /// Backward (c2r, transposed in), unnormalised.
    pub bwd: DistPlan,
    /// Planes of row-major axis 0 held in real space.
    pub real: Slab,
    /// Planes of row-major axis 1 (of the complex dims) held in the transposed spectrum.
    pub spectrum: Slab,
    /// Complex elements to allocate (real buffers: twice as many doubles).
    pub alloc: usize,
}

impl R2cPair {
    /// Plans both transforms of the real row-major grid `dims` (rank 2 or 3) with `flags`
    /// (FFTW planner flags) and `nthreads` threads per rank, planning on the given buffers
    /// (`real` ≥ `2·alloc` doubles, `spec` ≥ `alloc`; see [`R2cPair::sizes`]). Collective.
    pub fn new(dims: &[usize], comm: &Comm, flags: u32, nthreads: usize, real: &mut AlignedVec<f64>,
               spec: &mut AlignedVec<Complex64>) -> Result<R2cPair> {
        let (rs, ss, alloc) = Self::sizes(dims, comm)?;
        if real.len() < 2 * alloc || spec.len() < alloc {
            return Err(Error::InvalidArg("distributed r2c buffers are smaller than FFTW-MPI's local size".into()));
        }
        let n = dims_isize(dims)?;
        let _g = mpi_planner_lock();
        // SAFETY: buffers of the local sizes FFTW-MPI asked for; comm valid; lock held.
        let (f, b) = unsafe {
            fftw_sys::fftw_plan_with_nthreads(nthreads.max(1) as c_int);
            let f = fftw_mpi_plan_many_dft_r2c(n.len() as c_int, n.as_ptr(), 1, DEFAULT_BLOCK, DEFAULT_BLOCK,
                                               real.as_mut_ptr(), spec.as_mut_ptr(), comm.raw(), flags | TRANSPOSED_OUT);
            let b = fftw_mpi_plan_many_dft_c2r(n.len() as c_int, n.as_ptr(), 1, DEFAULT_BLOCK, DEFAULT_BLOCK,
                                               spec.as_mut_ptr(), real.as_mut_ptr(), comm.raw(), flags | TRANSPOSED_IN);
            (f, b)
        };
        let fwd = finish(f, "distributed r2c", dims);
        let bwd = finish(b, "distributed c2r", dims);
        // (the callers agree on the result: a plan FFTW-MPI made on one rank only is dropped)
        Ok(R2cPair { fwd: fwd?, bwd: bwd?, real: rs, spectrum: ss, alloc })
    }

    /// Local real slab, local transposed spectrum slab and `alloc_local` (complex elements) for
    /// the real row-major grid `dims` (`fftw_mpi_local_size_many_transposed` on the complex dims).
    pub fn sizes(dims: &[usize], comm: &Comm) -> Result<(Slab, Slab, usize)> {
        let mut c = dims.to_vec();
        let last = c.len() - 1;
        c[last] = c[last] / 2 + 1;
        let n = dims_isize(&c)?;
        let _g = mpi_planner_lock();
        let (mut l0, mut s0, mut l1, mut s1) = (0isize, 0isize, 0isize, 0isize);
        // SAFETY: as local_slab.
        let alloc = unsafe {
            fftw_mpi_local_size_many_transposed(n.len() as c_int, n.as_ptr(), 1, DEFAULT_BLOCK, DEFAULT_BLOCK,
                                                comm.raw(), &mut l0, &mut s0, &mut l1, &mut s1)
        };
        Ok((Slab { start: s0 as usize, n: l0 as usize }, Slab { start: s1 as usize, n: l1 as usize }, alloc.max(1) as usize))
    }

    /// Forward transform `real → spec` (the buffers planned on, or others of the same sizes
    /// and alignment).
    pub fn r2c(&self, real: &mut AlignedVec<f64>, spec: &mut AlignedVec<Complex64>) {
        // SAFETY: sizes as planned (checked at planning, same owner); collective.
        unsafe { fftw_mpi_execute_dft_r2c(self.fwd.raw, real.as_mut_ptr(), spec.as_mut_ptr()) }
    }
    /// Backward transform `spec → real` (unnormalised; destroys `spec`).
    pub fn c2r(&self, spec: &mut AlignedVec<Complex64>, real: &mut AlignedVec<f64>) {
        // SAFETY: as r2c.
        unsafe { fftw_mpi_execute_dft_c2r(self.bwd.raw, spec.as_mut_ptr(), real.as_mut_ptr()) }
    }
}

/// A one-shot distributed c2r of the row-major real grid `dims` with input **not** transposed
/// (slabs of axis 0 in both spaces), `FFTW_ESTIMATE`: the Vico kernel precomputation.
/// `spec` holds the local slab `[n0_local][n1…][n_last/2+1]`; the result is written to `real`
/// (rows padded to `2(n_last/2+1)`). Both buffers must hold the `alloc` of
/// [`local_slab`]`(complex dims)` (complex) and twice that (doubles). Collective.
pub fn c2r_once(dims: &[usize], comm: &Comm, nthreads: usize, spec: &mut AlignedVec<Complex64>,
                real: &mut AlignedVec<f64>) -> Result<()> {
    let n = dims_isize(dims)?;
    let plan = {
        let _g = mpi_planner_lock();
        // SAFETY: buffers sized by the caller from local_slab; lock held.
        let raw = unsafe {
            fftw_sys::fftw_plan_with_nthreads(nthreads.max(1) as c_int);
            fftw_mpi_plan_many_dft_c2r(n.len() as c_int, n.as_ptr(), 1, DEFAULT_BLOCK, DEFAULT_BLOCK,
                                       spec.as_mut_ptr(), real.as_mut_ptr(), comm.raw(), crate::fft::FFTW_ESTIMATE)
        };
        // agreed: the execution below is collective
        comm.agree(finish(raw, "distributed c2r", dims))?
    };
    // SAFETY: the plan's own buffers; collective.
    unsafe { fftw_mpi_execute_dft_c2r(plan.raw, spec.as_mut_ptr(), real.as_mut_ptr()) };
    Ok(())
}

/// A one-shot distributed in-place DCT-I (`REDFT00`) along every axis of the row-major real
/// grid `dims`, `FFTW_ESTIMATE`; `buf` holds the local slab (no padding) and at least the
/// `alloc` of [`local_slab`]`(dims)` doubles. Collective.
pub fn dct1_once(dims: &[usize], comm: &Comm, nthreads: usize, buf: &mut AlignedVec<f64>) -> Result<()> {
    let n = dims_isize(dims)?;
    let kinds = vec![REDFT00; dims.len()];
    let plan = {
        let _g = mpi_planner_lock();
        // SAFETY: as c2r_once.
        let raw = unsafe {
            fftw_sys::fftw_plan_with_nthreads(nthreads.max(1) as c_int);
            fftw_mpi_plan_many_r2r(n.len() as c_int, n.as_ptr(), 1, DEFAULT_BLOCK, DEFAULT_BLOCK, buf.as_mut_ptr(),
                                   buf.as_mut_ptr(), comm.raw(), kinds.as_ptr(), crate::fft::FFTW_ESTIMATE)
        };
        // agreed: the execution below is collective
        comm.agree(finish(raw, "distributed DCT-I", dims))?
    };
    // SAFETY: the plan's own buffer; collective.
    unsafe { fftw_mpi_execute_r2r(plan.raw, buf.as_mut_ptr(), buf.as_mut_ptr()) };
    Ok(())
}
