//! PNG figures: plotters' bitmap backend draws into an RGB buffer ([`Canvas`]), which the `png`
//! crate writes (plotters' own encoder would bring the `image` crate and its JPEG decoder, 26 s
//! of a clean build's CPU time on a 2-core EPYC, for one PNG writer). Text uses the DejaVu Sans font
//! embedded in the binary (`assets/DejaVuSans.ttf`, see `assets/DejaVuSans-LICENSE.txt`), so no
//! system font library is needed.

use crate::demo::mri::Trajectory;
use crate::npy::Image;
use crate::CliResult;
use num_complex::Complex64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::f64::consts::PI;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers the embedded font as "sans-serif" (once per process).
pub fn register_fonts() -> CliResult<()> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        if plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            result = Err("the embedded font could not be loaded".to_string());
        }
    });
    result
}

/// An RGB image (8 bits per channel, rows top to bottom) that plotters draws into and that is
/// written as a PNG file.
pub struct Canvas {
    rgb: Vec<u8>,
    size: (u32, u32),
}

impl Canvas {
    /// A white canvas of `size` = (width, height) pixels.
    pub fn new(size: (u32, u32)) -> Self {
        Canvas { rgb: vec![255; 3 * size.0 as usize * size.1 as usize], size }
    }

    /// plotters' drawing area on the canvas (drawn pixels land when it is presented or dropped).
    pub fn area(&mut self) -> DrawingArea<BitMapBackend<'_>, plotters::coord::Shift> {
        BitMapBackend::with_buffer(&mut self.rgb, self.size).into_drawing_area()
    }

    /// Writes the canvas to `path` as an 8-bit RGB PNG.
    pub fn save(&self, path: &Path) -> CliResult<()> {
        let failed = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
        let file = std::fs::File::create(path).map_err(|e| failed(&e))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.size.0, self.size.1);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc.write_header().map_err(|e| failed(&e))?;
        w.write_image_data(&self.rgb).map_err(|e| failed(&e))?;
        w.finish().map_err(|e| failed(&e))
    }
}

/// What the MRI figure shows.
pub struct MriFigure<'a> {
    /// The ground truth.
    pub original: &'a Image,
    /// The sampling trajectory.
    pub traj: &'a Trajectory,
    /// Adjoint reconstruction (before scaling) and the scale to apply.
    pub adjoint: &'a [Complex64],
    /// Least-squares scale of the adjoint.
    pub adjoint_scale: f64,
    /// Its relative error after scaling.
    pub adjoint_error: f64,
    /// CG reconstruction.
    pub cg: &'a [Complex64],
    /// Its relative error.
    pub cg_error: f64,
    /// CG iterations run.
    pub cg_iters: usize,
    /// How many spokes to draw in the k-space panel.
    pub show_spokes: usize,
}

const PANEL: u32 = 360;
const TITLE_H: u32 = 40;

/// A plotting error as the tool's message.
pub fn err<E: std::fmt::Display>(e: E) -> String {
    format!("plotting: {e}")
}

/// Grey value of `v` in the display window `[0, vmax]`.
fn grey(v: f64, vmax: f64) -> RGBColor {
    let g = (v / vmax).clamp(0.0, 1.0) * 255.0;
    let g = g.round() as u8;
    RGBColor(g, g, g)
}

/// Draws a row-major `rows × cols` image into `area` (nearest neighbour, aspect kept, centred).
fn draw_image<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, rows: usize, cols: usize,
                                  value: impl Fn(usize, usize) -> f64, vmax: f64) -> CliResult<()> {
    let (w, h) = area.dim_in_pixel();
    let scale = (w as f64 / cols as f64).min(h as f64 / rows as f64);
    let (dw, dh) = ((cols as f64 * scale) as i32, (rows as f64 * scale) as i32);
    let (ox, oy) = ((w as i32 - dw) / 2, (h as i32 - dh) / 2);
    for py in 0..dh {
        let row = ((py as f64 / scale) as usize).min(rows - 1);
        for px in 0..dw {
            let col = ((px as f64 / scale) as usize).min(cols - 1);
            area.draw_pixel((ox + px, oy + py), &grey(value(row, col), vmax)).map_err(err)?;
        }
    }
    Ok(())
}

