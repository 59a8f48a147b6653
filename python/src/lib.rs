//! `farfield._farfield`: the native module of the farfield Python package, PyO3 over farfield's
//! Rust API (no C ABI, no ctypes).
//!
//! * [`nufft`]: FINUFFT's guru semantics on `finufft::plan::CompatPlan` (crate farfield-finufft) (the plan the
//!   FINUFFT drop-in library uses), driven by `farfield/nufft.py`, which does FINUFFT's shape
//!   checks and axis order;
//! * [`spread`], [`ewald`], [`fmm`], [`poisson`]: the plan fronts `SpreadPlan`, `EwaldPlan`,
//!   `FmmPlan`, `PoissonPlan`.
//!
//! Conventions of every binding: arrays are taken without copies when they are NumPy arrays of
//! the documented dtype, shape and C order (a `TypeError` or `ValueError` naming the argument
//! otherwise; Python sequences are converted); the GIL is released while farfield computes; a
//! farfield error becomes a `farfield.FarfieldError` (or its subclass
//! `farfield.InvalidArgumentError`, also a `ValueError`) carrying the library's status code and
//! message. Grids are NumPy arrays in C order whose **last** axis is farfield's x axis (the
//! fastest), so a Python grid `g[i, j, k]` with `i` along the first physical axis is
//! farfield's `g[k + n3*(j + n2*i)]`: the bindings reverse axis lists (sizes, spacings, box,
//! coordinates, field components) at the boundary.

use numpy::{Element, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod cunufft;
mod device;
mod ewald;
mod fmm;
mod nufft;
mod poisson;
mod spread;

/// A value moved into `Python::allow_threads`: plans hold raw pointers (FFTW plans, the
/// caller's coordinate arrays, CUDA handles) and are not `Send`, but each is used by one thread
/// at a time — PyO3's borrow flag on the owning Python object serialises the calls — as the C
/// API's handles are.
pub(crate) struct SendCell<T>(pub T);
// SAFETY: see the type's docs: exclusive access is guaranteed by the pyclass borrow.
unsafe impl<T> Send for SendCell<T> {}
unsafe impl<T> Sync for SendCell<T> {}

impl<T> SendCell<T> {
    /// The value. Closures passed to `allow_threads` must call this (capturing the whole
    /// cell) rather than name the field `.0`, which a closure would capture on its own.
    pub(crate) fn get(&mut self) -> &mut T {
        &mut self.0
    }
}

/// The Python exception for a farfield error: `farfield.InvalidArgumentError` (a
/// `FarfieldError` and a `ValueError`) for the status codes that mean bad input, else
/// `farfield.FarfieldError` (a `RuntimeError`); both carry `code` (the C status code) and the
/// library's message.
pub(crate) fn to_py(e: farfield::Error) -> PyErr {
    Python::with_gil(|py| raise(py, "_farfield_error", (e.code(), e.to_string())))
}

/// Calls the exception factory `farfield._errors.<factory>(*args)` and returns its result as
/// the error (or the factory's own failure).
pub(crate) fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(py: Python<'py>, factory: &str, args: A) -> PyErr {
    let made = py.import("farfield._errors").and_then(|m| m.getattr(factory)).and_then(|f| f.call1(args));
    match made {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}

/// `Result<T, farfield::Error>` → `PyResult<T>`.
pub(crate) trait OrPy<T> {
    fn py_err(self) -> PyResult<T>;
}
impl<T> OrPy<T> for farfield::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// The dtype name of `T` (for messages).
pub(crate) fn dtype_name<T: Element>(py: Python<'_>) -> String {
    T::get_dtype(py).str().map(|s| s.to_string()).unwrap_or_else(|_| "?".into())
}

/// `obj` as a C-ordered NumPy array of element `T` with `ndim` axes (any when `None`), without
/// a copy when it already is one. A NumPy array of another dtype → `TypeError`, of another
/// number of axes or not C-contiguous → `ValueError`, each naming `name`; anything else (a
/// list, a scalar) is converted with `numpy.asarray(obj, dtype)`.
pub(crate) fn array<'py, T: Element>(obj: &Bound<'py, PyAny>, name: &str, ndim: Option<usize>) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let py = obj.py();
    let arr: Bound<'py, PyUntypedArray> = match obj.downcast::<PyUntypedArray>() {
        Ok(a) => {
            if !a.dtype().is_equiv_to(&T::get_dtype(py)) {
                return Err(PyTypeError::new_err(format!(
                    "argument `{name}` has dtype {}, expected {} (convert it with .astype)",
                    a.dtype().str()?, dtype_name::<T>(py))));
            }
            if !a.is_c_contiguous() {
                return Err(PyValueError::new_err(format!(
                    "argument `{name}` is not C-contiguous (pass numpy.ascontiguousarray({name}))")));
            }
            a.clone()
        }
        Err(_) => {
            let np = py.import("numpy")?;
            let conv = np.call_method1("ascontiguousarray", (obj, T::get_dtype(py))).map_err(|e| {
                PyTypeError::new_err(format!("argument `{name}` cannot be converted to a {} array: {e}", dtype_name::<T>(py)))
            })?;
            conv.downcast_into::<PyUntypedArray>()?
        }
    };
    if let Some(n) = ndim {
        if arr.ndim() != n {
            return Err(PyValueError::new_err(format!(
                "argument `{name}` has {} dimension(s) (shape {:?}), expected {n}", arr.ndim(), arr.shape())));
        }
    }
    Ok(arr.into_any().downcast_into::<PyArrayDyn<T>>()?)
}

