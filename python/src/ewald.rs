//! `farfield.ewald.Plan`'s native part: farfield's `EwaldPlan` (spectral Ewald, SPME, the
//! classic Ewald sum) on NumPy arrays, and for CUDA plans on device arrays
//! (`__cuda_array_interface__`).

use crate::device::{device_array, disjoint, particles, wait_for, DeviceArray};
use crate::{array, backend_choice, count, pair_list, OrPy, SendCell};
use farfield::ewald::{EwaldOpts, Method, Overrides, Terms};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The cell from a (3, 3) array of lattice vectors (rows a, b, c; lower-triangular) or the
/// three side lengths of an orthorhombic box.
pub(crate) fn cell_of(b: &Bound<'_, PyAny>) -> PyResult<[f64; 9]> {
    let a = array::<f64>(b, "box", None)?;
    let ro = a.readonly();
    let v = ro.as_slice()?;
    match a.shape() {
        [3] => Ok([v[0], 0.0, 0.0, 0.0, v[1], 0.0, 0.0, 0.0, v[2]]),
        [3, 3] => Ok(v.try_into().expect("9 values")),
        s => Err(PyValueError::new_err(format!(
            "argument `box` has shape {s:?}: expected (3,) side lengths or a (3, 3) matrix whose rows are the lattice vectors"))),
    }
}

/// The native Ewald plan (use `farfield.ewald.Plan`, which documents the arguments and wraps
/// the results).
#[pyclass(module = "farfield._farfield", name = "_EwaldCore")]
pub struct EwaldPlan {
    plan: Option<SendCell<farfield::EwaldPlan>>,
    method: Method,
    cell: [f64; 9],
    tol: f64,
    opts: EwaldOpts,
    /// Given by the caller (fixed), or None: the plan is made (again) for the charges' count.
    n_max_fixed: Option<usize>,
    pairs: Vec<[i64; 2]>,
    scales: Option<Vec<f64>>,
}

