//! Precomputed rotation and translation tables of the rotation-based ("point and shoot") M2L
//! operator (White & Head-Gordon, J. Chem. Phys. 105, 5061 (1996); Greengard & Rokhlin,
//! Acta Numerica 6 (1997)): rotate the multipole expansion so that the translation vector is
//! the +z axis, translate along z (which couples only equal `m`, O(p³)), rotate back.
//!
//! The M2L offsets of one well-separated layer are the integer vectors `v = (c_t − c_s)/h`
//! with `max|v_i| ∈ {2, 3}` (316 of them; 189 per target box). A rotation
//! `Q = R_y(−θ) R_z(−φ)` (θ, φ the polar and azimuthal angles of `v`) maps `v` to `|v| ẑ`.
//! The z-rotation is diagonal (`O_lm(R_z(α) r) = e^{imα} O_lm(r)`), so per direction only the
//! phases `e^{−imφ}` are stored, while the dense part — the y-rotation — depends only on θ:
//! directions with the same `(v_z, |v|²)` share one table (the azimuthal symmetry of the
//! operator set, cf. the seed paper §3.3.5). The z-translation coefficients `n!/|v|^{n+1}`
//! depend only on `|v|²`.
//!
//! The y-rotation coefficients `A_{l m m'}(α)`, defined by `O_lm(R_y(α) r) = Σ_{m'} A_{lmm'}
//! O_{lm'}(r)`, are real. They are obtained from `R_y(α) = Q R_z(α) Q⁻¹` with the fixed
//! `Q = R_x(−π/2)` (the factorisation behind the "Δ-matrix" methods for Wigner matrices):
//! `A(R_y(α)) = A(Q) diag(e^{ikα}) A(Q⁻¹)`, O(p⁴) per angle. `A(Q)` and `A(Q⁻¹)` are computed
//! once per order by projecting the rotated harmonics onto the unrotated ones with a
//! quadrature on the unit sphere that is exact for the degree-`2p` products (Gauss–Legendre in
//! cos θ × trapezoid in φ) — an orthogonal projection, stable at any order.

use super::harmonics::{idx, ncoef, sgn, RegTables};

/// Offsets are stored at `dir_index(v) = (vx+3) + 7(vy+3) + 49(vz+3)`.
pub(crate) const NDIR: usize = 343;

/// Index of the integer offset `v` (components in −3..=3).
#[inline(always)]
pub fn dir_index(v: [i32; 3]) -> usize {
    ((v[0] + 3) + 7 * (v[1] + 3) + 49 * (v[2] + 3)) as usize
}

/// Offset of a direction index.
pub fn dir_vector(d: usize) -> [i32; 3] {
    let d = d as i32;
    [d % 7 - 3, (d / 7) % 7 - 3, d / 49 - 3]
}

/// Per-direction data.
#[derive(Debug, Clone, Default)]
pub struct Direction {
    /// Index of the y-rotation table (the polar-angle class).
    pub class: usize,
    /// `|v|²` (selects the z-translation coefficients).
    pub r2: usize,
    /// `cos(mφ)`, `m = 0..=p`.
    pub cos: Vec<f64>,
    /// `sin(mφ)`, `m = 0..=p`.
    pub sin: Vec<f64>,
}

/// The real matrices of one y-rotation, split by real and imaginary parts, for all degrees.
#[derive(Debug, Clone, Default)]
pub struct YRot {
    /// Forward (multipole) rotation; per degree `l`: the real-part matrix `(l+1)×(l+1)` row-major
    /// (`[m][m']`, `m, m' ≥ 0`) followed by the imaginary-part matrix `l×l` (`m, m' ≥ 1`).
    pub fwd: Vec<f64>,
    /// Backward (local) rotation, same layout (`[k'][k]`: output `k'`, input `k`).
    pub back: Vec<f64>,
}

