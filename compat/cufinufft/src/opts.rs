//! `cufinufft_opts`: cuFINUFFT 2.5's options struct, byte for byte (the field order and types
//! of its published `cufinufft_opts.h`, the defaults of its `cufinufft_default_opts`), and its
//! translation into farfield's [`NufftOpts`] (backend CUDA).
//!
//! What each field does here (honoured, mapped, validated or ignored) is the table in the crate
//! docs ([`crate`]).

use crate::ier::*;
use farfield::nufft::options::GpuMethod;
use farfield::nufft::{BackendChoice, GpuStream, ModeOrder, NufftOpts};
use std::ffi::{c_int, c_void};

/// The options struct of cuFINUFFT 2.5 (`cufinufft_opts`, both precisions). Fill it with
/// `cufinufft_default_opts(&opts)`, change fields, pass it to `cufinufft_makeplan` (NULL =
/// defaults). Layout (LP64): a `double`, thirteen `int`s (offsets 8 … 56), padding, the stream
/// pointer at 64, three `int`s at 72, 76, 80; size 88.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct cufinufft_opts {
    /// Upsampling factor σ: 0 = automatic (default); 1.25 and 2.0 used as given; with
    /// `gpu_kerevalmeth = 0` any value in (1, 4] (≤ 1 → [`FINUFFT_ERR_UPSAMPFAC_TOO_SMALL`],
    /// > 4 or NaN → [`FINUFFT_ERR_HORNER_WRONG_BETA`]); other values with `gpu_kerevalmeth = 1`
    /// → [`FINUFFT_ERR_HORNER_WRONG_BETA`], as cuFINUFFT ([`validate`]).
    pub upsampfac: f64,
    /// 0 = automatic (default), 1 = points driven (GM or GM-sort by `gpu_sort`), 2 = shared
    /// memory subproblems (SM), 3 = output driven (no such method here: automatic); other values
    /// → [`FINUFFT_ERR_INSUFFICIENT_SHMEM`], cuFINUFFT 2.5.1's code for them ([`validate`]).
    pub gpu_method: c_int,
    /// With `gpu_method = 1`: 0 = no sort (GM), otherwise bin-sorted (GM-sort, default 1).
    pub gpu_sort: c_int,
    /// Ignored: farfield sizes its bins from the device's shared memory. Default 0.
    pub gpu_binsizex: c_int,
    /// Ignored. Default 0.
    pub gpu_binsizey: c_int,
    /// Ignored. Default 0.
    pub gpu_binsizez: c_int,
    /// Ignored (cuFINUFFT's output-driven method). Default 0.
    pub gpu_obinsizex: c_int,
    /// Ignored. Default 0.
    pub gpu_obinsizey: c_int,
    /// Ignored. Default 0.
    pub gpu_obinsizez: c_int,
    /// Ignored: farfield's device subproblems have their own size. Default 1024.
    pub gpu_maxsubprobsize: c_int,
    /// Read only to validate `upsampfac` as cuFINUFFT does (1, the default, allows only 1.25
    /// and 2.0); farfield evaluates its kernel its own way.
    pub gpu_kerevalmeth: c_int,
    /// ≠ 0 (spread or interpolate only): not supported → [`FINUFFT_ERR_INVALID_ARGUMENT`].
    /// Default 0.
    pub gpu_spreadinterponly: c_int,
    /// Ignored: farfield batches `ntransf` vectors automatically (`min(ntransf, 8)` within a
    /// 1 GiB budget of fine grids). Default 0.
    pub gpu_maxbatchsize: c_int,
    /// The CUDA device: only 0 (farfield's plans run on device 0); another value →
    /// [`FINUFFT_ERR_CUDA_FAILURE`]. Default 0.
    pub gpu_device_id: c_int,
    /// The caller's CUDA stream (`cudaStream_t`; NULL = the default stream, default): every
    /// launch, copy and cuFFT execution of the plan runs on it. It must stay valid until the
    /// plan is destroyed.
    pub gpu_stream: *mut c_void,
    /// Mode order (types 1, 2): 1 = FFT order; any other value = CMCL (`−N/2 … (N−1)/2`,
    /// default 0).
    pub modeord: c_int,
    /// Ignored (cuFINUFFT's output-driven method). Default 0.
    pub gpu_np: c_int,
    /// > 0: farfield prints its plan parameters (and device opening stages) to stderr, and a
    /// failing call prints its message. Default 0.
    pub debug: c_int,
}