#[pymethods]
impl EwaldPlan {
    #[new]
    #[pyo3(signature = (cell, method="spme", tol=1e-5, terms="all", n_max=None, xi=0.0, rc=0.0, grid=None, order=0, nthreads=0,
                        backend="cpu", debug=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, cell: &Bound<'_, PyAny>, method: &str, tol: f64, terms: &str, n_max: Option<i64>, xi: f64, rc: f64,
           grid: Option<[i64; 3]>, order: i64, nthreads: i64, backend: &str, debug: i32) -> PyResult<Self> {
        let n_max = n_max.map(|n| count(n, "n_max")).transpose()?;
        let grid = match grid {
            Some(g) => Some([count(g[0], "grid")?, count(g[1], "grid")?, count(g[2], "grid")?]),
            None => None,
        };
        let (order, nthreads) = (count(order, "order")?, count(nthreads, "nthreads")?);
        let method = match method.to_ascii_lowercase().as_str() {
            "spme" | "pme" => Method::Spme,
            "spectral" => Method::Spectral,
            "direct" | "ewald" => Method::Direct,
            m => return Err(PyValueError::new_err(format!("argument `method` = {m:?}: expected \"spme\", \"spectral\" or \"direct\""))),
        };
        let terms = match terms.to_ascii_lowercase().as_str() {
            "all" => Terms::All,
            "kspace" | "k-space" | "long" => Terms::KSpace,
            "real" | "short" => Terms::Real,
            t => return Err(PyValueError::new_err(format!("argument `terms` = {t:?}: expected \"all\", \"kspace\" or \"real\""))),
        };
        let opts = EwaldOpts {
            nthreads,
            debug,
            terms,
            backend: backend_choice(backend)?,
            overrides: Overrides { xi, rc, grid: grid.unwrap_or([0; 3]), order },
            ..EwaldOpts::default()
        };
        let mut p = EwaldPlan { plan: None, method, cell: cell_of(cell)?, tol, opts, n_max_fixed: n_max, pairs: Vec::new(), scales: None };
        if let Some(n) = n_max {
            p.make(py, n)?;
        }
        Ok(p)
    }

    /// Replaces the excluded / scaled pairs: `pairs` (K, 2) int64 indices, `scales` (K,) or None.
    #[pyo3(signature = (pairs, scales=None))]
    fn set_exclusions(&mut self, py: Python<'_>, pairs: &Bound<'_, PyAny>, scales: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let (pv, sv) = pair_list(pairs, scales)?;
        if let Some(p) = self.plan.as_mut() {
            let (pv, sv) = (&pv, &sv);
            py.allow_threads(|| p.get().set_exclusions(pv, sv.as_deref())).py_err()?;
        }
        self.pairs = pv;
        self.scales = sv;
        Ok(())
    }

    /// Changes the cell (`box` as in the constructor).
    fn set_box(&mut self, py: Python<'_>, cell: &Bound<'_, PyAny>) -> PyResult<()> {
        let cell = cell_of(cell)?;
        if let Some(p) = self.plan.as_mut() {
            py.allow_threads(|| p.get().set_box(&cell)).py_err()?;
        }
        self.cell = cell;
        Ok(())
    }

    /// Evaluates; returns a dict with `energy` (float or None), `potentials` (N,), `field` (N, 3)
    /// (each None when not asked) and `virial` (3, 3) or None.
    #[pyo3(signature = (positions, charges, potentials=true, field=true, energy=true, virial=false))]
    #[allow(clippy::too_many_arguments)]
    fn compute<'py>(&mut self, py: Python<'py>, positions: &Bound<'py, PyAny>, charges: &Bound<'py, PyAny>, potentials: bool, field: bool,
                    energy: bool, virial: bool) -> PyResult<Bound<'py, PyDict>> {
        let x = array::<f64>(positions, "positions", Some(2))?;
        let q = array::<f64>(charges, "charges", Some(1))?;
        let n = q.len();
        if x.shape() != [n, 3] {
            return Err(PyValueError::new_err(format!("argument `positions` has shape {:?}, expected (N, 3) with N = {n} charges", x.shape())));
        }
        self.ensure(py, n)?;
        let phi = potentials.then(|| PyArray1::<f64>::zeros(py, n, false));
        let fld = field.then(|| PyArray2::<f64>::zeros(py, [n, 3], false));
        let (xr, qr) = (x.readonly(), q.readonly());
        let (xs, qs) = (xr.as_slice()?, qr.as_slice()?);
        let mut phw = phi.as_ref().map(|a| a.readwrite());
        let mut fdw = fld.as_ref().map(|a| a.readwrite());
        let php = phw.as_mut().map(|w| w.as_slice_mut()).transpose()?;
        let fdp = fdw.as_mut().map(|w| w.as_slice_mut()).transpose()?;
        let plan = self.plan.as_mut().expect("made above");
        let r = py.allow_threads(|| plan.get().execute_with(xs, qs, php, fdp, energy, virial)).py_err()?;
        drop((phw, fdw));
        let d = PyDict::new(py);
        d.set_item("energy", if energy { Some(r.energy) } else { None })?;
        d.set_item("potentials", phi)?;
        d.set_item("field", fld)?;
        let w = virial.then(|| PyArray1::from_slice(py, &r.virial).reshape([3, 3])).transpose()?;
        d.set_item("virial", w)?;
        Ok(d)
    }

    /// `compute` on **device** arrays of a CUDA plan (`__cuda_array_interface__`, float64, C
    /// order): `positions` (N, 3), `charges` (N,), outputs `potentials` (N,) and `field`
    /// (N, 3) (each None when not wanted) made by `farfield/ewald.py` in the caller's array
    /// library. Returns a dict with `energy` and `virial` (3, 3) (None when not asked).
    #[pyo3(signature = (positions, charges, potentials=None, field=None, energy=true, virial=false))]
    #[allow(clippy::too_many_arguments)]
    fn compute_device<'py>(&mut self, py: Python<'py>, positions: &Bound<'py, PyAny>, charges: &Bound<'py, PyAny>,
                           potentials: Option<&Bound<'py, PyAny>>, field: Option<&Bound<'py, PyAny>>, energy: bool, virial: bool)
                           -> PyResult<Bound<'py, PyDict>> {
        let q = device_array(charges, "charges", "<f8", false)?;
        let n = q.len;
        let x = particles(positions, "positions", 3, n, false)?;
        let p = potentials.map(|o| particles(o, "potentials", 1, n, true)).transpose()?;
        let f = field.map(|o| particles(o, "field", 3, n, true)).transpose()?;
        let outs: Vec<(&str, DeviceArray)> = p.map(|p| ("potentials", p)).into_iter().chain(f.map(|f| ("field", f))).collect();
        disjoint(&outs, &[("positions", x), ("charges", q)])?;
        self.ensure(py, n)?;
        let all: Vec<DeviceArray> = [x, q].into_iter().chain(p).chain(f).collect();
        wait_for(py, 0, &all).py_err()?;
        let plan = self.plan.as_mut().expect("made above");
        let (pp, fp) = (p.map_or(0, |a| a.ptr), f.map_or(0, |a| a.ptr));
        let r = py.allow_threads(|| match plan.get().cuda() {
            // SAFETY: every address is a C-contiguous float64 device array of the count the
            // plan reads or writes (checked above from its interface); outputs are disjoint.
            Some(g) => unsafe { g.execute_device(n, x.ptr, q.ptr, pp, fp, energy, virial) },
            None => Err(farfield::Error::InvalidArg("device arrays need a plan with backend=\"cuda\"; this plan runs on the CPU".into())),
        }).py_err()?;
        let d = PyDict::new(py);
        d.set_item("energy", if energy { Some(r.energy) } else { None })?;
        let w = virial.then(|| PyArray1::from_slice(py, &r.virial).reshape([3, 3])).transpose()?;
        d.set_item("virial", w)?;
        Ok(d)
    }

    /// The parameters in use (dict: xi, rc, grid, order, est_rel_err, tol_used, warnings,
    /// real_s, kspace_s); None before the plan is made.
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(p) = &self.plan else { return Ok(None) };
        let e = p.0.params();
        let d = PyDict::new(py);
        d.set_item("xi", e.xi)?;
        d.set_item("rc", e.rc)?;
        d.set_item("grid", e.grid.to_vec())?;
        d.set_item("order", e.order)?;
        d.set_item("est_rel_err", e.est_rel_err)?;
        d.set_item("tol_used", e.tol_used)?;
        d.set_item("warnings", e.warnings)?;
        d.set_item("real_s", e.real_s)?;
        d.set_item("kspace_s", e.kspace_s)?;
        Ok(Some(d))
    }
}

