//! Per-phase device timings of one call, for the `opts.debug > 0` prints of the CUDA plans
//! (NUFFT execute, Ewald k-space and real space): device-event marks recorded in stream order
//! at the end of each phase ([`Device::mark`]), and one stderr line per call,
//! `[farfield <tag>] <what>: <phase> <ms> … | total <ms> ms`. Off: no events, no cost.

use crate::error::Result;
use crate::gpu::device::Device;

/// Marks at the ends of the phases of one call (module docs).
pub(crate) struct Phases<D: Device> {
    dev: Option<D>,
    tag: &'static str,
    marks: Vec<(&'static str, D::Mark)>,
}

impl<D: Device> Phases<D> {
    /// Starts the timing when `on`; `tag` names the plan in the printed line.
    pub(crate) fn start(dev: &D, on: bool, tag: &'static str) -> Result<Self> {
        let mut p = Phases { dev: on.then(|| dev.clone()), tag, marks: Vec::new() };
        p.end("start")?;
        Ok(p)
    }

    /// Marks the end of phase `name` (in stream order).
    pub(crate) fn end(&mut self, name: &'static str) -> Result<()> {
        if let Some(d) = &self.dev {
            self.marks.push((name, d.mark()?));
        }
        Ok(())
    }

    /// Prints `[farfield <tag>] <what>: phase ms, …, total ms` to stderr (waiting for the
    /// stream to reach the last mark).
    pub(crate) fn report(&self, what: &str) -> Result<()> {
        let Some(d) = &self.dev else { return Ok(()) };
        let mut line = format!("[farfield {}] {what}:", self.tag);
        for w in self.marks.windows(2) {
            line += &format!(" {} {:.3}", w[1].0, 1e3 * d.seconds(&w[0].1, &w[1].1)?);
        }
        if let (Some(a), Some(b)) = (self.marks.first(), self.marks.last()) {
            line += &format!(" | total {:.3} ms", 1e3 * d.seconds(&a.1, &b.1)?);
        }
        eprintln!("{line}");
        Ok(())
    }
}
