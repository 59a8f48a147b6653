//! CUDA driver and device discovery through cudarc (dynamic loading: the library builds and
//! runs without CUDA installed), and the backend choice of the plans.
//!
//! cudarc panics when a library it needs cannot be loaded (`CudaContext::new` without a
//! driver; docs/design.md §5.1), so every path here first asks `is_culib_present()` and runs the
//! remaining driver calls under `catch_unwind`: discovery never panics and never aborts.

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use std::sync::OnceLock;

/// Shared-library names cudarc searches for the driver (for messages).
pub const DRIVER_LIBS: &str = "libcuda.so, libcuda.so.1 (the NVIDIA driver) on the dynamic loader path";

/// One CUDA device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Ordinal.
    pub ordinal: usize,
    /// Name reported by the driver.
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
}

/// What discovery found: devices, or why there are none (a message naming what was looked for).
pub type Discovery = std::result::Result<Vec<DeviceInfo>, String>;

fn catch<R>(f: impl FnOnce() -> R) -> std::result::Result<R, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic in the CUDA driver bindings".into())
    })
}

/// Whether the CUDA driver library can be loaded (never panics).
pub fn driver_present() -> bool {
    // SAFETY: is_culib_present only tries to dlopen the library.
    catch(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false)
}

/// Whether NVRTC can be loaded (never panics).
pub fn nvrtc_present() -> bool {
    // SAFETY: as above.
    catch(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false)
}

/// Whether cuFFT can be loaded (never panics).
pub fn cufft_present() -> bool {
    // SAFETY: as above.
    catch(|| unsafe { cudarc::cufft::sys::is_culib_present() }).unwrap_or(false)
}

fn discover_uncached() -> Discovery {
    if std::env::var_os("FARFIELD_DISABLE_CUDA").is_some_and(|v| v != "0") {
        return Err("CUDA disabled by FARFIELD_DISABLE_CUDA".into());
    }
    if !driver_present() {
        return Err(format!("no CUDA driver library found (looked for {DRIVER_LIBS})"));
    }
    let count = catch(cudarc::driver::CudaContext::device_count)
        .map_err(|p| format!("CUDA driver present but unusable: {p}"))?
        .map_err(|e| format!("CUDA driver present but cuInit/cuDeviceGetCount failed: {e:?}"))?;
    if count <= 0 {
        return Err("CUDA driver present but it reports no devices".into());
    }
    let mut out = Vec::new();
    for ordinal in 0..count as usize {
        // device queries need no context: discovery neither creates nor tears down one (the
        // primary context is retained once, by the device registry of `super::cuda`)
        let info = catch(|| -> std::result::Result<DeviceInfo, String> {
            use cudarc::driver::{result, sys::CUdevice_attribute as A};
            let dev = result::device::get(ordinal as i32).map_err(|e| format!("{e:?}"))?;
            let name = result::device::get_name(dev).map_err(|e| format!("{e:?}"))?;
            // SAFETY: dev is a valid device handle (cuInit ran in device_count).
            let att = |a| unsafe { result::device::get_attribute(dev, a) }.map_err(|e| format!("{e:?}"));
            let cc = (att(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?, att(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?);
            Ok(DeviceInfo { ordinal, name, compute_capability: cc })
        });
        match info {
            Ok(Ok(i)) => out.push(i),
            Ok(Err(e)) | Err(e) => return Err(format!("CUDA device {ordinal} could not be opened: {e}")),
        }
    }
    Ok(out)
}

/// The CUDA devices of this machine (discovered once per process; never panics).
pub fn discover() -> &'static Discovery {
    static D: OnceLock<Discovery> = OnceLock::new();
    D.get_or_init(discover_uncached)
}

/// Resolves a plan's backend choice, once at makeplan, for a plan kind `what` (named in the
/// error, e.g. "NUFFT plans"):
///
/// * AUTO and CPU → the CPU (AUTO will choose a device for a method once its GPU path has been
///   timed against the CPU on hardware, docs/design.md §5);
/// * CUDA → device 0 when the driver and a device are found, else [`Error::NoDevice`] naming
///   `what` and what was looked for.
pub fn resolve(choice: BackendChoice, what: &str) -> Result<Backend> {
    match choice {
        BackendChoice::Auto | BackendChoice::Cpu => Ok(Backend::Cpu),
        BackendChoice::Cuda => match discover() {
            Err(why) => Err(Error::NoDevice(format!("opts.backend = CUDA for {what}: {why}"))),
            Ok(d) if d.is_empty() => Err(Error::NoDevice(format!("opts.backend = CUDA for {what}: no CUDA device"))),
            Ok(_) => Ok(Backend::Cuda),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_never_panics_and_backends_resolve() {
        let d = discover();
        assert_eq!(resolve(BackendChoice::Cpu, "x").unwrap(), Backend::Cpu);
        assert_eq!(resolve(BackendChoice::Auto, "x").unwrap(), Backend::Cpu);
        match d {
            Err(why) => match resolve(BackendChoice::Cuda, "NUFFT plans") {
                // no driver/device: CUDA names what was looked for
                Err(Error::NoDevice(m)) => assert!(m.contains(why.as_str()) && m.contains("NUFFT"), "{m}"),
                other => panic!("{other:?}"),
            },
            Ok(devs) => {
                assert!(!devs.is_empty());
                assert_eq!(resolve(BackendChoice::Cuda, "x").unwrap(), Backend::Cuda);
            }
        }
    }
}