/// Offset of degree `l`'s matrices inside [`YRot::fwd`] / [`YRot::back`].
#[inline(always)]
pub fn yrot_offset(l: usize) -> usize {
    // Σ_{j<l} (j+1)² + j² = l(l+1)(2l+1)/6 + (l−1)l(2l−1)/6
    (l * (l + 1) * (2 * l + 1) + if l > 0 { (l - 1) * l * (2 * l - 1) } else { 0 }) / 6
}

/// All tables of the rotation-based M2L operator of order `p`.
#[derive(Debug, Clone)]
pub struct M2lTables {
    /// Order.
    pub p: usize,
    /// Per direction index (only `max|v_i| ≥ 2` entries are filled).
    pub dirs: Vec<Direction>,
    /// y-rotation tables per polar-angle class.
    pub yrot: Vec<YRot>,
    /// `ztrans[r2][n] = n!/|v|^{n+1}`, `n ≤ 2p`, for `r2 = |v|² ≤ 27`.
    pub ztrans: Vec<Vec<f64>>,
    /// Order used for the offsets with `|v|² = r2` (distance-dependent truncation, see
    /// [`super::params::m2l_order`]); `porder[r2] ≤ p`.
    pub porder: Vec<usize>,
}

/// Coefficients of a general rotation `G` (3×3 matrix): `O_lm(G r) = Σ_{m'} A_{lmm'} O_{lm'}(r)`,
/// complex, for all `|m|, |m'| ≤ l ≤ p`, flattened as `a[l][(m+l)(2l+1) + m'+l] = [re, im]`.
/// Rows `m ≥ 0` by projection with a quadrature exact for the degree-`2p` products
/// (Gauss–Legendre × trapezoid), rows `m < 0` from `A_{l,−m,−m'} = (−1)^{m+m'} conj(A_{lmm'})`.
pub fn rotation_coefficients(p: usize, g: [[f64; 3]; 3]) -> Vec<Vec<[f64; 2]>> {
    let nq = p + 1;
    let nphi = 2 * p + 2;
    let (xq, wq) = crate::quad::gauss_legendre(nq, -1.0, 1.0);
    let nc = ncoef(p);
    let tab = RegTables::new(p);
    let mut a: Vec<Vec<[f64; 2]>> = (0..=p).map(|l| vec![[0.0; 2]; (2 * l + 1) * (2 * l + 1)]).collect();
    let mut rot = vec![0.0; 2 * nc];
    let mut orig = vec![0.0; 2 * nc];
    for i in 0..nq {
        let ct = xq[i];
        let st = (1.0 - ct * ct).max(0.0).sqrt();
        for s in 0..nphi {
            let ph = 2.0 * std::f64::consts::PI * s as f64 / nphi as f64;
            let r = [st * ph.cos(), st * ph.sin(), ct];
            let rr = [
                g[0][0] * r[0] + g[0][1] * r[1] + g[0][2] * r[2],
                g[1][0] * r[0] + g[1][1] * r[1] + g[1][2] * r[2],
                g[2][0] * r[0] + g[2][1] * r[1] + g[2][2] * r[2],
            ];
            tab.regular(rr, &mut rot);
            tab.regular(r, &mut orig);
            let w = wq[i] * 2.0 * std::f64::consts::PI / nphi as f64;
            for l in 0..=p {
                let li = l as i64;
                let n = 2 * l + 1;
                for m in 0..=l {
                    let (fr, fi) = (rot[idx(l, m)], rot[nc + idx(l, m)]);
                    let row = (m + l) * n;
                    for mp in -li..=li {
                        let j = idx(l, mp.unsigned_abs() as usize);
                        let (mut gr, mut gi) = (orig[j], orig[nc + j]);
                        if mp < 0 {
                            let sg = sgn(mp);
                            gr *= sg;
                            gi *= -sg;
                        }
                        // f · conj(g)
                        let e = &mut a[l][row + (mp + li) as usize];
                        e[0] += w * (fr * gr + fi * gi);
                        e[1] += w * (fi * gr - fr * gi);
                    }
                }
            }
        }
    }
    // divide by the norms ∫|O_lm'|² dΩ = 4π / ((2l+1)(l+m')!(l−m')!); negative rows by symmetry
    let fact = super::harmonics::factorials(2 * p + 1);
    for l in 0..=p {
        let li = l as i64;
        let n = 2 * l + 1;
        for m in 0..=li {
            for mp in -li..=li {
                let norm = 4.0 * std::f64::consts::PI / ((2 * l + 1) as f64 * fact[(li + mp) as usize] * fact[(li - mp) as usize]);
                let e = &mut a[l][(m + li) as usize * n + (mp + li) as usize];
                e[0] /= norm;
                e[1] /= norm;
            }
        }
        for m in 1..=li {
            for mp in -li..=li {
                let v = a[l][(m + li) as usize * n + (mp + li) as usize];
                let sg = sgn(m + mp);
                a[l][(-m + li) as usize * n + (-mp + li) as usize] = [sg * v[0], -sg * v[1]];
            }
        }
    }
    a
}

