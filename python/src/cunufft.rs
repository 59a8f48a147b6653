//! The CUDA NUFFT behind `farfield.cufinufft.Plan`: cuFINUFFT 2.5's guru interface (makeplan →
//! setpts → execute) on `cufinufft::plan::CuPlan`, the plan of farfield's cuFINUFFT drop-in
//! library, on device arrays (`__cuda_array_interface__`: CuPy, PyTorch, Numba), so that
//! options, status codes and the stream behave as cuFINUFFT's. `farfield/cufinufft.py` does
//! the Python-side shapes and axis order; this layer reads each array's interface itself and
//! checks its dtype, layout and count against the plan, so no call from Python hands the
//! library an address with fewer values than it reads or writes.
//!
//! Streams: the plan runs on `opts.gpu_stream` (0: the default stream). An argument whose
//! interface names another stream (interface version 3) is waited for first (the stream is
//! synchronised), as the interface asks of a consumer; outputs are written on the plan's
//! stream and, as with cuFINUFFT, `execute` returns once the work is queued.

use crate::device::{device_array, disjoint, wait_for};
use crate::nufft::{fail, modes3};
use crate::{opt, SendCell};
use cufinufft::ier::Failure;
use cufinufft::opts::{cufinufft_opts, default_opts};
use cufinufft::plan::CuPlan;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A plan of either precision.
enum Plan {
    F64(CuPlan<f64>),
    F32(CuPlan<f32>),
}

/// The cuFINUFFT options from the keyword arguments (filtered to cuFINUFFT's names by
/// `farfield/cufinufft.py`; `gpu_stream` as an integer address).
fn read_opts(d: Option<&Bound<'_, PyDict>>) -> PyResult<cufinufft_opts> {
    let mut o = default_opts();
    macro_rules! int {
        ($($f:ident),*) => {$( if let Some(v) = opt::<i32>(d, stringify!($f))? { o.$f = v; } )*};
    }
    int!(gpu_method, gpu_sort, gpu_binsizex, gpu_binsizey, gpu_binsizez, gpu_obinsizex, gpu_obinsizey, gpu_obinsizez,
         gpu_maxsubprobsize, gpu_kerevalmeth, gpu_spreadinterponly, gpu_maxbatchsize, gpu_device_id, modeord, gpu_np, debug);
    if let Some(v) = opt::<f64>(d, "upsampfac")? {
        o.upsampfac = v;
    }
    if let Some(s) = opt::<u64>(d, "gpu_stream")? {
        o.gpu_stream = s as usize as *mut std::ffi::c_void;
    }
    Ok(o)
}

/// The native CUDA NUFFT plan (cuFINUFFT guru semantics; use `farfield.cufinufft.Plan`, which
/// wraps it). Arrays are in the C library's order: coordinates `x, y, z` (x the fastest mode
/// axis), modes `f[k1 + N1*(k2 + N2*k3)]`, vectors stacked.
#[pyclass(module = "farfield._farfield", name = "_CuNufftCore")]
pub struct CuNufftCore {
    plan: SendCell<Plan>,
    ty: i32,
    dim: usize,
    ntrans: usize,
    /// The plan's stream (0: the default stream).
    stream: u64,
    /// Points and frequencies set (M, nk), `None` before setpts.
    counts: Option<(usize, usize)>,
    /// Number of modes N1·N2·N3 (types 1, 2).
    n_modes: usize,
    /// 0, or 1 (FINUFFT_WARN_EPS_TOO_SMALL) from makeplan.
    #[pyo3(get)]
    ier: i32,
}

