//! The CPU reference tracer, image comparison and PNG output.
//!
//! `trace_pixel` is `trace` of `kernels/cuda/tracer.cu` step for step in f32, and tracer.cu is compiled
//! with `-fmad=false`, so both round every operation the same way and the images are equal pixel for
//! pixel. (With FMA contraction, 28 of the 786432 pixels of the default image came out differently on an
//! H200: rays that graze an edge or a shadow's border.)

use std::io::BufWriter;
use std::path::Path;

use anyhow::{Context as _, Result};
use common::phases::{self, Phase};
use common::verify::{Poison, Random};
use rayon::prelude::*;

use crate::scene::{Sphere, View};

/// Largest difference per colour channel (0 to 255) that counts as equal: none, the arithmetic is the same.
pub const CHANNEL_TOLERANCE: u32 = 0;

struct Ray {
    o: [f32; 3],
    d: [f32; 3],
}

fn hit(s: &Sphere, ray: &Ray) -> f32 {
    let (px, py, pz) = (ray.o[0] - s.x, ray.o[1] - s.y, ray.o[2] - s.z);
    let b = px * ray.d[0] + py * ray.d[1] + pz * ray.d[2];
    let c = px * px + py * py + pz * pz - s.radius * s.radius;
    let discriminant = b * b - c;
    if discriminant > 0.0 {
        -b - discriminant.sqrt()
    } else {
        -1.0
    }
}

fn to_byte(value: f32) -> u32 {
    (255.0 * value.clamp(0.0, 1.0) + 0.5) as u32
}

/// The colour of pixel (px, py) as RGBA in one u32 (red in the low byte), like the kernel writes it.
pub fn trace_pixel(spheres: &[Sphere], view: &View, px: usize, py: usize) -> u32 {
    let (width, height) = (view.width as f32, view.height as f32);
    let aspect = width / height;
    let u = (2.0 * (px as f32 + 0.5) / width - 1.0) * aspect;
    let v = 1.0 - 2.0 * (py as f32 + 0.5) / height;
    let length = (u * u + v * v + view.eye_z * view.eye_z).sqrt();
    let ray = Ray {
        o: [0.0, 0.0, view.eye_z],
        d: [u / length, v / length, -view.eye_z / length],
    };

    let mut nearest = 1e30f32;
    let mut hit_index = None;
    for (i, sphere) in spheres.iter().enumerate() {
        let t = hit(sphere, &ray);
        if t > 0.0 && t < nearest {
            nearest = t;
            hit_index = Some(i);
        }
    }
    let rgb = match hit_index {
        None => to_byte(0.1) | to_byte(0.1) << 8 | to_byte(0.15 + 0.15 * v) << 16,
        Some(index) => {
            let s = spheres[index];
            let (x, y, z) = (
                ray.o[0] + nearest * ray.d[0],
                ray.o[1] + nearest * ray.d[1],
                ray.o[2] + nearest * ray.d[2],
            );
            let (nx, ny, nz) = ((x - s.x) / s.radius, (y - s.y) / s.radius, (z - s.z) / s.radius);
            let diffuse = (nx * view.light_x + ny * view.light_y + nz * view.light_z).max(0.0);
            let towards_light = Ray {
                o: [x + 1e-3 * nx, y + 1e-3 * ny, z + 1e-3 * nz],
                d: [view.light_x, view.light_y, view.light_z],
            };
            let shadowed = diffuse > 0.0
                && spheres
                    .iter()
                    .enumerate()
                    .any(|(i, other)| i != index && hit(other, &towards_light) > 0.0);
            let light = view.ambient + (1.0 - view.ambient) * if shadowed { 0.0 } else { diffuse };
            to_byte(s.r * light) | to_byte(s.g * light) << 8 | to_byte(s.b * light) << 16
        }
    };
    rgb | 0xFF00_0000
}

/// The whole image on the CPU, pixel by pixel, on all cores.
pub fn render_on_cpu(spheres: &[Sphere], view: &View) -> Vec<u32> {
    let _phase = phases::enter(Phase::Verify);
    let width = view.width as usize;
    (0..width * view.height as usize)
        .into_par_iter()
        .map(|index| trace_pixel(spheres, view, index % width, index / width))
        .collect()
}

/// How a GPU image compares with a reference.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    pub pixels: usize,
    /// Pixels still holding the poison: the kernel never wrote them.
    pub unwritten: usize,
    /// Pixels with a channel more than `CHANNEL_TOLERANCE` away.
    pub pixels_off: usize,
    pub max_channel_difference: u32,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.unwritten == 0 && self.pixels_off == 0
    }

    /// Adds one pixel pair.
    fn add(&mut self, gpu: u32, reference: u32) {
        self.pixels += 1;
        if gpu.is_poison() {
            self.unwritten += 1;
            return;
        }
        let difference = channel_difference(gpu, reference);
        self.max_channel_difference = self.max_channel_difference.max(difference);
        self.pixels_off += usize::from(difference > CHANNEL_TOLERANCE);
    }
}

/// The largest difference of one colour channel (or alpha) between two RGBA pixels.
pub fn channel_difference(gpu: u32, reference: u32) -> u32 {
    (0..4)
        .map(|c| ((gpu >> (8 * c)) & 0xFF).abs_diff((reference >> (8 * c)) & 0xFF))
        .max()
        .unwrap_or(0)
}