/// The fixed rotations `Q = R_x(−π/2)` (which maps z to y) and `Q⁻¹`, whose coefficient
/// matrices turn any y-rotation into a diagonal z-rotation: `R_y(α) = Q R_z(α) Q⁻¹`.
pub struct YRotBasis {
    p: usize,
    q: Vec<Vec<[f64; 2]>>,
    qinv: Vec<Vec<[f64; 2]>>,
}

impl YRotBasis {
    /// Projects the two fixed rotations (O(p⁵) once per order).
    pub fn new(p: usize) -> Self {
        // R_x(α) = [[1,0,0],[0,cos α,−sin α],[0,sin α,cos α]]
        let q = rotation_coefficients(p, [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]);
        let qinv = rotation_coefficients(p, [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]);
        YRotBasis { p, q, qinv }
    }

    /// `A[l][m(2l+1) + m' + l]`, `m ≥ 0`: the (real) coefficients of `O_lm(R_y(α) r)` in the
    /// `O_{lm'}(r)` basis, `A(R_y(α)) = A(Q)·diag(e^{ikα})·A(Q⁻¹)` (O(p⁴) per angle).
    pub fn yrotation(&self, alpha: f64) -> Vec<Vec<f64>> {
        let p = self.p;
        (0..=p)
            .map(|l| {
                let li = l as i64;
                let n = 2 * l + 1;
                let ph: Vec<[f64; 2]> = (-li..=li).map(|k| [(k as f64 * alpha).cos(), (k as f64 * alpha).sin()]).collect();
                let mut out = vec![0.0; (l + 1) * n];
                for m in 0..=l {
                    // row m of A(Q) times the phases
                    let qrow: Vec<[f64; 2]> = (0..n)
                        .map(|k| {
                            let a = self.q[l][(m + l) * n + k];
                            [a[0] * ph[k][0] - a[1] * ph[k][1], a[0] * ph[k][1] + a[1] * ph[k][0]]
                        })
                        .collect();
                    for mp in 0..n {
                        let mut re = 0.0;
                        for (k, qa) in qrow.iter().enumerate() {
                            let b = self.qinv[l][k * n + mp];
                            re += qa[0] * b[0] - qa[1] * b[1];
                        }
                        out[m * n + mp] = re;
                    }
                }
                out
            })
            .collect()
    }
}

