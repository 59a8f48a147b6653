//! `farfield.spread.Plan`: particle↔mesh spreading and interpolation in physical coordinates
//! (farfield's `SpreadPlan`), for particle-in-cell deposition and force interpolation.

use crate::device::{device_array, device_empty, device_shape, disjoint, is_device, wait_for, DeviceArray};
use crate::{array, backend_choice, count, out_array, OrPy, SendCell};
use farfield::gpu::types::GpuReal;
use farfield::plans::spread::{kernel_for, SpreadBox, SpreadKernelKind, SpreadPlanOpts};
use farfield::Real;
use num_complex::Complex;
use numpy::{Element, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

enum Inner {
    F64(farfield::SpreadPlan<f64>),
    F32(farfield::SpreadPlan<f32>),
}

trait Pick: GpuReal + Element {
    fn pick(p: &mut Inner) -> &mut farfield::SpreadPlan<Self>;
}
impl Pick for f64 {
    fn pick(p: &mut Inner) -> &mut farfield::SpreadPlan<f64> {
        match p {
            Inner::F64(q) => q,
            Inner::F32(_) => unreachable!("dispatched on the plan's precision"),
        }
    }
}
impl Pick for f32 {
    fn pick(p: &mut Inner) -> &mut farfield::SpreadPlan<f32> {
        match p {
            Inner::F32(q) => q,
            Inner::F64(_) => unreachable!("dispatched on the plan's precision"),
        }
    }
}

/// A spreading / interpolation plan on a uniform grid in a box (farfield's `SpreadPlan`).
///
/// Geometry (Python axis order: axis 0 is x): the grid has shape ``n_grid = (n1[, n2[, n3]])``,
/// C order; grid point ``(i1, i2, i3)`` sits at ``box_lo + (i1 h1, i2 h2, i3 h3)`` with
/// ``h_a = box_len[a] / n_a`` (the caller's length unit). A periodic axis has period
/// ``box_len[a]`` and takes points anywhere; on a free axis every grid point a point's kernel
/// touches must lie on the grid (pad by ``ceil(w/2)`` points, ``w`` = :attr:`width`), else
/// :meth:`setpts` raises, naming the point.
///
/// Operations, with ``ψ`` the kernel in grid units: spreading
/// ``grid[l] = Σ_j c[j] Π_a ψ(l_a − g_{j,a})`` (the grid is overwritten), interpolation
/// ``v[j] = Σ_l grid[l] Π_a ψ(l_a − g_{j,a})`` (its adjoint) and, for B-splines of order ≥ 2,
/// the gradient ``∂v[j]/∂x_a`` per unit length.
///
/// Args:
///     n_grid (tuple of 1–3 ints): grid points per axis (each ≥ 2w).
///     box_len (float or sequence): box length per axis (> 0).
///     box_lo (float or sequence): coordinate of grid point 0 per axis (default 0).
///     periodic (bool or sequence of bool): per axis (default True).
///     kernel (str): ``"es"`` (exponential of semicircle, from ``tol``), ``"gaussian"``
///         (from ``tol``), ``"ngp"``, ``"cic"``, ``"tsc"``, ``"pqs"`` (cardinal B-splines of
///         order 1–4) or ``"bspline"`` (order ``order``, 1–8).
///     tol (float): relative tolerance in (0, 1) for ``"es"``/``"gaussian"`` (width chosen
///         with the NUFFT's rules at upsampling factor 2).
///     order (int): B-spline order for ``kernel="bspline"``.
///     dtype: ``"float64"`` (default) or ``"float32"``: the precision of points, values and
///         grids (real or complex of that precision).
///     nthreads (int): CPU threads (0 = all cores).
///     backend (str): ``"auto"``/``"cpu"`` (the CPU) or ``"cuda"`` (device 0).
///
/// Raises: ``ValueError``/``TypeError`` naming a bad argument; farfield.InvalidArgumentError
/// (e.g. a grid smaller than 2w: ``code`` 106); farfield.FarfieldError (no CUDA device: 112).
///
/// Sources: kernels of Barnett, Magland & af Klinteberg, SIAM J. Sci. Comput. 41 (2019) C479
/// (ES), Greengard & Lee, SIAM Rev. 46 (2004) 443 (Gaussian), Hockney & Eastwood, "Computer
/// Simulation Using Particles" (1988) §5-3 (NGP/CIC/TSC), Essmann et al., J. Chem. Phys. 103
/// (1995) 8577 (B-spline derivatives).
#[pyclass(module = "farfield._farfield", name = "SpreadPlan")]
pub struct SpreadPlan {
    inner: SendCell<Inner>,
    dim: usize,
    /// Grid shape in Python order.
    shape: Vec<usize>,
    single: bool,
}

fn per_axis<'py, T: FromPyObject<'py> + Copy>(v: &Bound<'py, PyAny>, dim: usize, name: &str) -> PyResult<Vec<T>> {
    if let Ok(x) = v.extract::<T>() {
        return Ok(vec![x; dim]);
    }
    let xs: Vec<T> = v.extract().map_err(|_| PyTypeError::new_err(format!("argument `{name}` must be a number or a sequence of {dim}")))?;
    if xs.len() != dim {
        return Err(PyValueError::new_err(format!("argument `{name}` has {} entries, expected {dim} (one per axis)", xs.len())));
    }
    Ok(xs)
}

#[pymethods]
impl SpreadPlan {
    #[new]
    #[pyo3(signature = (n_grid, box_len, box_lo=None, periodic=None, kernel="es", tol=1e-6, order=None, dtype=None,
                        nthreads=0, backend="cpu", debug=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(py: Python<'_>, n_grid: Vec<i64>, box_len: &Bound<'_, PyAny>, box_lo: Option<&Bound<'_, PyAny>>,
           periodic: Option<&Bound<'_, PyAny>>, kernel: &str, tol: f64, order: Option<i64>, dtype: Option<&Bound<'_, PyAny>>,
           nthreads: i64, backend: &str, debug: i32) -> PyResult<Self> {
        let n_grid: Vec<usize> = n_grid.iter().map(|&n| count(n, "n_grid")).collect::<PyResult<_>>()?;
        let nthreads = count(nthreads, "nthreads")?;
        let order = order.map(|o| count(o, "order")).transpose()?;
        let dim = n_grid.len();
        if !(1..=3).contains(&dim) {
            return Err(PyValueError::new_err(format!("argument `n_grid` has {dim} entries; spreading grids are 1D, 2D or 3D")));
        }
        let len: Vec<f64> = per_axis(box_len, dim, "box_len")?;
        let lo: Vec<f64> = match box_lo {
            Some(v) => per_axis(v, dim, "box_lo")?,
            None => vec![0.0; dim],
        };
        let per: Vec<bool> = match periodic {
            Some(v) => per_axis(v, dim, "periodic")?,
            None => vec![true; dim],
        };
        let np = py.import("numpy")?;
        let dt = match dtype {
            Some(d) => np.call_method1("dtype", (d,))?,
            None => np.call_method1("dtype", ("float64",))?,
        };
        let single = if dt.eq(np.getattr("float32")?)? {
            true
        } else if dt.eq(np.getattr("float64")?)? {
            false
        } else {
            return Err(PyValueError::new_err(format!("argument `dtype` = {dt}: expected float64 or float32")));
        };
        let (kind, p) = match (kernel.to_ascii_lowercase().as_str(), order) {
            ("es", _) => (SpreadKernelKind::Es, tol),
            ("gaussian", _) => (SpreadKernelKind::Gaussian, tol),
            ("ngp", _) => (SpreadKernelKind::BSpline, 1.0),
            ("cic", _) => (SpreadKernelKind::BSpline, 2.0),
            ("tsc", _) => (SpreadKernelKind::BSpline, 3.0),
            ("pqs", _) => (SpreadKernelKind::BSpline, 4.0),
            ("bspline", Some(o)) => (SpreadKernelKind::BSpline, o as f64),
            ("bspline", None) => return Err(PyValueError::new_err("kernel=\"bspline\" needs the argument `order` (1–8)")),
            (k, _) => {
                return Err(PyValueError::new_err(format!(
                    "argument `kernel` = {k:?}: expected \"es\", \"gaussian\", \"ngp\", \"cic\", \"tsc\", \"pqs\" or \"bspline\"")))
            }
        };
        let min_tol = if single { f32::MIN_TOL } else { f64::MIN_TOL };
        let k = kernel_for(kind, p, min_tol).py_err()?;
        // farfield's axis 0 (x, fastest) is the last Python axis
        let mut bx = SpreadBox { dim, n: [1; 3], lo: [0.0; 3], len: [1.0; 3], periodic: [true; 3] };
        for a in 0..dim {
            let d = dim - 1 - a;
            bx.n[d] = n_grid[a];
            bx.lo[d] = lo[a];
            bx.len[d] = len[a];
            bx.periodic[d] = per[a];
        }
        let opts = SpreadPlanOpts { nthreads, debug, backend: backend_choice(backend)?, ..SpreadPlanOpts::default() };
        let inner = py.allow_threads(|| -> farfield::Result<SendCell<Inner>> {
            Ok(SendCell(if single {
                Inner::F32(farfield::SpreadPlan::<f32>::new(bx, k, &opts)?)
            } else {
                Inner::F64(farfield::SpreadPlan::<f64>::new(bx, k, &opts)?)
            }))
        });
        Ok(SpreadPlan { inner: inner.py_err()?, dim, shape: n_grid, single })
    }

    /// Kernel width ``w`` in grid points.
    #[getter]
    fn width(&self) -> usize {
        match &self.inner.0 {
            Inner::F64(p) => p.width(),
            Inner::F32(p) => p.width(),
        }
    }

    /// Grid shape (Python order).
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    /// ``"cpu"`` or ``"cuda"``: where the plan runs.
    #[getter]
    fn backend(&self) -> &'static str {
        match &self.inner.0 {
            Inner::F64(p) => p.backend_name(),
            Inner::F32(p) => p.backend_name(),
        }
    }

    /// Number of points set (0 before :meth:`setpts`).
    #[getter]
    fn num_points(&self) -> usize {
        match &self.inner.0 {
            Inner::F64(p) => p.num_points(),
            Inner::F32(p) => p.num_points(),
        }
    }

    /// Sets the M points: ``points`` of shape ``(M, dim)`` (row j = point j, column a = axis
    /// a), the plan's real dtype, physical units. Copied (bin-sorted), so the array may change
    /// afterwards. Raises farfield.InvalidArgumentError naming a non-finite coordinate or a point
    /// whose kernel leaves a free axis (the previous points stay set).
    ///
    /// On a CUDA plan (``backend="cuda"``) ``points`` may be a device array (any object with
    /// ``__cuda_array_interface__``: CuPy, PyTorch, Numba; C order): the mapping, the checks
    /// and the set-up then run on the device, with the same results bit for bit; the same holds
    /// for :meth:`spread` and :meth:`interp`, whose results are then device arrays of the
    /// caller's library (``out`` a device array too).
    fn setpts(&mut self, py: Python<'_>, points: &Bound<'_, PyAny>) -> PyResult<()> {
        if is_device(points) {
            return self.setpts_device(py, points);
        }
        if self.single {
            self.setpts_t::<f32>(py, points)
        } else {
            self.setpts_t::<f64>(py, points)
        }
    }

    /// Spreads ``values`` (shape ``(M,)``, the plan's real or complex dtype) onto the grid and
    /// returns it (shape ``n_grid``, the dtype of ``values``), written into ``out`` when given
    /// (C order, that shape and dtype).
    #[pyo3(signature = (values, out=None))]
    fn spread<'py>(&mut self, py: Python<'py>, values: &Bound<'py, PyAny>, out: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        if is_device(values) {
            return self.spread_device(py, values, out);
        }
        if self.single {
            self.spread_t::<f32>(py, values, out)
        } else {
            self.spread_t::<f64>(py, values, out)
        }
    }

    /// Interpolates ``grid`` (shape ``n_grid``, the plan's real or complex dtype) at the points:
    /// returns ``values`` of shape ``(M,)`` or, with ``grad=True`` (real grids, B-spline kernels
    /// of order ≥ 2, CPU), ``(values, gradient)`` with ``gradient[j, a] = ∂v[j]/∂x_a`` per unit
    /// length, shape ``(M, dim)``.
    #[pyo3(signature = (grid, grad=false))]
    fn interp<'py>(&mut self, py: Python<'py>, grid: &Bound<'py, PyAny>, grad: bool) -> PyResult<Bound<'py, PyAny>> {
        if is_device(grid) {
            if grad {
                return Err(PyValueError::new_err("grad=True: the gradient is computed on the CPU backend only (pass grad=False with device arrays)"));
            }
            return self.interp_device(py, grid);
        }
        if self.single {
            self.interp_t::<f32>(py, grid, grad)
        } else {
            self.interp_t::<f64>(py, grid, grad)
        }
    }
}