/// Pixel by pixel against a whole reference image.
pub fn compare(gpu: &[u32], reference: &[u32]) -> Comparison {
    let _phase = phases::enter(Phase::Verify);
    let mut comparison = Comparison::default();
    for (g, r) in gpu.iter().zip(reference) {
        comparison.add(*g, *r);
    }
    comparison.unwritten += gpu.len().abs_diff(reference.len());
    comparison
}

/// Against the CPU at `samples` random pixels (and every unwritten pixel counted): for images whose
/// full CPU render would take too long.
pub fn compare_sampled(
    gpu: &[u32],
    spheres: &[Sphere],
    view: &View,
    samples: usize,
    random: &mut Random,
) -> Comparison {
    let _phase = phases::enter(Phase::Verify);
    let mut comparison = Comparison::default();
    let width = view.width as usize;
    for _ in 0..samples {
        let index = random.below(gpu.len() as u64) as usize;
        comparison.add(gpu[index], trace_pixel(spheres, view, index % width, index / width));
    }
    comparison.unwritten += gpu.iter().filter(|pixel| pixel.is_poison()).count();
    comparison
}

/// Writes the image as an 8-bit RGBA PNG (never over an existing file unless `overwrite`).
pub fn write_png(path: &Path, view: &View, image: &[u32], overwrite: bool) -> Result<()> {
    let _phase = phases::enter(Phase::Output);
    let file = common::output::create_output_file(path, overwrite)?;
    let mut encoder = png::Encoder::new(BufWriter::new(file), view.width as u32, view.height as u32);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let bytes: Vec<u8> = image.iter().flat_map(|pixel| pixel.to_le_bytes()).collect();
    let mut writer = encoder
        .write_header()
        .with_context(|| format!("writing {}", path.display()))?;
    writer
        .write_image_data(&bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    writer.finish().with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_sphere() -> Vec<Sphere> {
        vec![Sphere {
            x: 0.0,
            y: 0.0,
            z: 2.0,
            radius: 1.0,
            r: 1.0,
            g: 0.5,
            b: 0.0,
        }]
    }

    #[test]
    fn the_centre_pixel_sees_the_sphere_and_a_corner_the_background() {
        let view = View::new(101, 101).unwrap();
        let centre = trace_pixel(&one_sphere(), &view, 50, 50);
        assert_eq!(centre >> 24, 0xFF, "opaque");
        assert!(
            (centre & 0xFF) > ((centre >> 8) & 0xFF),
            "more red than green: {centre:08x}"
        );
        assert_eq!((centre >> 16) & 0xFF, 0, "no blue in an orange sphere");
        let corner = trace_pixel(&one_sphere(), &view, 0, 0);
        assert_eq!(corner & 0xFFFF, to_byte(0.1) | to_byte(0.1) << 8, "background");
    }

    #[test]
    fn a_sphere_between_the_light_and_another_casts_a_shadow() {
        let view = View::new(64, 64).unwrap();
        let floor = Sphere {
            x: 0.0,
            y: -1001.0,
            z: 5.0,
            radius: 1000.0,
            r: 1.0,
            g: 1.0,
            b: 1.0,
        };
        let lit = render_on_cpu(&[floor], &view);
        let blocker = Sphere {
            x: 0.0,
            y: 0.5,
            z: 4.0,
            radius: 1.0,
            r: 1.0,
            g: 1.0,
            b: 1.0,
        };
        let shadowed = render_on_cpu(&[floor, blocker], &view);
        let darker = lit
            .iter()
            .zip(&shadowed)
            .filter(|(l, s)| (**s & 0xFF) + 20 < (**l & 0xFF))
            .count();
        assert!(darker > 50, "the blocker darkens part of the floor ({darker} pixels)");
    }

    #[test]
    fn comparison_counts_unwritten_pixels_and_any_difference() {
        let reference = vec![0xFF10_2030u32; 2000];
        assert!(compare(&reference, &reference).passed());
        let mut gpu = reference.clone();
        gpu[1] = 0xFF10_2040;
        let comparison = compare(&gpu, &reference);
        assert!(!comparison.passed() && comparison.pixels_off == 1 && comparison.max_channel_difference == 16);
        gpu[1] = 0xFF10_2031; // one step of rounding is a difference too
        assert!(!compare(&gpu, &reference).passed());
        let mut unwritten = reference.clone();
        unwritten[1999] = u32::POISON;
        assert_eq!(compare(&unwritten, &reference).unwritten, 1);
        assert!(!compare(&unwritten, &reference).passed());
    }

    #[test]
    fn writes_a_png_that_decodes_to_the_same_pixels() {
        let dir = std::env::temp_dir().join(format!("tracer-png-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.png");
        let view = View::new(7, 5).unwrap();
        let image = render_on_cpu(&one_sphere(), &view);
        write_png(&path, &view, &image, false).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut bytes = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut bytes).unwrap();
        let decoded: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(decoded, image);
        assert!(
            write_png(&path, &view, &image, false).is_err(),
            "never over an existing file"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