/// Builds the forward/backward real matrices of the y-rotation by `α` (see [`YRot`]).
pub fn yrot_tables(basis: &YRotBasis, alpha: f64) -> YRot {
    let p = basis.p;
    let a = basis.yrotation(alpha);
    let at = |l: usize, m: i64, mp: i64| -> f64 {
        // rows with negative m from A_{l,−m,−m'} = (−1)^{m+m'} A_{l m m'}
        let li = l as i64;
        if m >= 0 {
            a[l][m as usize * (2 * l + 1) + (mp + li) as usize]
        } else {
            sgn(m + mp) * a[l][(-m) as usize * (2 * l + 1) + (-mp + li) as usize]
        }
    };
    let total = yrot_offset(p + 1);
    let mut fwd = vec![0.0; total];
    let mut back = vec![0.0; total];
    for l in 0..=p {
        let off = yrot_offset(l);
        let n1 = l + 1;
        let li = l as i64;
        // forward: real part matrix [m][m']
        for m in 0..=li {
            for mp in 0..=li {
                let v = if mp == 0 { at(l, m, 0) } else { at(l, m, mp) + sgn(mp) * at(l, m, -mp) };
                fwd[off + m as usize * n1 + mp as usize] = v;
                // backward: [k'][k] with k' = m (output), k = mp (input)
                let (kp, k) = (m, mp);
                let vb = if k == 0 { at(l, 0, kp) } else { at(l, k, kp) + sgn(k) * at(l, -k, kp) };
                back[off + kp as usize * n1 + k as usize] = vb;
            }
        }
        let off2 = off + n1 * n1;
        for m in 1..=li {
            for mp in 1..=li {
                fwd[off2 + (m - 1) as usize * l + (mp - 1) as usize] = at(l, m, mp) - sgn(mp) * at(l, m, -mp);
                let (kp, k) = (m, mp);
                back[off2 + (kp - 1) as usize * l + (k - 1) as usize] = at(l, k, kp) - sgn(k) * at(l, -k, kp);
            }
        }
    }
    YRot { fwd, back }
}

/// Tables of the rotation-based M2M and L2L operators: the eight child offsets
/// `d = (c_child − c_parent)/h_parent = ((o_x − ½)/2, (o_y − ½)/2, (o_z − ½)/2)` all have length
/// `ρ = √3/4` and one of two polar angles (`o_z = 1`: `θ₀ = arccos(1/√3)`, `o_z = 0`: `π − θ₀`),
/// so four y-rotation tables (`∓θ` per class) serve all of them. In the frame where `d` is the
/// z axis the translations couple only equal `m`:
/// M2M `ω'^P_lm = Σ_{j=m}^{l} 2^{−j} ρ^{l−j}/(l−j)! ω'^C_jm`, L2L `μ'^C_jk = 2^{−(j+1)}
/// Σ_{l=j}^{p} ρ^{l−j}/(l−j)! μ'^P_lk` (box units, see [`super::m2m`], [`super::l2l`]).
#[derive(Debug, Clone)]
pub struct ChildTables {
    /// Order.
    pub p: usize,
    /// Per octant: `cos(mφ)`, `sin(mφ)` (`Direction::class` = `o_z`).
    pub oct: Vec<Direction>,
    /// Per class `o_z`: the y-rotation by `−θ` (into the frame of `d`).
    pub minus: Vec<YRot>,
    /// Per class `o_z`: the y-rotation by `+θ` (out of the frame of `d`).
    pub plus: Vec<YRot>,
    /// `m2m[l(p+1) + j] = 2^{−j} ρ^{l−j}/(l−j)!`, `j ≤ l`.
    pub m2m: Vec<f64>,
    /// `l2l[j(p+1) + l] = 2^{−(j+1)} ρ^{l−j}/(l−j)!`, `l ≥ j`.
    pub l2l: Vec<f64>,
}

impl ChildTables {
    /// Tables for order `p`.
    pub fn new(p: usize) -> Self {
        Self::with_basis(&YRotBasis::new(p))
    }