/// True when `obj` is a NumPy array of a complex dtype.
fn is_complex(obj: &Bound<'_, PyAny>) -> bool {
    obj.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract::<String>()).is_ok_and(|k| k == "c")
}

impl SpreadPlan {
    /// The array-interface type strings of the plan's real and complex values.
    fn typestrs(&self) -> (&'static str, &'static str) {
        if self.single { ("<f4", "<c8") } else { ("<f8", "<c16") }
    }

    /// Reads a device array of the plan's real or complex dtype: (array, complex).
    fn device_values(&self, obj: &Bound<'_, PyAny>, name: &str, writable: bool) -> PyResult<(DeviceArray, bool)> {
        let (re, cx) = self.typestrs();
        match device_array(obj, name, cx, writable) {
            Ok(a) => Ok((a, true)),
            Err(_) => device_array(obj, name, re, writable).map(|a| (a, false)).map_err(|_| PyTypeError::new_err(format!(
                "argument `{name}` must be a device array of {} or {} (the plan's dtype)", &re[1..], &cx[1..]))),
        }
    }

    fn setpts_device(&mut self, py: Python<'_>, points: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = device_array(points, "points", self.typestrs().0, false)?;
        let sh = device_shape(points)?;
        let dim = self.dim;
        if sh.len() != 2 || sh[1] != dim {
            return Err(PyValueError::new_err(format!("argument `points` has shape {sh:?}, expected (M, {dim})")));
        }
        wait_for(py, 0, &[a]).py_err()?;
        let m = sh[0];
        let tb = if self.single { 4 } else { 8 };
        // farfield axis d = Python column dim − 1 − d, rows of dim values
        let mut x = [0u64; 3];
        for (d, xd) in x.iter_mut().enumerate().take(dim) {
            *xd = if m == 0 { 0 } else { a.ptr + ((dim - 1 - d) * tb) as u64 };
        }
        let inner = &mut self.inner;
        // SAFETY: `points` is a C-contiguous device array of M·dim values of the plan's dtype
        // (checked from its interface), so column d's M values lie at x[d] + j·dim·tb.
        py.allow_threads(|| match inner.get() {
            Inner::F64(p) => unsafe { p.setpts_device_strided(m, x, dim) },
            Inner::F32(p) => unsafe { p.setpts_device_strided(m, x, dim) },
        })
        .py_err()
    }

