//! Per-phase timings of one call, for the `opts.debug > 0` prints of the CUDA plans: device
//! time between device-event marks recorded in stream order at the end of each phase
//! ([`Phases`]: NUFFT execute, Ewald k-space and real space; [`Device::mark`]), or host wall
//! time between the ends of host stages ([`HostPhases`]: an Ewald execute on host arrays).
//! Either prints one stderr line per call, `[farfield <tag>] <what>: <phase> <ms> … | total
//! <ms> ms`. Off: nothing is recorded or printed.

use crate::error::Result;
use crate::gpu::device::Device;

/// Prints `[farfield <tag>] <what>: <phase> <ms> … | total <ms> ms` (seconds given).
fn print_line(tag: &str, what: &str, parts: &[(&str, f64)], total: f64) {
    let mut line = format!("[farfield {tag}] {what}:");
    for (name, s) in parts {
        line += &format!(" {name} {:.3}", 1e3 * s);
    }
    line += &format!(" | total {:.3} ms", 1e3 * total);
    eprintln!("{line}");
}

/// Device-event marks at the ends of the phases of one call (module docs).
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

    /// Prints the line (module docs), waiting for the stream to reach the last mark.
    pub(crate) fn report(&self, what: &str) -> Result<()> {
        let Some(d) = &self.dev else { return Ok(()) };
        let parts = self.marks.windows(2).map(|w| Ok((w[1].0, d.seconds(&w[0].1, &w[1].1)?))).collect::<Result<Vec<_>>>()?;
        let total = match (self.marks.first(), self.marks.last()) {
            (Some(a), Some(b)) => d.seconds(&a.1, &b.1)?,
            _ => 0.0,
        };
        print_line(self.tag, what, &parts, total);
        Ok(())
    }
}

/// Host wall time of the stages of one call (module docs).
pub(crate) struct HostPhases {
    last: Option<std::time::Instant>,
    tag: &'static str,
    parts: Vec<(&'static str, f64)>,
}

impl HostPhases {
    /// Starts the timing when `on`; `tag` names the plan in the printed line.
    pub(crate) fn start(on: bool, tag: &'static str) -> Self {
        HostPhases { last: on.then(std::time::Instant::now), tag, parts: Vec::new() }
    }

    /// Ends stage `name` (the host time since the previous end or the start).
    pub(crate) fn end(&mut self, name: &'static str) {
        if let Some(t) = &mut self.last {
            let now = std::time::Instant::now();
            self.parts.push((name, (now - *t).as_secs_f64()));
            *t = now;
        }
    }

    /// Prints the line (module docs).
    pub(crate) fn report(&self, what: &str) {
        if self.last.is_some() {
            print_line(self.tag, what, &self.parts, self.parts.iter().map(|p| p.1).sum());
        }
    }
}