/// Like [`array`] for an output the caller passed: it must be a NumPy array of element `T`
/// and C order (never converted); writeability is checked when it is borrowed for writing.
pub(crate) fn out_array<'py, T: Element>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    if obj.downcast::<PyUntypedArray>().is_err() {
        return Err(PyTypeError::new_err(format!("argument `{name}` must be a NumPy array of dtype {}", dtype_name::<T>(obj.py()))));
    }
    // a read-only array is refused when it is borrowed for writing (numpy's borrow check)
    array::<T>(obj, name, None)
}

/// Reads an optional integer option from `opts` (a `dict` of keyword arguments).
pub(crate) fn opt<'py, T: FromPyObject<'py>>(opts: Option<&Bound<'py, PyDict>>, key: &str) -> PyResult<Option<T>> {
    match opts.map(|d| d.get_item(key)).transpose()?.flatten() {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract::<T>().map(Some).map_err(|_| {
            PyTypeError::new_err(format!("option `{key}` = {} has the wrong type", v.repr().map(|r| r.to_string()).unwrap_or_default()))
        }),
    }
}

/// The excluded / scaled pairs of `set_exclusions` (Ewald and FMM plans): `pairs` (K, 2) int64
/// indices and `scales` (K,) float64 or None.
pub(crate) fn pair_list(pairs: &Bound<'_, PyAny>, scales: Option<&Bound<'_, PyAny>>) -> PyResult<(Vec<[i64; 2]>, Option<Vec<f64>>)> {
    let a = array::<i64>(pairs, "pairs", Some(2))?;
    if a.shape()[1] != 2 {
        return Err(PyValueError::new_err(format!("argument `pairs` has shape {:?}, expected (K, 2)", a.shape())));
    }
    let ro = a.readonly();
    let pv: Vec<[i64; 2]> = ro.as_slice()?.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    let sv = match scales {
        None => None,
        Some(s) => {
            let sa = array::<f64>(s, "scales", Some(1))?;
            if sa.len() != pv.len() {
                return Err(PyValueError::new_err(format!("argument `scales` has {} values, `pairs` {} rows", sa.len(), pv.len())));
            }
            Some(sa.readonly().as_slice()?.to_vec())
        }
    };
    Ok((pv, sv))
}

/// A count or size argument: a Python int ≥ 0 (a negative one → `ValueError` naming it).
pub(crate) fn count(v: i64, name: &str) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| PyValueError::new_err(format!("argument `{name}` = {v} must be ≥ 0")))
}

/// `backend` argument ("auto", "cpu", "cuda") → farfield's choice.
pub(crate) fn backend_choice(s: &str) -> PyResult<farfield::backend::BackendChoice> {
    use farfield::backend::BackendChoice as B;
    match s.to_ascii_lowercase().as_str() {
        "auto" => Ok(B::Auto),
        "cpu" => Ok(B::Cpu),
        "cuda" | "gpu" => Ok(B::Cuda),
        _ => Err(PyValueError::new_err(format!("argument `backend` = {s:?}: expected \"auto\", \"cpu\" or \"cuda\""))),
    }
}

/// Whether a CUDA device (and driver) is usable from this process: the answer of farfield's
/// device discovery, which never fails (no driver, no device → `False`).
#[pyfunction]
fn cuda_available() -> bool {
    farfield::gpu::runtime::resolve(farfield::backend::BackendChoice::Cuda, "the Python package's device check").is_ok()
}

/// The native module.
#[pymodule]
fn _farfield(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", farfield::VERSION)?;
    m.add_function(wrap_pyfunction!(cuda_available, m)?)?;
    m.add_function(wrap_pyfunction!(device::_device_array_info, m)?)?;
    m.add_class::<cunufft::CuNufftCore>()?;
    m.add_class::<nufft::NufftCore>()?;
    m.add_class::<spread::SpreadPlan>()?;
    m.add_class::<ewald::EwaldPlan>()?;
    m.add_class::<fmm::FmmPlan>()?;
    m.add_class::<poisson::PoissonPlan>()?;
    Ok(())
}