    /// Tables for the order of `basis`.
    pub fn with_basis(basis: &YRotBasis) -> Self {
        let p = basis.p;
        let t0 = (1.0 / 3f64.sqrt()).acos();
        let thetas = [std::f64::consts::PI - t0, t0];
        let minus = thetas.iter().map(|&t| yrot_tables(basis, -t)).collect();
        let plus = thetas.iter().map(|&t| yrot_tables(basis, t)).collect();
        let oct = (0..8)
            .map(|o| {
                let (dx, dy) = ((o & 1) as f64 - 0.5, ((o >> 1) & 1) as f64 - 0.5);
                let phi = dy.atan2(dx);
                Direction {
                    class: (o >> 2) & 1,
                    r2: 0,
                    cos: (0..=p).map(|m| (m as f64 * phi).cos()).collect(),
                    sin: (0..=p).map(|m| (m as f64 * phi).sin()).collect(),
                }
            })
            .collect();
        let rho = 3f64.sqrt() / 4.0;
        let fact = super::harmonics::factorials(p + 1);
        let n = p + 1;
        let mut m2m = vec![0.0; n * n];
        let mut l2l = vec![0.0; n * n];
        for l in 0..=p {
            for j in 0..=l {
                let t = rho.powi((l - j) as i32) / fact[l - j];
                m2m[l * n + j] = 0.5f64.powi(j as i32) * t;
                l2l[j * n + l] = 0.5f64.powi(j as i32 + 1) * t;
            }
        }
        ChildTables { p, oct, minus, plus, m2m, l2l }
    }
}

impl M2lTables {
    /// Tables for order `p` (all 316 offsets of one well-separated layer), with the
    /// distance-dependent orders of [`super::params::m2l_order`].
    pub fn new(p: usize) -> Self {
        Self::with_basis(&YRotBasis::new(p))
    }

    /// [`Self::new`] for the order of `basis`.
    pub fn with_basis(basis: &YRotBasis) -> Self {
        let p = basis.p;
        Self::with_orders_basis(basis, |r2| super::params::m2l_order(p, r2))
    }

    /// Tables for order `p` with the order `porder(|v|²) ≤ p` per offset distance.
    pub fn with_orders(p: usize, porder: impl Fn(usize) -> usize) -> Self {
        Self::with_orders_basis(&YRotBasis::new(p), porder)
    }

    fn with_orders_basis(basis: &YRotBasis, porder: impl Fn(usize) -> usize) -> Self {
        let p = basis.p;
        let fact = super::harmonics::factorials(2 * p + 1);
        let mut dirs = vec![Direction::default(); NDIR];
        let mut classes: Vec<(i32, i32)> = Vec::new(); // (v_z, |v|²)
        let mut yrot = Vec::new();
        for (d, dir) in dirs.iter_mut().enumerate() {
            let v = dir_vector(d);
            if v.iter().map(|c| c.abs()).max().unwrap_or(0) < 2 {
                continue;
            }
            let r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            let key = (v[2], r2);
            let class = match classes.iter().position(|&c| c == key) {
                Some(c) => c,
                None => {
                    let theta = (v[2] as f64 / (r2 as f64).sqrt()).clamp(-1.0, 1.0).acos();
                    yrot.push(yrot_tables(basis, -theta));
                    classes.push(key);
                    classes.len() - 1
                }
            };
            let phi = (v[1] as f64).atan2(v[0] as f64);
            dir.class = class;
            dir.r2 = r2 as usize;
            dir.cos = (0..=p).map(|m| (m as f64 * phi).cos()).collect();
            dir.sin = (0..=p).map(|m| (m as f64 * phi).sin()).collect();
        }
        let ztrans = (0..=27usize)
            .map(|r2| {
                if r2 == 0 {
                    return Vec::new();
                }
                let rho = (r2 as f64).sqrt();
                (0..=2 * p).map(|n| fact[n] / rho.powi(n as i32 + 1)).collect()
            })
            .collect();
        let porder = (0..=27usize).map(|r2| porder(r2).min(p)).collect();
        M2lTables { p, dirs, yrot, ztrans, porder }
    }
}
