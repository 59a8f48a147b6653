//! Device arrays from Python: any object with a `__cuda_array_interface__` (CuPy, PyTorch CUDA
//! tensors, Numba device arrays; version 2 or 3 of the interface, Numba's "CUDA Array
//! Interface" specification). This module reads the interface, checks dtype, layout and
//! writability against what a call needs, and returns the device address, the number of values
//! and the stream the producer named; the caller checks the count against the plan, so no call
//! from Python hands the library an address with fewer values than it reads or writes.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// A device array as its `__cuda_array_interface__` describes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeviceArray {
    /// Device address of the first value (0 only for an empty array).
    pub ptr: u64,
    /// Number of values (the product of the shape).
    pub len: usize,
    /// Bytes the values span.
    pub bytes: usize,
    /// The interface's `stream` (version 3): `None` when the producer named none (no
    /// synchronisation needed), else the `cudaStream_t` value (1: the legacy default stream,
    /// 2: the per-thread default stream).
    pub stream: Option<u64>,
}

/// Reads `obj.__cuda_array_interface__` as argument `name` of the array-interface type string
/// `typestr` (e.g. `"<c16"`, `"<f4"`), C-contiguous; `writable` refuses a read-only array.
/// Errors: `TypeError` (no interface, a wrong dtype, a mask, a malformed interface),
/// `ValueError` (not C-contiguous, read-only output, the stream value 0, which the
/// specification forbids).
pub(crate) fn device_array(obj: &Bound<'_, PyAny>, name: &str, typestr: &str, writable: bool) -> PyResult<DeviceArray> {
    let bad = |what: &str| PyTypeError::new_err(format!("argument `{name}`: its __cuda_array_interface__ {what}"));
    let cai = obj.getattr("__cuda_array_interface__").map_err(|_| {
        PyTypeError::new_err(format!("argument `{name}` is not a device array (no __cuda_array_interface__; pass a CuPy array)"))
    })?;
    let d = cai.downcast::<PyDict>().map_err(|_| bad("is not a dict"))?;
    let get = |k: &str| d.get_item(k);
    let ts: String = get("typestr")?.ok_or_else(|| bad("has no typestr"))?.extract().map_err(|_| bad("typestr is not a str"))?;
    // '|' (not applicable) and '<' (little endian) are the native order of every CUDA device
    let native = ts.replacen('|', "<", 1);
    if native != typestr {
        return Err(PyTypeError::new_err(format!(
            "argument `{name}` has dtype {ts} (array-interface type string), expected {typestr} ({})",
            dtype_name(typestr))));
    }
    let shape_obj = get("shape")?.ok_or_else(|| bad("has no shape"))?;
    let shape: Vec<usize> = shape_obj.downcast::<PyTuple>().map_err(|_| bad("shape is not a tuple"))?
        .iter().map(|v| v.extract::<usize>()).collect::<PyResult<_>>().map_err(|_| bad("shape holds a value that is not a count"))?;
    let len = shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n)).ok_or_else(|| bad("shape overflows"))?;
    let data = get("data")?.ok_or_else(|| bad("has no data"))?;
    let (ptr, readonly): (u64, bool) = data.extract().map_err(|_| bad("data is not (address, read-only flag)"))?;
    if writable && readonly {
        return Err(PyValueError::new_err(format!("argument `{name}` is read-only, but it is written")));
    }
    if let Some(m) = get("mask")? {
        if !m.is_none() {
            return Err(PyTypeError::new_err(format!("argument `{name}` is a masked array (masks are not supported)")));
        }
    }
    if let Some(st) = get("strides")? {
        if !st.is_none() {
            let strides: Vec<isize> = st.downcast::<PyTuple>().map_err(|_| bad("strides is not a tuple"))?
                .iter().map(|v| v.extract::<isize>()).collect::<PyResult<_>>().map_err(|_| bad("strides holds a non-integer"))?;
            if strides.len() != shape.len() || !c_contiguous(&shape, &strides, itemsize(typestr)) {
                return Err(PyValueError::new_err(format!(
                    "argument `{name}` is not C-contiguous (shape {shape:?}, strides {strides:?}; pass cupy.ascontiguousarray({name}))")));
            }
        }
    }
    if len > 0 && ptr == 0 {
        return Err(bad("data address is NULL for a non-empty array"));
    }
    let stream = match get("stream")? {
        None => None,
        Some(s) if s.is_none() => None,
        Some(s) => {
            let v: u64 = s.extract().map_err(|_| bad("stream is not an integer"))?;
            if v == 0 {
                return Err(PyValueError::new_err(format!(
                    "argument `{name}`: its __cuda_array_interface__ names stream 0, which the interface forbids (ambiguous)")));
            }
            Some(v)
        }
    };
    Ok(DeviceArray { ptr, len, bytes: len * itemsize(typestr), stream })
}

