//! `farfield.poisson.Plan`'s native part: farfield's free-space `PoissonPlan` (Hockney–Eastwood,
//! Vico–Greengard, Vico–Greengard with DCT) on NumPy grids.

use crate::{array, count, OrPy, SendCell};
use farfield::poisson::{Method, PoissonOpts};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The native Poisson plan (use `farfield.poisson.Plan` / `farfield.poisson.solve`, which
/// document the arguments).
#[pyclass(module = "farfield._farfield", name = "_PoissonCore")]
pub struct PoissonPlan {
    plan: SendCell<farfield::poisson::PoissonPlan>,
    /// Grid shape, Python order.
    shape: Vec<usize>,
}

#[pymethods]
impl PoissonPlan {
    #[new]
    #[pyo3(signature = (shape, h, method="vico", vico_factor=1.1, nthreads=0, check_input=true, debug=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, shape: Vec<i64>, h: &Bound<'_, PyAny>, method: &str, vico_factor: f64, nthreads: i64, check_input: bool,
           debug: i32) -> PyResult<Self> {
        let shape: Vec<usize> = shape.iter().map(|&n| count(n, "shape")).collect::<PyResult<_>>()?;
        let nthreads = count(nthreads, "nthreads")?;
        let dim = shape.len();
        if !(2..=3).contains(&dim) {
            return Err(PyValueError::new_err(format!("argument `shape` has {dim} axes; the free-space solvers are 2D or 3D")));
        }
        let hv: Vec<f64> = match h.extract::<f64>() {
            Ok(v) => vec![v; dim],
            Err(_) => h.extract().map_err(|_| PyTypeError::new_err(format!("argument `h` must be a spacing or {dim} spacings")))?,
        };
        if hv.len() != dim {
            return Err(PyValueError::new_err(format!("argument `h` has {} spacings, expected {dim} (one per axis)", hv.len())));
        }
        let method = match method.to_ascii_lowercase().as_str() {
            "hockney" => Method::Hockney,
            "vico" => Method::Vico,
            "vico_dct" | "vico-dct" => Method::VicoDct,
            m => return Err(PyValueError::new_err(format!("argument `method` = {m:?}: expected \"vico\", \"vico_dct\" or \"hockney\""))),
        };
        // farfield's x (fastest) axis is the last Python axis
        let n: Vec<usize> = shape.iter().rev().copied().collect();
        let hr: Vec<f64> = hv.iter().rev().copied().collect();
        let opts = PoissonOpts { nthreads, vico_factor, check_input, debug, ..PoissonOpts::default() };
        let plan = py.allow_threads(|| farfield::poisson::PoissonPlan::new(method, &n, &hr, &opts).map(SendCell)).py_err()?;
        Ok(PoissonPlan { plan, shape })
    }

    /// Solves for `rho` (the grid's shape, float64, C order); returns a dict with `phi` (that
    /// shape), `field` ((dim, *shape), component a along Python axis a, or None) and `energy`.
    #[pyo3(signature = (rho, field=false))]
    fn solve<'py>(&mut self, py: Python<'py>, rho: &Bound<'py, PyAny>, field: bool) -> PyResult<Bound<'py, PyDict>> {
        let r = array::<f64>(rho, "rho", None)?;
        if r.shape() != self.shape.as_slice() {
            return Err(PyValueError::new_err(format!("argument `rho` has shape {:?}, expected the plan's {:?}", r.shape(), self.shape)));
        }
        let dim = self.shape.len();
        let phi = PyArrayDyn::<f64>::zeros(py, self.shape.clone(), false);
        let mut eshape = vec![dim];
        eshape.extend_from_slice(&self.shape);
        let e = field.then(|| PyArrayDyn::<f64>::zeros(py, eshape, false));
        let rr = r.readonly();
        let rs = rr.as_slice()?;
        let mut pw = phi.readwrite();
        let ps = pw.as_slice_mut()?;
        let mut ew = e.as_ref().map(|a| a.readwrite());
        let es = ew.as_mut().map(|w| w.as_slice_mut()).transpose()?;
        let plan = &mut self.plan;
        let u = py
            .allow_threads(|| -> farfield::Result<f64> {
                let mut u = 0.0;
                plan.get().execute_into(rs, ps, es, Some(&mut u))?;
                Ok(u)
            })
            .py_err()?;
        drop((pw, ew));
        // farfield's component d (x fastest) is Python axis dim − 1 − d: reverse the components
        let e = match e {
            Some(a) => {
                let np = py.import("numpy")?;
                Some(np.call_method1("ascontiguousarray", (np.call_method1("flip", (a, 0))?,))?)
            }
            None => None,
        };
        let d = PyDict::new(py);
        d.set_item("phi", phi)?;
        d.set_item("field", e)?;
        d.set_item("energy", u)?;
        Ok(d)
    }

    /// Grid shape (Python order).
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }
}
