//! The NUFFT core behind `farfield.nufft.Plan`: FINUFFT 2.5's guru interface (makeplan →
//! setpts → execute / execute_adjoint) on `finufft::plan::CompatPlan`, the plan of
//! farfield's FINUFFT drop-in library, so that options, status codes, empty problems, the
//! adjoint and `spreadinterponly` behave as FINUFFT's. `farfield/nufft.py` does FINUFFT's
//! Python-side checks and axis order and calls this with arrays in the C library's axis order
//! (x fastest); this layer checks again every length it hands to Rust, so no call from Python
//! can read or write out of bounds.

use crate::{array, opt, out_array, raise, SendCell};
use farfield::Real;
use finufft::ier::Failure;
use finufft::opts::{default_opts, finufft_opts};
use finufft::plan::CompatPlan;
use num_complex::Complex;
use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{Element, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The three mode counts of makeplan from `n_modes` (C order, x first): the first `dim` of
/// them for types 1 and 2 (too few → `ValueError`), ones elsewhere and for type 3 or an
/// invalid dimension (the plan reports those).
pub(crate) fn modes3(ty: i32, dim: i32, n_modes: &[i64]) -> PyResult<[i64; 3]> {
    let mut modes = [1i64; 3];
    if (1..=3).contains(&dim) && ty != 3 {
        if n_modes.len() < dim as usize {
            return Err(PyValueError::new_err(format!("argument `n_modes` has {} entries, expected dim = {dim}", n_modes.len())));
        }
        modes[..dim as usize].copy_from_slice(&n_modes[..dim as usize]);
    }
    Ok(modes)
}

/// A plan of either precision.
enum Plan {
    F64(CompatPlan<f64>),
    F32(CompatPlan<f32>),
}

/// A FINUFFT or cuFINUFFT failure (both drop-ins share the status codes) → the Python
/// exception `farfield._errors._finufft_error(ier, message)` (a `farfield.NufftError`, which
/// is a `RuntimeError` as their Python packages raise, with FINUFFT's text for the code
/// followed by farfield's detail).
pub(crate) fn fail(f: Failure) -> PyErr {
    Python::with_gil(|py| raise(py, "_finufft_error", (f.ier, f.message)))
}

/// The FINUFFT options from the keyword arguments (already filtered to known names by
/// `farfield/nufft.py`; `showwarn` defaults to 0 there: warnings become Python warnings).
fn read_opts(d: Option<&Bound<'_, PyDict>>) -> PyResult<finufft_opts> {
    let mut o = default_opts();
    macro_rules! int {
        ($($f:ident),*) => {$( if let Some(v) = opt::<i32>(d, stringify!($f))? { o.$f = v; } )*};
    }
    int!(modeord, spreadinterponly, debug, spread_debug, showwarn, nthreads, fftw, spread_sort, spread_kerevalmeth,
         spread_kerpad, spread_thread, maxbatchsize, spread_nthr_atomic, spread_max_sp_size, spread_kerformula);
    if let Some(v) = opt::<f64>(d, "upsampfac")? {
        o.upsampfac = v;
    }
    Ok(o)
}

/// The native NUFFT plan (FINUFFT guru semantics; use `farfield.nufft.Plan`, which wraps it).
/// Arrays are in the C library's order: coordinates `x, y, z` (x the fastest mode axis), modes
/// `f[k1 + N1*(k2 + N2*k3)]`, vectors stacked.
#[pyclass(module = "farfield._farfield", name = "_NufftCore")]
pub struct NufftCore {
    plan: SendCell<Plan>,
    ty: i32,
    dim: usize,
    ntrans: usize,
    /// Mode counts in Python's axis order (the C order reversed), types 1 and 2; empty for
    /// type 3.
    modes_py: Vec<usize>,
    /// Points and frequencies set (M, nk), `None` before setpts.
    counts: Option<(usize, usize)>,
    /// The coordinate arrays given at setpts: FINUFFT (and the adjoint's plan) read them
    /// again at execute, so they are kept alive here.
    keep: Vec<PyObject>,
    /// 0, or 1 (FINUFFT_WARN_EPS_TOO_SMALL) from the last makeplan/setpts.
    #[pyo3(get)]
    ier: i32,
}

#[pymethods]
impl NufftCore {
    /// makeplan: `ty` 1–3, `dim` 1–3, `n_modes` (types 1, 2) in C order (x first), `iflag`,
    /// `ntrans`, `eps`, `single` (complex64), `opts` (FINUFFT option names).
    #[new]
    #[pyo3(signature = (ty, dim, n_modes, iflag, ntrans, eps, single, opts=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, ty: i32, dim: i32, n_modes: Vec<i64>, iflag: i32, ntrans: i32, eps: f64, single: bool,
           opts: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let o = SendCell(read_opts(opts)?);
        let modes = modes3(ty, dim, &n_modes)?;
        let made = py.allow_threads(move || {
            let o = o;
            // SAFETY: `modes` holds 3 ≥ dim values.
            unsafe {
                if single {
                    CompatPlan::<f32>::new(ty, dim, modes.as_ptr(), iflag, ntrans, eps, &o.0).map(|(p, i)| (SendCell(Plan::F32(p)), i))
                } else {
                    CompatPlan::<f64>::new(ty, dim, modes.as_ptr(), iflag, ntrans, eps, &o.0).map(|(p, i)| (SendCell(Plan::F64(p)), i))
                }
            }
        });
        let (plan, ier) = made.map_err(fail)?;
        let modes_py = if ty == 3 { Vec::new() } else { modes[..dim as usize].iter().rev().map(|&n| n.max(0) as usize).collect() };
        Ok(NufftCore { plan, ty, dim: dim as usize, ntrans: ntrans as usize, modes_py, counts: None, keep: Vec::new(), ier })
    }

    /// setpts with 1-D arrays of the plan's real dtype, `x` (and `y`, `z` by dim; `s, t, u` for
    /// type 3), in the C library's axis order. Returns 0 or the tolerance warning 1.
    #[pyo3(signature = (x, y=None, z=None, s=None, t=None, u=None))]
    #[allow(clippy::too_many_arguments)]
    fn setpts(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: Option<&Bound<'_, PyAny>>, z: Option<&Bound<'_, PyAny>>,
              s: Option<&Bound<'_, PyAny>>, t: Option<&Bound<'_, PyAny>>, u: Option<&Bound<'_, PyAny>>) -> PyResult<i32> {
        if self.single() {
            self.setpts_t::<f32>(py, [Some(x), y, z], [s, t, u])
        } else {
            self.setpts_t::<f64>(py, [Some(x), y, z], [s, t, u])
        }
    }

    /// execute (`adjoint` false) or execute_adjoint: `c` (ntrans·M values) and `f` (ntrans·N,
    /// type 3 ntrans·nk) arrays of the plan's complex dtype; `out_is_c` says which one is
    /// written (forward type 2 and adjoint types 1, 3 write `c`).
    fn execute(&mut self, py: Python<'_>, c: &Bound<'_, PyAny>, f: &Bound<'_, PyAny>, adjoint: bool, out_is_c: bool) -> PyResult<i32> {
        if self.single() {
            self.execute_t::<f32>(py, c, f, adjoint, out_is_c)
        } else {
            self.execute_t::<f64>(py, c, f, adjoint, out_is_c)
        }
    }

    /// The common call in one step: `data` and `out` (or `None`: a new array) NumPy arrays of
    /// the plan's dtype, C-contiguous (`out` writeable), of exactly the canonical shapes — `(M,)`
    /// or `(n_trans, M)` for values at the points, the modes `(N1, …)` or `(n_trans, N1, …)`
    /// in Python's axis order, `(N,)` or `(n_trans, N)` at type 3's frequencies. Returns the
    /// output, or `None` when any of that does not hold (or before setpts): then
    /// `farfield/nufft.py` takes its general path (FINUFFT's conversions, checks and messages).
    #[pyo3(signature = (data, out, adjoint))]
    fn execute_fast(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>, out: Option<&Bound<'_, PyAny>>, adjoint: bool) -> PyResult<Option<PyObject>> {
        if self.single() {
            self.execute_fast_t::<f32>(py, data, out, adjoint)
        } else {
            self.execute_fast_t::<f64>(py, data, out, adjoint)
        }
    }

    /// Benchmark hook (benches/python_overhead.py): runs `execute` `reps` times in a Rust loop
    /// with the arrays borrowed once, and returns the wall time of each call in seconds — the
    /// cost of the Rust API call itself, against which a Python call is compared.
    fn _time_execute(&mut self, py: Python<'_>, c: &Bound<'_, PyAny>, f: &Bound<'_, PyAny>, adjoint: bool, out_is_c: bool, reps: usize)
                     -> PyResult<Vec<f64>> {
        let mut times = vec![0.0; reps.max(1)];
        if self.single() {
            self.execute_impl::<f32>(py, c, f, adjoint, out_is_c, &mut times)?;
        } else {
            self.execute_impl::<f64>(py, c, f, adjoint, out_is_c, &mut times)?;
        }
        Ok(times)
    }
}

/// Access to the plan of precision `T`.
trait Pick: Real + Element {
    fn pick(p: &mut Plan) -> &mut CompatPlan<Self>;
}
impl Pick for f64 {
    fn pick(p: &mut Plan) -> &mut CompatPlan<f64> {
        match p {
            Plan::F64(q) => q,
            Plan::F32(_) => unreachable!("dispatched on the plan's precision"),
        }
    }
}
impl Pick for f32 {
    fn pick(p: &mut Plan) -> &mut CompatPlan<f32> {
        match p {
            Plan::F32(q) => q,
            Plan::F64(_) => unreachable!("dispatched on the plan's precision"),
        }
    }
}

impl NufftCore {
    /// Whether the plan is single precision.
    fn single(&self) -> bool {
        matches!(self.plan.0, Plan::F32(_))
    }

    fn setpts_t<T: Pick>(&mut self, py: Python<'_>, xs: [Option<&Bound<'_, PyAny>>; 3], ss: [Option<&Bound<'_, PyAny>>; 3]) -> PyResult<i32>
    where Complex<T>: Element {
        let names = [["x", "y", "z"], ["s", "t", "u"]];
        let mut keep = Vec::new();
        let mut ptrs = [[0usize; 3]; 2];
        let mut lens = [0usize; 2];
        for (g, group) in [xs, ss].iter().enumerate() {
            if g == 1 && self.ty != 3 {
                break;
            }
            for d in 0..self.dim {
                let name = names[g][d];
                let obj = group[d].ok_or_else(|| PyValueError::new_err(format!("argument `{name}` is required for a {}D plan", self.dim)))?;
                let a = array::<T>(obj, name, Some(1))?;
                let n = a.len();
                if d == 0 {
                    lens[g] = n;
                } else if n != lens[g] {
                    return Err(PyValueError::new_err(format!("argument `{name}` has {n} values, `{}` has {}", names[g][0], lens[g])));
                }
                ptrs[g][d] = a.data() as usize;
                keep.push(a.into_any().unbind());
            }
        }
        let (m, nk) = (lens[0], lens[1]);
        let plan = &mut self.plan;
        let r = py.allow_threads(|| {
            let p = T::pick(plan.get());
            let q = |a: usize| a as *const T;
            // SAFETY: each used pointer is the data of a C-contiguous array of m (nk) values of
            // T, kept alive in `self.keep` until the next setpts or the plan's end.
            unsafe { p.setpts(m as i64, q(ptrs[0][0]), q(ptrs[0][1]), q(ptrs[0][2]), nk as i64, q(ptrs[1][0]), q(ptrs[1][1]), q(ptrs[1][2])) }
        });
        // the previous arrays may still be referenced by the plan after a failed setpts
        // (FINUFFT keeps the old points): keep both until the next success
        match r {
            Ok(ier) => {
                self.keep = keep;
                self.counts = Some((m, nk));
                self.ier = ier;
                Ok(ier)
            }
            Err(e) => {
                self.keep.extend(keep);
                Err(fail(e))
            }
        }
    }

    /// The canonical shape of the values at the points (`at_points`) or of the modes / type-3
    /// frequency values.
    fn canonical_shape(&self, at_points: bool, m: usize, nk: usize) -> Vec<usize> {
        let mut s = Vec::with_capacity(4);
        if self.ntrans != 1 {
            s.push(self.ntrans);
        }
        match (at_points, self.ty) {
            (true, _) => s.push(m),
            (false, 3) => s.push(nk),
            (false, _) => s.extend_from_slice(&self.modes_py),
        }
        s
    }

    fn execute_fast_t<T: Pick>(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>, out: Option<&Bound<'_, PyAny>>, adjoint: bool)
                               -> PyResult<Option<PyObject>>
    where Complex<T>: Element {
        let Some((m, nk)) = self.counts else { return Ok(None) };
        // forward type 2 and adjoint types 1, 3 read the modes (or type-3 values) and write `c`
        let out_is_c = (self.ty == 2) != adjoint;
        let in_shape = self.canonical_shape(!out_is_c, m, nk);
        let out_shape = self.canonical_shape(out_is_c, m, nk);
        // the typed downcast checks the dtype
        let fits = |a: &Bound<'_, PyArrayDyn<Complex<T>>>, shape: &[usize]| a.is_c_contiguous() && a.shape() == shape;
        let Ok(inp) = data.downcast::<PyArrayDyn<Complex<T>>>() else { return Ok(None) };
        if !fits(inp, &in_shape) {
            return Ok(None);
        }
        let outp = match out {
            Some(o) => match o.downcast::<PyArrayDyn<Complex<T>>>() {
                // SAFETY: `a` is a live NumPy array; its flags are read only.
                Ok(a) if fits(a, &out_shape) && unsafe { (*a.as_array_ptr()).flags } & NPY_ARRAY_WRITEABLE != 0 => a.clone(),
                _ => return Ok(None),
            },
            None => PyArrayDyn::<Complex<T>>::zeros(py, out_shape, false),
        };
        let (c, f) = if out_is_c { (&outp, inp) } else { (inp, &outp) };
        self.run_checked::<T>(py, c, f, adjoint, out_is_c, &mut [])?;
        Ok(Some(outp.into_any().unbind()))
    }

    fn execute_t<T: Pick>(&mut self, py: Python<'_>, c: &Bound<'_, PyAny>, f: &Bound<'_, PyAny>, adjoint: bool, out_is_c: bool) -> PyResult<i32>
    where Complex<T>: Element {
        self.execute_impl::<T>(py, c, f, adjoint, out_is_c, &mut [])
    }

    /// execute once (`times` empty) or once per entry of `times`, storing each call's seconds.
    fn execute_impl<T: Pick>(&mut self, py: Python<'_>, c: &Bound<'_, PyAny>, f: &Bound<'_, PyAny>, adjoint: bool, out_is_c: bool,
                             times: &mut [f64]) -> PyResult<i32>
    where Complex<T>: Element {
        let Some((m, nk)) = self.counts else {
            return Err(raise(py, "_finufft_error", (21, "execute called before setpts")));
        };
        let nf = if self.ty == 3 { nk } else { self.modes_py.iter().product() };
        let (want_c, want_f) = (self.ntrans * m, self.ntrans * nf);
        let ca: Bound<'_, PyArrayDyn<Complex<T>>> = if out_is_c { out_array(c, "out")? } else { array(c, "data", None)? };
        let fa: Bound<'_, PyArrayDyn<Complex<T>>> = if out_is_c { array(f, "data", None)? } else { out_array(f, "out")? };
        if ca.len() != want_c || fa.len() != want_f {
            return Err(PyValueError::new_err(format!(
                "array sizes c = {}, f = {} do not match n_trans·M = {want_c}, n_trans·N = {want_f}", ca.len(), fa.len())));
        }
        self.run_checked(py, &ca, &fa, adjoint, out_is_c, times)
    }

    /// Borrows `ca` and `fa` (C-contiguous, of the plan's sizes: checked by the caller) and
    /// executes, as [`Self::execute_impl`].
    fn run_checked<T: Pick>(&mut self, py: Python<'_>, ca: &Bound<'_, PyArrayDyn<Complex<T>>>, fa: &Bound<'_, PyArrayDyn<Complex<T>>>, adjoint: bool,
                            out_is_c: bool, times: &mut [f64]) -> PyResult<i32>
    where Complex<T>: Element {
        // borrow flags: the output exclusively, the input shared (NumPy's may-share check
        // catches an output that is a view of the input); held until the call returns
        let (out, inp) = if out_is_c { (ca, fa) } else { (fa, ca) };
        let mut w = out.try_readwrite().map_err(|e| PyValueError::new_err(format!("argument `out`: {e}")))?;
        let r = inp.try_readonly().map_err(|e| PyValueError::new_err(format!("argument `data`: {e}")))?;
        let (op, ip) = (w.as_array_mut().as_mut_ptr() as usize, r.as_array().as_ptr() as usize);
        let (cp, fp) = if out_is_c { (op, ip) } else { (ip, op) };
        let plan = &mut self.plan;
        let res = py.allow_threads(|| {
            let p = T::pick(plan.get());
            // SAFETY: c and f are C-contiguous arrays of exactly ntrans·M and ntrans·N values,
            // borrowed (output exclusively) for the call; the input is only read.
            let run = |p: &mut CompatPlan<T>| unsafe { p.execute(cp as *mut Complex<T>, fp as *mut Complex<T>, adjoint) };
            if times.is_empty() {
                return run(p);
            }
            let mut ier = 0;
            for t in times.iter_mut() {
                let t0 = std::time::Instant::now();
                ier = run(p)?;
                *t = t0.elapsed().as_secs_f64();
            }
            Ok(ier)
        });
        drop((w, r));
        res.map_err(fail)
    }
}