    fn spread_device<'py>(&mut self, py: Python<'py>, values: &Bound<'py, PyAny>, out: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let (c, complex) = self.device_values(values, "values", false)?;
        let m = self.num_points();
        if c.len != m {
            return Err(PyValueError::new_err(format!("argument `values` has {} values, expected M = {m} (the points set)", c.len)));
        }
        let (re, cx) = self.typestrs();
        let g_obj = match out {
            Some(o) => o.clone(),
            None => device_empty(py, values, &self.shape, if complex { &cx[1..] } else { &re[1..] })?,
        };
        let g = device_array(&g_obj, "out", if complex { cx } else { re }, true)?;
        self.check_shape(&device_shape(&g_obj)?, "out")?;
        disjoint(&[("out", g)], &[("values", c)])?;
        wait_for(py, 0, &[c, g]).py_err()?;
        let inner = &mut self.inner;
        // SAFETY: M values and a grid of the plan's size and dtype, distinct, on the device
        // (checked from their interfaces)
        py.allow_threads(|| match inner.get() {
            Inner::F64(p) => unsafe { p.spread_device(c.ptr, g.ptr, complex) },
            Inner::F32(p) => unsafe { p.spread_device(c.ptr, g.ptr, complex) },
        })
        .py_err()?;
        Ok(g_obj)
    }

    fn interp_device<'py>(&mut self, py: Python<'py>, grid: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let (g, complex) = self.device_values(grid, "grid", false)?;
        self.check_shape(&device_shape(grid)?, "grid")?;
        let m = self.num_points();
        let (re, cx) = self.typestrs();
        let v_obj = device_empty(py, grid, &[m], if complex { &cx[1..] } else { &re[1..] })?;
        let v = device_array(&v_obj, "values", if complex { cx } else { re }, true)?;
        wait_for(py, 0, &[g]).py_err()?;
        let inner = &mut self.inner;
        // SAFETY: a grid of the plan's size and M output values of its dtype, on the device
        py.allow_threads(|| match inner.get() {
            Inner::F64(p) => unsafe { p.interp_device(g.ptr, v.ptr, complex) },
            Inner::F32(p) => unsafe { p.interp_device(g.ptr, v.ptr, complex) },
        })
        .py_err()?;
        Ok(v_obj)
    }

    fn check_shape(&self, got: &[usize], name: &str) -> PyResult<()> {
        if got != self.shape.as_slice() {
            return Err(PyValueError::new_err(format!("argument `{name}` has shape {got:?}, expected the grid shape {:?}", self.shape)));
        }
        Ok(())
    }

    fn setpts_t<T: Pick>(&mut self, py: Python<'_>, points: &Bound<'_, PyAny>) -> PyResult<()> {
        let a = array::<T>(points, "points", Some(2))?;
        let sh = a.shape().to_vec();
        if sh[1] != self.dim {
            return Err(PyValueError::new_err(format!("argument `points` has shape {sh:?}, expected (M, {})", self.dim)));
        }
        let ro = a.readonly();
        let flat = ro.as_slice()?;
        let (m, dim) = (sh[0], self.dim);
        let inner = &mut self.inner;
        py.allow_threads(|| {
            // farfield axis d = Python column dim − 1 − d
            let mut cols: Vec<Vec<T>> = (0..dim).map(|d| (0..m).map(|j| flat[j * dim + (dim - 1 - d)]).collect()).collect();
            cols.resize(3, Vec::new());
            T::pick(inner.get()).setpts([&cols[0][..], &cols[1][..], &cols[2][..]])
        })
        .py_err()
    }

    fn spread_t<'py, T: Pick>(&mut self, py: Python<'py>, values: &Bound<'py, PyAny>, out: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>>
    where Complex<T>: Element {
        if is_complex(values) {
            let c = array::<Complex<T>>(values, "values", Some(1))?;
            let g: Bound<'py, PyArrayDyn<Complex<T>>> = match out {
                Some(o) => out_array(o, "out")?,
                None => unsafe { PyArrayDyn::<Complex<T>>::new(py, self.shape.clone(), false) },
            };
            self.check_shape(g.shape(), "out")?;
            let cr = c.readonly();
            let mut gw = g.try_readwrite().map_err(|e| PyValueError::new_err(format!("argument `out`: {e}")))?;
            let (cs, gs) = (cr.as_slice()?, gw.as_slice_mut()?);
            let inner = &mut self.inner;
            py.allow_threads(|| T::pick(inner.get()).spread_complex(cs, gs)).py_err()?;
            drop(gw);
            Ok(g.into_any())
        } else {
            let c = array::<T>(values, "values", Some(1))?;
            let g: Bound<'py, PyArrayDyn<T>> = match out {
                Some(o) => out_array(o, "out")?,
                None => unsafe { PyArrayDyn::<T>::new(py, self.shape.clone(), false) },
            };
            self.check_shape(g.shape(), "out")?;
            let cr = c.readonly();
            let mut gw = g.try_readwrite().map_err(|e| PyValueError::new_err(format!("argument `out`: {e}")))?;
            let (cs, gs) = (cr.as_slice()?, gw.as_slice_mut()?);
            let inner = &mut self.inner;
            py.allow_threads(|| T::pick(inner.get()).spread_real(cs, gs)).py_err()?;
            drop(gw);
            Ok(g.into_any())
        }
    }

    fn interp_t<'py, T: Pick>(&mut self, py: Python<'py>, grid: &Bound<'py, PyAny>, grad: bool) -> PyResult<Bound<'py, PyAny>>
    where Complex<T>: Element {
        let m = match &self.inner.0 {
            Inner::F64(p) => p.num_points(),
            Inner::F32(p) => p.num_points(),
        };
        let dim = self.dim;
        if is_complex(grid) {
            if grad {
                return Err(PyValueError::new_err("grad=True needs a real grid (the gradient is of real B-spline interpolation)"));
            }
            let g = array::<Complex<T>>(grid, "grid", None)?;
            self.check_shape(g.shape(), "grid")?;
            let v = PyArray1::<Complex<T>>::zeros(py, m, false);
            let gr = g.readonly();
            let gs = gr.as_slice()?;
            let mut vw = v.readwrite();
            let vs = vw.as_slice_mut()?;
            let inner = &mut self.inner;
            py.allow_threads(|| T::pick(inner.get()).interp_complex(gs, vs)).py_err()?;
            drop(vw);
            return Ok(v.into_any());
        }
        let g = array::<T>(grid, "grid", None)?;
        self.check_shape(g.shape(), "grid")?;
        let v = PyArray1::<T>::zeros(py, m, false);
        let gr = g.readonly();
        let gs = gr.as_slice()?;
        let mut vw = v.readwrite();
        let vs = vw.as_slice_mut()?;
        let inner = &mut self.inner;
        if !grad {
            py.allow_threads(|| T::pick(inner.get()).interp_real(gs, vs, None)).py_err()?;
            drop(vw);
            return Ok(v.into_any());
        }
        let gd = PyArray2::<T>::zeros(py, [m, dim], false);
        let mut gdw = gd.readwrite();
        let gds = gdw.as_slice_mut()?;
        py.allow_threads(|| -> farfield::Result<()> {
            T::pick(inner.get()).interp_real(gs, vs, Some(&mut gds[..]))?;
            // farfield's component d (x fastest) is Python axis dim − 1 − d
            for row in gds.chunks_mut(dim) {
                row.reverse();
            }
            Ok(())
        })
        .py_err()?;
        drop((vw, gdw));
        Ok((v, gd).into_pyobject(py)?.into_any())
    }
}
