//! (stub; replaced by M2L)
use super::{DeviceTree, Expansions};
use crate::error::{Error, Result};
use crate::gpu::device::Device;
use std::marker::PhantomData;
/// stub
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum M2lMethod {
    /// stub
    Plain,
    /// stub
    #[default]
    Symmetric,
}
/// stub
pub struct M2lTables<D: Device>(PhantomData<D>);
impl<D: Device> M2lTables<D> {
    /// stub
    pub fn new(_dev: &D, _p: usize, _periodic: bool) -> Result<Self> {
        Ok(M2lTables(PhantomData))
    }
}
/// stub
pub struct M2lLists<D: Device>(PhantomData<D>);
/// stub
pub fn m2l_lists<D: Device>(_dev: &D, _tree: &DeviceTree<D>, _top: usize) -> Result<M2lLists<D>> {
    Err(Error::NotSupported("stub".into()))
}
/// stub
pub fn m2l<D: Device>(_dev: &D, _t: &M2lTables<D>, _lists: &M2lLists<D>, _tree: &DeviceTree<D>, _mp: &Expansions<D>, _method: M2lMethod) -> Result<Expansions<D>> {
    Err(Error::NotSupported("stub".into()))
}
