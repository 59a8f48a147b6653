//! `farfield.fmm.Plan`'s native part: farfield's `FmmPlan` (the Coulomb FMM, open or periodic
//! boundaries, CPU or CUDA) on NumPy arrays, with optional separate targets, and for CUDA
//! plans on device arrays (`__cuda_array_interface__`).

use crate::device::{device_array, disjoint, particles, wait_for, DeviceArray};
use crate::{array, backend_choice, count, pair_list, OrPy, SendCell};
use farfield::fmm::{Boundary, FmmOpts, TreeKind};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The native FMM plan (use `farfield.fmm.Plan` / `farfield.fmm.evaluate`, which document the
/// arguments).
#[pyclass(module = "farfield._farfield", name = "_FmmCore")]
pub struct FmmPlan {
    plan: SendCell<farfield::FmmPlan>,
}

#[pymethods]
impl FmmPlan {
    #[new]
    #[pyo3(signature = (tol=1e-6, periodic=None, order=0, depth=None, tree="auto", nthreads=0, backend="cpu", debug=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, tol: f64, periodic: Option<&Bound<'_, PyAny>>, order: i64, depth: Option<i64>, tree: &str, nthreads: i64,
           backend: &str, debug: i32) -> PyResult<Self> {
        let (order, nthreads) = (count(order, "order")?, count(nthreads, "nthreads")?);
        let depth = depth.map(|d| count(d, "depth")).transpose()?;
        let boundary = match periodic {
            None => Boundary::Open,
            Some(p) => {
                if let Ok(side) = p.extract::<f64>() {
                    Boundary::Periodic { side }
                } else {
                    let s: Vec<f64> = p.extract().map_err(|_| {
                        PyTypeError::new_err("argument `periodic` must be None, a cube side or three box sides")
                    })?;
                    let sides: [f64; 3] = s.try_into().map_err(|s: Vec<f64>| {
                        PyValueError::new_err(format!("argument `periodic` has {} sides, expected 3", s.len()))
                    })?;
                    Boundary::PeriodicBox { sides }
                }
            }
        };
        let tree = match tree.to_ascii_lowercase().as_str() {
            "auto" => TreeKind::Auto,
            "uniform" => TreeKind::Uniform,
            "adaptive" => TreeKind::Adaptive { max_leaf: 0 },
            t => return Err(PyValueError::new_err(format!("argument `tree` = {t:?}: expected \"auto\", \"uniform\" or \"adaptive\""))),
        };
        let opts = FmmOpts { nthreads, debug, order, depth, tree, backend: backend_choice(backend)?, gpu_stream: None };
        let plan = py.allow_threads(|| farfield::FmmPlan::new(boundary, tol, &opts).map(SendCell)).py_err()?;
        Ok(FmmPlan { plan })
    }

    /// Evaluates; `sources` (N, 3), `charges` (N,), `targets` (T, 3) or None. Returns a dict:
    /// `potential` ((T,) or (N,)), `field` ((T, 3) or (N, 3), or None), `energy` (of the
    /// sources).
    #[pyo3(signature = (sources, charges, targets=None, field=true))]
    fn evaluate<'py>(&mut self, py: Python<'py>, sources: &Bound<'py, PyAny>, charges: &Bound<'py, PyAny>, targets: Option<&Bound<'py, PyAny>>,
                     field: bool) -> PyResult<Bound<'py, PyDict>> {
        let x = array::<f64>(sources, "sources", Some(2))?;
        let q = array::<f64>(charges, "charges", Some(1))?;
        let n = q.len();
        if x.shape() != [n, 3] {
            return Err(PyValueError::new_err(format!("argument `sources` has shape {:?}, expected (N, 3) with N = {n} charges", x.shape())));
        }
        let t = targets.map(|t| array::<f64>(t, "targets", Some(2))).transpose()?;
        let nt = match &t {
            Some(t) if t.shape()[1] != 3 => {
                return Err(PyValueError::new_err(format!("argument `targets` has shape {:?}, expected (T, 3)", t.shape())))
            }
            Some(t) => t.shape()[0],
            None => 0,
        };
        let (xr, qr) = (x.readonly(), q.readonly());
        let (xs, qs) = (xr.as_slice()?, qr.as_slice()?);
        let tr = t.as_ref().map(|t| t.readonly());
        let ts = tr.as_ref().map(|t| t.as_slice()).transpose()?;
        let nout = if ts.is_some() { nt } else { n };
        let phi = PyArray1::<f64>::zeros(py, nout, false);
        let fld = field.then(|| PyArray2::<f64>::zeros(py, [nout, 3], false));
        let mut phw = phi.readwrite();
        let mut fdw = fld.as_ref().map(|a| a.readwrite());
        let php = phw.as_slice_mut()?;
        let fdp = fdw.as_mut().map(|w| w.as_slice_mut()).transpose()?;
        let plan = &mut self.plan;
        let energy = py
            .allow_threads(|| -> farfield::Result<f64> {
                match ts {
                    None => plan.get().execute(xs, qs, Some(php), fdp),
                    Some(ts) => {
                        // the targets join as particles of charge 0: they feel the sources and
                        // add nothing; a target at a source's position does not see that source
                        let mut all = farfield::error::try_vec::<f64>(3 * (n + nt), "FMM particles")?;
                        all.extend_from_slice(xs);
                        all.extend_from_slice(ts);
                        let mut qq = farfield::error::try_vec::<f64>(n + nt, "FMM charges")?;
                        qq.extend_from_slice(qs);
                        qq.resize(n + nt, 0.0);
                        let mut p = farfield::error::try_filled_vec(n + nt, 0.0, "FMM potentials")?;
                        let mut f = if fdp.is_some() { farfield::error::try_filled_vec(3 * (n + nt), 0.0, "FMM fields")? } else { Vec::new() };
                        let u = plan.get().execute(&all, &qq, Some(&mut p), fdp.is_some().then_some(&mut f[..]))?;
                        php.copy_from_slice(&p[n..]);
                        if let Some(fd) = fdp {
                            fd.copy_from_slice(&f[3 * n..]);
                        }
                        Ok(u)
                    }
                }
            })
            .py_err()?;
        drop((phw, fdw));
        let d = PyDict::new(py);
        d.set_item("potential", phi)?;
        d.set_item("field", fld)?;
        d.set_item("energy", energy)?;
        Ok(d)
    }

    /// `evaluate` on **device** arrays of a CUDA plan (`__cuda_array_interface__`, float64,
    /// C order): `sources` (N, 3), `charges` (N,), and the outputs `potential` (N,) and
    /// `field` ((N, 3) or None) made by `farfield/fmm.py` in the caller's array library.
    /// Returns the energy once the outputs are written (the plan's stream is synchronised).
    #[pyo3(signature = (sources, charges, potential, field=None))]
    fn evaluate_device(&mut self, py: Python<'_>, sources: &Bound<'_, PyAny>, charges: &Bound<'_, PyAny>, potential: &Bound<'_, PyAny>,
                       field: Option<&Bound<'_, PyAny>>) -> PyResult<f64> {
        let q = device_array(charges, "charges", "<f8", false)?;
        let n = q.len;
        let x = particles(sources, "sources", 3, n, false)?;
        let p = particles(potential, "potential", 1, n, true)?;
        let f = field.map(|o| particles(o, "field", 3, n, true)).transpose()?;
        let mut outs = vec![("potential", p)];
        outs.extend(f.map(|f| ("field", f)));
        disjoint(&outs, &[("sources", x), ("charges", q)])?;
        let all: Vec<DeviceArray> = [x, q, p].into_iter().chain(f).collect();
        wait_for(py, 0, &all).py_err()?;
        let plan = &mut self.plan;
        // SAFETY: every address is a C-contiguous float64 device array of the count the plan
        // reads or writes (checked above from its interface); outputs are distinct arrays.
        py.allow_threads(|| unsafe { plan.get().execute_device(n, x.ptr, q.ptr, p.ptr, f.map_or(0, |f| f.ptr)) }).py_err()
    }

    /// Replaces the excluded / scaled pairs: `pairs` (K, 2) int64 indices, `scales` (K,) or None.
    #[pyo3(signature = (pairs, scales=None))]
    fn set_exclusions(&mut self, py: Python<'_>, pairs: &Bound<'_, PyAny>, scales: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let (pv, sv) = pair_list(pairs, scales)?;
        let plan = &mut self.plan;
        py.allow_threads(|| plan.get().set_exclusions(&pv, sv.as_deref())).py_err()
    }

    /// Expansion order in use.
    #[getter]
    fn order(&self) -> usize {
        self.plan.0.order()
    }

    /// Statistics of the last evaluation (dict: order, depth, nleaves, npoints, nthreads,
    /// tol_clamped).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.plan.0.stats();
        let d = PyDict::new(py);
        d.set_item("order", s.order)?;
        d.set_item("depth", s.depth)?;
        d.set_item("nleaves", s.nleaves)?;
        d.set_item("npoints", s.npoints)?;
        d.set_item("nthreads", s.nthreads)?;
        d.set_item("tol_clamped", s.tol_clamped)?;
        Ok(d)
    }
}