/// Writes the MRI figure: original | k-space samples | adjoint | CG, with titles.
pub fn mri_figure(path: &Path, fig: &MriFigure) -> CliResult<()> {
    register_fonts()?;
    let mut canvas = Canvas::new((4 * PANEL + 5 * 10, PANEL + TITLE_H + 50));
    draw_mri(canvas.area(), fig)?;
    canvas.save(path)
}

/// The MRI figure's panels on `root`.
fn draw_mri(root: DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>, fig: &MriFigure) -> CliResult<()> {
    let im = fig.original;
    let (rows, cols) = (im.rows, im.cols);
    root.fill(&WHITE).map_err(err)?;
    let root = root
        .titled("farfield demo: radial MRI reconstruction with the 2D NUFFT (type 2 forward, type 1 adjoint)",
                ("sans-serif", 22).into_font().color(&BLACK))
        .map_err(err)?;
    let root = root.margin(0, 10, 10, 10);
    let panels = root.split_evenly((1, 4));
    let vmax = im.data.iter().cloned().fold(0.0f64, f64::max).max(f64::MIN_POSITIVE);
    let title_font = ("sans-serif", 17).into_font().color(&BLACK);

    // 1. original
    let a = panels[0].titled(&format!("original ({rows}x{cols})"), title_font.clone()).map_err(err)?;
    draw_image(&a.margin(5, 5, 5, 5), rows, cols, |r, c| im.at(r, c), vmax)?;

    // 2. k-space samples: the first spokes of the golden-angle sequence
    let t = fig.traj;
    let ns = fig.show_spokes.min(t.n_spokes());
    let a = panels[1]
        .titled(&format!("k-space: first {ns} of {} spokes", t.n_spokes()), title_font.clone())
        .map_err(err)?;
    // keep the plotting area square
    let (lx, ly, mg) = (30u32, 40u32, 8u32);
    let (w, h) = a.dim_in_pixel();
    let side = (w.saturating_sub(ly + 2 * mg)).min(h.saturating_sub(lx + 2 * mg));
    let (cw, ch) = (side + ly + 2 * mg, side + lx + 2 * mg);
    let a = a.shrink(((w - cw) / 2, (h - ch) / 2), (cw, ch));
    let mut chart = ChartBuilder::on(&a)
        .margin(mg)
        .x_label_area_size(lx)
        .y_label_area_size(ly)
        .build_cartesian_2d(-PI..PI, -PI..PI)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("kx (rad/pixel)")
        .y_desc("ky")
        .label_style(("sans-serif", 12))
        .x_labels(5)
        .y_labels(5)
        .draw()
        .map_err(err)?;
    let nr = t.n_readout;
    let dot_every = (nr / 48).max(1);
    for s in 0..ns {
        let colour = HSLColor(0.75 * s as f64 / ns.max(1) as f64, 0.85, 0.45);
        let pts = (s * nr..(s + 1) * nr).map(|i| (t.kx[i], t.ky[i]));
        chart.draw_series(LineSeries::new(pts, colour.mix(0.35))).map_err(err)?;
        chart
            .draw_series((s * nr..(s + 1) * nr).step_by(dot_every).map(|i| Circle::new((t.kx[i], t.ky[i]), 2, colour.filled())))
            .map_err(err)?;
    }

    // 3. adjoint with density compensation (scaled), 4. CG (unscaled); magnitudes
    let a = panels[2]
        .titled(&format!("adjoint + ramp DCF (error {:.3})", fig.adjoint_error), title_font.clone())
        .map_err(err)?;
    draw_image(&a.margin(5, 5, 5, 5), rows, cols, |r, c| fig.adjoint[r * cols + c].norm() * fig.adjoint_scale, vmax)?;
    let a = panels[3]
        .titled(&format!("CG, {} iterations (error {:.3})", fig.cg_iters, fig.cg_error), title_font)
        .map_err(err)?;
    draw_image(&a.margin(5, 5, 5, 5), rows, cols, |r, c| fig.cg[r * cols + c].norm(), vmax)?;

    root.present().map_err(err)
}