/// cuFINUFFT 2.5's defaults (`cufinufft_default_opts`).
pub fn default_opts() -> cufinufft_opts {
    cufinufft_opts {
        upsampfac: 0.0,
        gpu_method: 0,
        gpu_sort: 1,
        gpu_binsizex: 0,
        gpu_binsizey: 0,
        gpu_binsizez: 0,
        gpu_obinsizex: 0,
        gpu_obinsizey: 0,
        gpu_obinsizez: 0,
        gpu_maxsubprobsize: 1024,
        gpu_kerevalmeth: 1,
        gpu_spreadinterponly: 0,
        gpu_maxbatchsize: 0,
        gpu_device_id: 0,
        gpu_stream: std::ptr::null_mut(),
        modeord: 0,
        gpu_np: 0,
        debug: 0,
    }
}

/// The caller's options, or the defaults for NULL.
///
/// # Safety
/// `o` must be NULL or point to a readable `cufinufft_opts`.
pub unsafe fn read(o: *const cufinufft_opts) -> cufinufft_opts {
    if o.is_null() {
        default_opts()
    } else {
        *o
    }
}

/// Checks the options (`upsampfac`, `gpu_method`, `gpu_spreadinterponly`, `gpu_device_id`,
/// in that order), with the codes cuFINUFFT 2.5.1 returns for them (its `setup_spreader` and
/// `cufinufft_setup_binsize`, observed on an H100 through its Python package):
/// * `upsampfac` other than 0 (automatic), 1.25 and 2.0 → [`FINUFFT_ERR_HORNER_WRONG_BETA`]
///   while `gpu_kerevalmeth = 1` (the default: cuFINUFFT's Horner tables exist for those two
///   factors only); with `gpu_kerevalmeth = 0`, ≤ 1 → [`FINUFFT_ERR_UPSAMPFAC_TOO_SMALL`], and
///   beyond farfield's kernel range (> 4, NaN) → [`FINUFFT_ERR_HORNER_WRONG_BETA`];
/// * `gpu_method` outside 0–3 → [`FINUFFT_ERR_INSUFFICIENT_SHMEM`] (cuFINUFFT 2.5.1 reports an
///   unknown method from its bin-size set-up, which returns this code, not
///   `FINUFFT_ERR_METHOD_NOTVALID`).
pub fn validate(o: &cufinufft_opts) -> Result<(), Failure> {
    let u = o.upsampfac;
    if u != 0.0 && u != 1.25 && u != 2.0 {
        if o.gpu_kerevalmeth == 1 {
            return Err(Failure::new(FINUFFT_ERR_HORNER_WRONG_BETA,
                                    format!("opts.upsampfac = {u} with gpu_kerevalmeth = 1: as cuFINUFFT, only 1.25 and 2.0 (or 0 for automatic); \
                                             set gpu_kerevalmeth = 0 for other upsampling factors")));
        }
        if u <= 1.0 {
            return Err(Failure::new(FINUFFT_ERR_UPSAMPFAC_TOO_SMALL, format!("opts.upsampfac = {u} is not > 1.0 (or 0 for automatic)")));
        }
        if u.is_nan() || u > 4.0 {
            return Err(Failure::new(FINUFFT_ERR_HORNER_WRONG_BETA,
                                    format!("opts.upsampfac = {u}: farfield's kernels cover upsampling factors in (1, 4] (or 0 for automatic)")));
        }
    }
    if !(0..=3).contains(&o.gpu_method) {
        return Err(Failure::new(FINUFFT_ERR_INSUFFICIENT_SHMEM, format!("opts.gpu_method = {} is not 0, 1, 2 or 3", o.gpu_method)));
    }
    if o.gpu_spreadinterponly != 0 {
        return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT,
                                "opts.gpu_spreadinterponly: spreading or interpolation alone is not supported by farfield's cuFINUFFT library"));
    }
    if o.gpu_device_id != 0 {
        return Err(Failure::new(FINUFFT_ERR_CUDA_FAILURE,
                                format!("opts.gpu_device_id = {}: farfield's CUDA plans run on device 0 only (select the device with CUDA_VISIBLE_DEVICES)", o.gpu_device_id)));
    }
    Ok(())
}

/// The farfield method of `gpu_method` / `gpu_sort` (`None` = farfield's automatic choice).
pub fn method(o: &cufinufft_opts) -> Option<GpuMethod> {
    match o.gpu_method {
        1 if o.gpu_sort == 0 => Some(GpuMethod::Gm),
        1 => Some(GpuMethod::GmSort),
        2 => Some(GpuMethod::Sm),
        _ => None,
    }
}