impl EwaldPlan {
    /// Makes the plan (again) when there is none or when `n` charges exceed its `n_max` (unless
    /// the caller fixed `n_max`).
    fn ensure(&mut self, py: Python<'_>, n: usize) -> PyResult<()> {
        let need = match (&self.plan, self.n_max_fixed) {
            (None, fixed) => Some(fixed.unwrap_or(n).max(1)),
            (Some(p), None) if n > p.0.n_max() => Some(n),
            _ => None,
        };
        match need {
            Some(nm) => self.make(py, nm),
            None => Ok(()),
        }
    }

    /// (Re)makes the farfield plan for `n_max` charges with the current cell and exclusions.
    fn make(&mut self, py: Python<'_>, n_max: usize) -> PyResult<()> {
        let (method, cell, tol, opts, pairs, scales) = (self.method, self.cell, self.tol, self.opts, &self.pairs, &self.scales);
        let p = py
            .allow_threads(|| -> farfield::Result<SendCell<farfield::EwaldPlan>> {
                let mut p = farfield::EwaldPlan::new(method, &cell, n_max, tol, &opts)?;
                if !pairs.is_empty() {
                    p.set_exclusions(pairs, scales.as_deref())?;
                }
                Ok(SendCell(p))
            })
            .py_err()?;
        self.plan = Some(p);
        Ok(())
    }
}
