//! Reading 2D images from `.npy` files and writing arrays back (with `npyz`).
//!
//! Images are returned row-major (`data[row * cols + col]`, first array index = image row),
//! whatever the file's memory order: C-order files are copied as they are, Fortran-order
//! files (first index fastest) are transposed on reading. Any real numeric dtype is accepted
//! (float64 as documented; float32, integers and bool are converted to f64), in either byte
//! order.

use crate::CliResult;
use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::Path;

/// A real 2D image, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// Number of rows (first array index).
    pub rows: usize,
    /// Number of columns (second array index).
    pub cols: usize,
    /// `data[row * cols + col]`.
    pub data: Vec<f64>,
}

impl Image {
    /// Pixel value at (row, col).
    pub fn at(&self, row: usize, col: usize) -> f64 {
        self.data[row * self.cols + col]
    }
}

/// Reads all elements of a `.npy` payload as f64, converting from the stored dtype.
fn read_as_f64<R: Read>(npy: NpyFile<R>) -> CliResult<Vec<f64>> {
    let ts = match npy.dtype() {
        DType::Plain(ts) => ts,
        other => return Err(format!("unsupported dtype {} (need a plain real numeric array)", other.descr())),
    };
    let err = |e: std::io::Error| format!("reading .npy data: {e}");
    let v: Vec<f64> = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 8) => npy.into_vec::<f64>().map_err(err)?,
        (TypeChar::Float, 4) => npy.into_vec::<f32>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Int, 1) => npy.into_vec::<i8>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Int, 2) => npy.into_vec::<i16>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Int, 4) => npy.into_vec::<i32>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Int, 8) => npy.into_vec::<i64>().map_err(err)?.into_iter().map(|x| x as f64).collect(),
        (TypeChar::Uint, 1) => npy.into_vec::<u8>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Uint, 2) => npy.into_vec::<u16>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Uint, 4) => npy.into_vec::<u32>().map_err(err)?.into_iter().map(f64::from).collect(),
        (TypeChar::Uint, 8) => npy.into_vec::<u64>().map_err(err)?.into_iter().map(|x| x as f64).collect(),
        (TypeChar::Bool, 1) => npy.into_vec::<bool>().map_err(err)?.into_iter().map(|b| b as u8 as f64).collect(),
        _ => return Err(format!("unsupported dtype '{ts}' (need a real numeric array, e.g. float64)")),
    };
    Ok(v)
}

/// Parses an array of any rank from `.npy` bytes: returns the shape and the values in C order
/// (last index fastest), whatever the file's order and real dtype (see the module docs).
pub fn parse_array<R: Read>(reader: R) -> CliResult<(Vec<usize>, Vec<f64>)> {
    let npy = NpyFile::new(reader).map_err(|e| format!("not a valid .npy file: {e}"))?;
    let shape: Vec<usize> = npy.shape().iter().map(|&s| s as usize).collect();
    let order = npy.order();
    let raw = read_as_f64(npy)?;
    let count: usize = shape.iter().product();
    if raw.len() != count {
        return Err(format!("array holds {} values for shape {shape:?}", raw.len()));
    }
    let data = match order {
        Order::C => raw,
        // Fortran order: the first index is fastest; reverse the strides.
        Order::Fortran => {
            let mut d = vec![0.0; count];
            let nd = shape.len();
            let mut idx = vec![0usize; nd];
            for &v in raw.iter() {
                let mut off = 0;
                for k in 0..nd {
                    off = off * shape[k] + idx[k];
                }
                d[off] = v;
                for k in 0..nd {
                    idx[k] += 1;
                    if idx[k] < shape[k] {
                        break;
                    }
                    idx[k] = 0;
                }
            }
            d
        }
    };
    Ok((shape, data))
}

/// Reads an array of any rank from a `.npy` file (see [`parse_array`]).
pub fn read_array(path: &Path) -> CliResult<(Vec<usize>, Vec<f64>)> {
    let f = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    parse_array(BufReader::new(f)).map_err(|e| format!("{}: {e}", path.display()))
}

