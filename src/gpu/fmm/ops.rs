//! (stub; replaced by the operators)
use super::{DeviceTree, Expansions, SortedOut};
use crate::error::{Error, Result};
use crate::gpu::device::Device;
use std::marker::PhantomData;
/// stub
pub struct OpTables<D: Device>(PhantomData<D>);
impl<D: Device> OpTables<D> {
    /// stub
    pub fn new(_dev: &D, _p: usize) -> Result<Self> {
        Ok(OpTables(PhantomData))
    }
}
/// stub
pub fn upward<D: Device>(_dev: &D, _t: &OpTables<D>, _tree: &DeviceTree<D>, _top: usize) -> Result<Expansions<D>> {
    Err(Error::NotSupported("stub".into()))
}
/// stub
pub fn downward<D: Device>(_dev: &D, _t: &OpTables<D>, _tree: &DeviceTree<D>, _loc: &mut Expansions<D>) -> Result<()> {
    Err(Error::NotSupported("stub".into()))
}
/// stub
pub fn l2p<D: Device>(_dev: &D, _t: &OpTables<D>, _tree: &DeviceTree<D>, _loc: &Expansions<D>, _out: &mut SortedOut<D>) -> Result<()> {
    Err(Error::NotSupported("stub".into()))
}
/// stub
pub struct P2pLists<D: Device>(PhantomData<D>);
/// stub
pub fn p2p_lists<D: Device>(_dev: &D, _tree: &DeviceTree<D>) -> Result<P2pLists<D>> {
    Err(Error::NotSupported("stub".into()))
}
/// stub
pub fn p2p<D: Device>(_dev: &D, _tree: &DeviceTree<D>, _lists: &P2pLists<D>, _out: &mut SortedOut<D>) -> Result<()> {
    Err(Error::NotSupported("stub".into()))
}
/// stub
pub fn finish<D: Device>(_dev: &D, _tree: &DeviceTree<D>, _out: &mut SortedOut<D>, _phi: Option<&mut D::Buf>, _field: Option<&mut D::Buf>) -> Result<f64> {
    Err(Error::NotSupported("stub".into()))
}