/// True when `obj` exposes `__cuda_array_interface__` (a device array).
pub(crate) fn is_device(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__cuda_array_interface__").unwrap_or(false)
}

/// The shape of a device array's interface (after [`device_array`] has checked it).
pub(crate) fn device_shape(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    obj.getattr("__cuda_array_interface__")?.get_item("shape")?.extract()
}

/// A new C-ordered device array of `shape` and NumPy dtype `dtype` from the array library of
/// `template` (`farfield._device.empty_like`, the package's one place for that).
pub(crate) fn device_empty<'py>(py: Python<'py>, template: &Bound<'py, PyAny>, shape: &[usize], dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("farfield._device")?.getattr("empty_like")?.call1((template, shape.to_vec(), dtype))
}

/// A float64 device array of `per · n` values (argument `name`; `writable` for outputs) for a
/// call on `n` particles. Errors: those of [`device_array`], `ValueError` for another count.
pub(crate) fn particles(obj: &Bound<'_, PyAny>, name: &str, per: usize, n: usize, writable: bool) -> PyResult<DeviceArray> {
    let a = device_array(obj, name, "<f8", writable)?;
    if a.len != per * n {
        return Err(PyValueError::new_err(format!("argument `{name}` has {} values, expected {per}·N = {} (N = {n} charges)", a.len, per * n)));
    }
    Ok(a)
}

/// Refuses an output that overlaps any other argument: `outputs` and `inputs` are the named
/// arrays of one call (an input may share memory with another input). Error: `ValueError`
/// naming both.
pub(crate) fn disjoint(outputs: &[(&str, DeviceArray)], inputs: &[(&str, DeviceArray)]) -> PyResult<()> {
    let overlap = |a: &DeviceArray, b: &DeviceArray| a.bytes > 0 && b.bytes > 0 && a.ptr < b.ptr + b.bytes as u64 && b.ptr < a.ptr + a.bytes as u64;
    for (i, (na, a)) in outputs.iter().enumerate() {
        for (nb, b) in outputs[i + 1..].iter().chain(inputs) {
            if overlap(a, b) {
                return Err(PyValueError::new_err(format!("arguments `{na}` and `{nb}` overlap: an output must be an array of its own")));
            }
        }
    }
    Ok(())
}

/// Waits for each stream the arrays' interfaces name that is not `plan_stream`, the stream the
/// plan runs on (0: the default stream, which is the legacy default stream 1 of the interface),
/// as the interface asks of a consumer. Errors: the device's (no driver, a failed
/// synchronisation).
pub(crate) fn wait_for(py: Python<'_>, plan_stream: u64, arrays: &[DeviceArray]) -> farfield::Result<()> {
    let plan = if plan_stream == 0 { 1 } else { plan_stream };
    let mut done: Vec<u64> = Vec::new();
    for s in arrays.iter().filter_map(|a| a.stream) {
        if s == plan || done.contains(&s) {
            continue;
        }
        done.push(s);
        py.allow_threads(|| {
            // SAFETY: the interface's producer names a live stream of its context (the primary
            // context of device 0, which CuPy, PyTorch and this library share).
            unsafe { farfield::gpu::cuda::CudaDevice::with_stream(0, s, 0) }.and_then(|d| d.synchronize())
        })?;
    }
    Ok(())
}

/// C order with elements of `item` bytes: strides (in bytes) equal to those of a dense C
/// array, axes of extent 1 ignored (their stride is arbitrary).
fn c_contiguous(shape: &[usize], strides: &[isize], item: usize) -> bool {
    let mut want = item as isize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n != 1 && s != want {
            return false;
        }
        want = want.saturating_mul(n as isize);
    }
    true
}

fn itemsize(typestr: &str) -> usize {
    typestr[2..].parse().unwrap_or(0)
}

fn dtype_name(typestr: &str) -> &'static str {
    match typestr {
        "<c16" => "complex128",
        "<c8" => "complex64",
        "<f8" => "float64",
        "<f4" => "float32",
        _ => "?",
    }
}

/// `_device_array_info(obj, name, typestr, writable)` → `(address, count, stream or None)`: the
/// checks every device entry point applies to its array arguments, reachable from Python so
/// that they are tested without a GPU.
#[pyfunction]
#[pyo3(signature = (obj, name, typestr, writable=false))]
pub(crate) fn _device_array_info(obj: &Bound<'_, PyAny>, name: &str, typestr: &str, writable: bool) -> PyResult<(u64, usize, Option<u64>)> {
    let a = device_array(obj, name, typestr, writable)?;
    Ok((a.ptr, a.len, a.stream))
}