/// A shape as numpy prints it: `(200,)`, `(200, 3)`, `()`.
pub fn shape_str(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// Parses a 2D image from `.npy` bytes (see the module docs for order and dtypes).
pub fn parse_image<R: Read>(reader: R) -> CliResult<Image> {
    let (shape, data) = parse_array(reader)?;
    image_from_array(shape, data)
}

/// A 2D array (`shape`, values in C order) as an image: errors for other ranks, an empty
/// array, or a value that is not finite.
pub fn image_from_array(shape: Vec<usize>, data: Vec<f64>) -> CliResult<Image> {
    if shape.len() != 2 {
        return Err(format!("expected a 2D array, found shape {}", shape_str(&shape)));
    }
    let (rows, cols) = (shape[0], shape[1]);
    if rows == 0 || cols == 0 {
        return Err(format!("empty image of shape {}", shape_str(&shape)));
    }
    if let Some(i) = data.iter().position(|v| !v.is_finite()) {
        return Err(format!("pixel ({}, {}) is not finite ({})", i / cols, i % cols, data[i]));
    }
    Ok(Image { rows, cols, data })
}

/// Reads a 2D image from a `.npy` file.
pub fn read_image(path: &Path) -> CliResult<Image> {
    let f = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    parse_image(BufReader::new(f)).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes an array of shape `shape` (C order: last index fastest) to a `.npy` file.
pub fn write_array<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) -> CliResult<()> {
    let err = |e: std::io::Error| format!("writing {}: {e}", path.display());
    let f = File::create(path).map_err(err)?;
    let mut w = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(BufWriter::new(f))
        .begin_nd()
        .map_err(err)?;
    w.extend(data.iter().copied()).map_err(err)?;
    w.finish().map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy_bytes<T: npyz::Serialize + npyz::AutoSerialize + Copy>(shape: &[u64], order: Order, data: &[T]) -> Vec<u8> {
        let mut buf = Vec::new();
        {
            let mut w = npyz::WriteOptions::<T>::new()
                .default_dtype()
                .shape(shape)
                .order(order)
                .writer(&mut buf)
                .begin_nd()
                .unwrap();
            w.extend(data.iter().copied()).unwrap();
            w.finish().unwrap();
        }
        buf
    }

    #[test]
    fn reads_c_order_f64() {
        // 2 rows, 3 columns: [[0,1,2],[3,4,5]]
        let b = npy_bytes::<f64>(&[2, 3], Order::C, &[0., 1., 2., 3., 4., 5.]);
        let im = parse_image(&b[..]).unwrap();
        assert_eq!((im.rows, im.cols), (2, 3));
        assert_eq!(im.data, vec![0., 1., 2., 3., 4., 5.]);
        assert_eq!(im.at(1, 0), 3.0);
    }

    #[test]
    fn reads_fortran_order_as_row_major() {
        // the same logical array [[0,1,2],[3,4,5]] stored column by column
        let b = npy_bytes::<f64>(&[2, 3], Order::Fortran, &[0., 3., 1., 4., 2., 5.]);
        let im = parse_image(&b[..]).unwrap();
        assert_eq!((im.rows, im.cols), (2, 3));
        assert_eq!(im.data, vec![0., 1., 2., 3., 4., 5.]);
    }

    #[test]
    fn converts_other_dtypes() {
        let b = npy_bytes::<u16>(&[1, 2], Order::C, &[7, 215]);
        assert_eq!(parse_image(&b[..]).unwrap().data, vec![7.0, 215.0]);
        let b = npy_bytes::<f32>(&[2, 1], Order::C, &[0.5, -1.0]);
        assert_eq!(parse_image(&b[..]).unwrap().data, vec![0.5, -1.0]);
    }

    #[test]
    fn rejects_non_2d_and_bad_data() {
        let b = npy_bytes::<f64>(&[3], Order::C, &[1., 2., 3.]);
        assert!(parse_image(&b[..]).unwrap_err().contains("2D"));
        let b = npy_bytes::<f64>(&[1, 2], Order::C, &[1., f64::NAN]);
        assert!(parse_image(&b[..]).unwrap_err().contains("not finite"));
        assert!(parse_image(&b"not an npy file"[..]).is_err());
    }

    #[test]
    fn shapes_print_as_numpy_does() {
        assert_eq!(shape_str(&[200]), "(200,)");
        assert_eq!(shape_str(&[200, 3]), "(200, 3)");
        assert_eq!(shape_str(&[]), "()");
    }

    #[test]
    fn reads_the_mri_slice() {
        // docs/design.md §11.1: 256×256 float64, integer values 0…215, row 0 = top of the image.
        let p = crate::demo::data_path(crate::demo::MRI_IMAGE).unwrap();
        let im = read_image(&p).unwrap();
        assert_eq!((im.rows, im.cols), (256, 256));
        let max = im.data.iter().cloned().fold(f64::MIN, f64::max);
        assert_eq!(max, 215.0);
        assert!(im.data.iter().all(|v| v.fract() == 0.0 && *v >= 0.0));
    }

    #[test]
    fn read_array_keeps_shape_and_c_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        // logical [[0,1,2],[3,4,5]] stored in Fortran order
        std::fs::write(&p, npy_bytes::<f64>(&[2, 3], Order::Fortran, &[0., 3., 1., 4., 2., 5.])).unwrap();
        assert_eq!(read_array(&p).unwrap(), (vec![2, 3], vec![0., 1., 2., 3., 4., 5.]));
        std::fs::write(&p, npy_bytes::<f32>(&[3], Order::C, &[1.5, -2.0, 4.0])).unwrap();
        assert_eq!(read_array(&p).unwrap(), (vec![3], vec![1.5, -2.0, 4.0]));
    }

    #[test]
    fn write_then_read_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        write_array::<f64>(&p, &[2, 2], &[1., 2., 3., 4.]).unwrap();
        let im = read_image(&p).unwrap();
        assert_eq!(im.data, vec![1., 2., 3., 4.]);
    }
}
