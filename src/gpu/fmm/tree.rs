//! (stub; replaced by the device tree)
use super::DeviceTree;
use crate::error::{Error, Result};
use crate::fmm::Boundary;
use crate::gpu::device::Device;
/// stub
pub fn build<D: Device>(_dev: &D, _xyz: &D::Buf, _q: &D::Buf, _n: usize, _boundary: Boundary, _p: usize, _depth: Option<usize>) -> Result<DeviceTree<D>> {
    Err(Error::NotSupported("stub".into()))
}