/// farfield's options for validated cuFINUFFT options (backend CUDA).
pub fn to_nufft_opts(o: &cufinufft_opts) -> NufftOpts {
    NufftOpts {
        modeord: if o.modeord == 1 { ModeOrder::Fft } else { ModeOrder::Cmcl },
        debug: o.debug.max(0) as u32,
        upsampfac: if o.upsampfac == 0.0 { None } else { Some(o.upsampfac) },
        backend: BackendChoice::Cuda,
        gpu_method: method(o),
        // SAFETY: the caller of cufinufft_makeplan promises (cuFINUFFT's contract) a valid
        // stream of the device that outlives the plan.
        gpu_stream: unsafe { GpuStream::from_raw(o.gpu_stream as u64) },
        ..NufftOpts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layout_is_cufinufft_2_5() {
        assert_eq!(size_of::<cufinufft_opts>(), 88);
        let offs = [
            offset_of!(cufinufft_opts, upsampfac),
            offset_of!(cufinufft_opts, gpu_method),
            offset_of!(cufinufft_opts, gpu_sort),
            offset_of!(cufinufft_opts, gpu_binsizex),
            offset_of!(cufinufft_opts, gpu_binsizey),
            offset_of!(cufinufft_opts, gpu_binsizez),
            offset_of!(cufinufft_opts, gpu_obinsizex),
            offset_of!(cufinufft_opts, gpu_obinsizey),
            offset_of!(cufinufft_opts, gpu_obinsizez),
            offset_of!(cufinufft_opts, gpu_maxsubprobsize),
            offset_of!(cufinufft_opts, gpu_kerevalmeth),
            offset_of!(cufinufft_opts, gpu_spreadinterponly),
            offset_of!(cufinufft_opts, gpu_maxbatchsize),
            offset_of!(cufinufft_opts, gpu_device_id),
            offset_of!(cufinufft_opts, gpu_stream),
            offset_of!(cufinufft_opts, modeord),
            offset_of!(cufinufft_opts, gpu_np),
            offset_of!(cufinufft_opts, debug),
        ];
        assert_eq!(offs, [0, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 64, 72, 76, 80]);
    }

    #[test]
    fn validation_codes() {
        let with = |f: &dyn Fn(&mut cufinufft_opts)| {
            let mut o = default_opts();
            f(&mut o);
            validate(&o).map_err(|e| e.ier)
        };
        assert_eq!(with(&|_| ()), Ok(()));
        // with the default gpu_kerevalmeth = 1: 1.25 and 2.0 only
        assert_eq!(with(&|o| o.upsampfac = 1.0), Err(8));
        assert_eq!(with(&|o| o.upsampfac = 1.5), Err(8));
        assert_eq!(with(&|o| o.upsampfac = f64::NAN), Err(8));
        assert_eq!(with(&|o| o.upsampfac = 1.25), Ok(()));
        assert_eq!(with(&|o| o.upsampfac = 2.0), Ok(()));
        // gpu_kerevalmeth = 0: any factor in (1, 4]
        assert_eq!(with(&|o| { o.gpu_kerevalmeth = 0; o.upsampfac = 1.0 }), Err(7));
        assert_eq!(with(&|o| { o.gpu_kerevalmeth = 0; o.upsampfac = 1.5 }), Ok(()));
        assert_eq!(with(&|o| { o.gpu_kerevalmeth = 0; o.upsampfac = 5.0 }), Err(8));
        assert_eq!(with(&|o| { o.gpu_kerevalmeth = 0; o.upsampfac = f64::NAN }), Err(8));
        assert_eq!(with(&|o| o.gpu_method = 4), Err(19));
        assert_eq!(with(&|o| o.gpu_method = -1), Err(19));
        assert_eq!(with(&|o| o.gpu_spreadinterponly = 1), Err(21));
        assert_eq!(with(&|o| o.gpu_device_id = 1), Err(15));
        // ignored fields are accepted
        assert_eq!(with(&|o| { o.gpu_binsizex = 7; o.gpu_maxbatchsize = 3; o.gpu_kerevalmeth = 0; o.gpu_np = 9 }), Ok(()));
    }

    #[test]
    fn mapping_onto_farfield_options() {
        let mut o = default_opts();
        let n = to_nufft_opts(&o);
        assert_eq!((n.modeord, n.backend, n.gpu_method, n.gpu_stream, n.upsampfac), (ModeOrder::Cmcl, BackendChoice::Cuda, None, None, None));
        o.modeord = 1;
        o.upsampfac = 1.25;
        o.debug = 1;
        o.gpu_method = 1;
        let n = to_nufft_opts(&o);
        assert_eq!((n.modeord, n.upsampfac, n.debug, n.gpu_method), (ModeOrder::Fft, Some(1.25), 1, Some(GpuMethod::GmSort)));
        o.gpu_sort = 0;
        assert_eq!(method(&o), Some(GpuMethod::Gm));
        o.gpu_method = 2;
        assert_eq!(method(&o), Some(GpuMethod::Sm));
        o.gpu_method = 3;
        assert_eq!(method(&o), None);
        o.gpu_stream = 0x1234 as *mut c_void;
        assert_eq!(to_nufft_opts(&o).gpu_stream.map(|s| s.as_raw()), Some(0x1234));
    }
}