#[pymethods]
impl CuNufftCore {
    /// makeplan: `ty` 1–3, `dim` 1–3, `n_modes` (types 1, 2) in C order (x first), `iflag`,
    /// `ntrans`, `eps`, `single` (complex64), `opts` (cuFINUFFT option names).
    #[new]
    #[pyo3(signature = (ty, dim, n_modes, iflag, ntrans, eps, single, opts=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, ty: i32, dim: i32, n_modes: Vec<i64>, iflag: i32, ntrans: i32, eps: f64, single: bool,
           opts: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let o = SendCell(read_opts(opts)?);
        let stream = o.0.gpu_stream as usize as u64;
        let modes = modes3(ty, dim, &n_modes)?;
        let made = py.allow_threads(move || {
            let o = o;
            // SAFETY: `modes` holds 3 ≥ dim values; the stream's validity is the caller's
            // promise, as in cuFINUFFT.
            unsafe {
                if single {
                    CuPlan::<f32>::new(ty, dim, modes.as_ptr(), iflag, ntrans, eps, &o.0).map(|(p, i)| (SendCell(Plan::F32(p)), i))
                } else {
                    CuPlan::<f64>::new(ty, dim, modes.as_ptr(), iflag, ntrans, eps, &o.0).map(|(p, i)| (SendCell(Plan::F64(p)), i))
                }
            }
        });
        let (plan, ier) = made.map_err(fail)?;
        let n_modes = if ty == 3 { 0 } else { modes.iter().map(|&n| n.max(1) as usize).product() };
        Ok(CuNufftCore { plan, ty, dim: dim as usize, ntrans: ntrans as usize, stream, counts: None, n_modes, ier })
    }

    /// setpts with 1-D device arrays of the plan's real dtype, `x` (and `y`, `z` by dim;
    /// `s, t, u` for type 3), in the C library's axis order. The values are copied on the
    /// device: the arrays may be freed after the call.
    #[pyo3(signature = (x, y=None, z=None, s=None, t=None, u=None))]
    #[allow(clippy::too_many_arguments)]
    fn setpts(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: Option<&Bound<'_, PyAny>>, z: Option<&Bound<'_, PyAny>>,
              s: Option<&Bound<'_, PyAny>>, t: Option<&Bound<'_, PyAny>>, u: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let real = if self.single() { "<f4" } else { "<f8" };
        let names = [["x", "y", "z"], ["s", "t", "u"]];
        let mut ptrs = [[0u64; 3]; 2];
        let mut lens = [0usize; 2];
        let mut arrays = Vec::new();
        for (g, group) in [[Some(x), y, z], [s, t, u]].iter().enumerate() {
            if g == 1 && self.ty != 3 {
                break;
            }
            for d in 0..self.dim {
                let name = names[g][d];
                let obj = group[d].ok_or_else(|| PyValueError::new_err(format!("argument `{name}` is required for a {}D plan", self.dim)))?;
                let a = device_array(obj, name, real, false)?;
                if d == 0 {
                    lens[g] = a.len;
                } else if a.len != lens[g] {
                    return Err(PyValueError::new_err(format!("argument `{name}` has {} values, `{}` has {}", a.len, names[g][0], lens[g])));
                }
                ptrs[g][d] = a.ptr;
                arrays.push(a);
            }
        }
        let (m, nk) = (lens[0], lens[1]);
        wait_for(py, self.stream, &arrays).map_err(|e| fail(cufinufft::plan::failure(e)))?;
        let plan = &mut self.plan;
        let (p, q) = (ptrs[0], ptrs[1]);
        py.allow_threads(|| {
            // SAFETY: each used address is a C-contiguous device array of m (nk) values of the
            // plan's precision (checked above from its interface), copied during the call.
            unsafe {
                match plan.get() {
                    Plan::F64(c) => c.setpts(m as i64, p[0], p[1], p[2], nk as i64, q[0], q[1], q[2]),
                    Plan::F32(c) => c.setpts(m as i64, p[0], p[1], p[2], nk as i64, q[0], q[1], q[2]),
                }
            }
        }).map_err(fail)?;
        self.counts = Some((m, nk));
        Ok(())
    }

    /// execute: `c` (ntrans·M values at the points) and `f` (ntrans·N modes, type 3 ntrans·nk
    /// values at the frequencies) device arrays of the plan's complex dtype; types 1 and 3
    /// read `c` and write `f`, type 2 reads `f` and writes `c`.
    fn execute(&mut self, py: Python<'_>, c: &Bound<'_, PyAny>, f: &Bound<'_, PyAny>) -> PyResult<()> {
        let Some((m, nk)) = self.counts else {
            return Err(fail(Failure::new(cufinufft::ier::FINUFFT_ERR_INVALID_ARGUMENT, "execute before setpts")));
        };
        let cplx = if self.single() { "<c8" } else { "<c16" };
        let out_is_c = self.ty == 2;
        let ca = device_array(c, "c", cplx, out_is_c)?;
        let fa = device_array(f, "f", cplx, !out_is_c)?;
        let nf = if self.ty == 3 { nk } else { self.n_modes };
        for (a, name, want) in [(&ca, "c", m), (&fa, "f", nf)] {
            if a.len != self.ntrans * want {
                return Err(PyValueError::new_err(format!(
                    "argument `{name}` has {} values, expected n_trans·{} = {}·{want} = {}",
                    a.len, if name == "c" { "M" } else if self.ty == 3 { "N" } else { "N1·N2·N3" }, self.ntrans, self.ntrans * want)));
            }
        }
        let (out, inp) = if out_is_c { (("c", ca), ("f", fa)) } else { (("f", fa), ("c", ca)) };
        disjoint(&[out], &[inp])?;
        wait_for(py, self.stream, &[ca, fa]).map_err(|e| fail(cufinufft::plan::failure(e)))?;
        let plan = &mut self.plan;
        py.allow_threads(|| {
            // SAFETY: c and f are C-contiguous device arrays of exactly ntrans·M and ntrans·N
            // values of the plan's complex dtype (checked above), the output writeable.
            unsafe {
                match plan.get() {
                    Plan::F64(p) => p.execute(ca.ptr, fa.ptr),
                    Plan::F32(p) => p.execute(ca.ptr, fa.ptr),
                }
            }
        }).map_err(fail)?;
        Ok(())
    }
}

impl CuNufftCore {
    fn single(&self) -> bool {
        matches!(self.plan.0, Plan::F32(_))
    }
}
