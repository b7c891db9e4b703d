//! Spheres, the camera and light, and where scenes come from: random, or a scene file.
//!
//! Scene file: one sphere per line, seven numbers `x y z radius r g b` separated by spaces (centre,
//! radius > 0, colour from 0 to 1); `#` starts a comment, on a line of its own or after a sphere. The eye sits at (0, 0, -4) looking
//! towards +z; the image spans x from -aspect to aspect and y from -1 to 1 at z = 0.

use std::fs;
use std::path::Path;

use anyhow::{bail, ensure, Context as _, Result};
use common::verify::Random;
use cust::memory::DeviceCopy;

/// `struct Sphere` of `kernels/cuda/tracer.cu`; its layout is checked against the numbers nvcc was
/// given (`kernels::SPHERE_OFFSETS`) by a test.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sphere {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub radius: f32,
    pub r: f32,
    pub g: f32,
    pub b: f32,
}

// SAFETY: seven floats, the layout of the CUDA struct.
unsafe impl DeviceCopy for Sphere {}

/// `struct View` of tracer.cu: image size, eye and light.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    pub width: i32,
    pub height: i32,
    pub eye_z: f32,
    pub light_x: f32,
    pub light_y: f32,
    pub light_z: f32,
    pub ambient: f32,
}

// SAFETY: plain numbers, the layout of the CUDA struct.
unsafe impl DeviceCopy for View {}

impl View {
    /// The lab's camera and light for a `width x height` image.
    pub fn new(width: u32, height: u32) -> Result<View> {
        ensure!(
            width > 0 && height > 0,
            "the image must be at least 1 x 1 pixels, not {width} x {height}"
        );
        ensure!(
            u64::from(width) * u64::from(height) <= 1 << 28,
            "a {width} x {height} image is too large (at most 2^28 pixels)"
        );
        let (x, y, z) = (-0.5f32, 1.0f32, -0.6f32);
        let length = (x * x + y * y + z * z).sqrt();
        Ok(View {
            width: width as i32,
            height: height as i32,
            eye_z: -4.0,
            light_x: x / length,
            light_y: y / length,
            light_z: z / length,
            ambient: 0.15,
        })
    }

    pub fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }
}

/// Refuses scenes that do not fit in the 64 KiB of constant memory, or are empty.
pub fn check_count(count: usize) -> Result<()> {
    ensure!(count > 0, "a scene needs at least one sphere");
    ensure!(
        count <= kernels::MAX_SPHERES,
        "{count} spheres do not fit in constant memory: 64 KiB hold at most {} spheres of {} bytes",
        kernels::MAX_SPHERES,
        kernels::SPHERE_SIZE
    );
    Ok(())
}

/// A floor (one huge sphere) and `count - 1` random spheres in front of the eye, smaller the more
/// there are, so every count still looks like a scene.
pub fn random_scene(count: usize, seed: u64) -> Result<Vec<Sphere>> {
    check_count(count)?;
    let mut random = Random::new(seed);
    let mut spheres = vec![Sphere {
        x: 0.0,
        y: -1001.0,
        z: 5.0,
        radius: 1000.0,
        r: 0.8,
        g: 0.8,
        b: 0.75,
    }];
    let radius = (0.9 / (count as f64 / 8.0).sqrt()).clamp(0.03, 0.9);
    while spheres.len() < count {
        spheres.push(Sphere {
            x: random.uniform(-3.5, 3.5) as f32,
            y: random.uniform(-0.8, 2.0) as f32,
            z: random.uniform(1.0, 9.0) as f32,
            radius: (radius * random.uniform(0.5, 1.0)) as f32,
            r: random.uniform(0.2, 1.0) as f32,
            g: random.uniform(0.2, 1.0) as f32,
            b: random.uniform(0.2, 1.0) as f32,
        });
    }
    Ok(spheres)
}

const FIELDS: [&str; 7] = ["x", "y", "z", "radius", "r", "g", "b"];

/// Reads a scene file; errors name the file, the line and the field.
pub fn read_scene(path: &Path) -> Result<Vec<Sphere>> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_scene(&text, &path.display().to_string())
}

pub fn parse_scene(text: &str, name: &str) -> Result<Vec<Sphere>> {
    let mut spheres = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        ensure!(
            words.len() == FIELDS.len(),
            "{name}:{}: expected 7 fields (x y z radius r g b), found {}",
            index + 1,
            words.len()
        );
        let mut values = [0f32; 7];
        for ((value, word), field) in values.iter_mut().zip(&words).zip(FIELDS) {
            *value =
                word.parse::<f32>().ok().filter(|v| v.is_finite()).with_context(|| {
                    format!("{name}:{}: field {field} = {word:?} is not a finite number", index + 1)
                })?;
        }
        let [x, y, z, radius, r, g, b] = values;
        if radius <= 0.0 {
            bail!("{name}:{}: field radius = {radius} must be positive", index + 1);
        }
        if let Some((field, value)) = [("r", r), ("g", g), ("b", b)]
            .into_iter()
            .find(|(_, v)| !(0.0..=1.0).contains(v))
        {
            bail!("{name}:{}: field {field} = {value} must be between 0 and 1", index + 1);
        }
        spheres.push(Sphere {
            x,
            y,
            z,
            radius,
            r,
            g,
            b,
        });
    }
    check_count(spheres.len()).with_context(|| name.to_string())?;
    Ok(spheres)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn sphere_has_the_layout_nvcc_was_given_and_checked() {
        assert_eq!(size_of::<Sphere>(), kernels::SPHERE_SIZE);
        let rust_offsets = [
            offset_of!(Sphere, x),
            offset_of!(Sphere, y),
            offset_of!(Sphere, z),
            offset_of!(Sphere, radius),
            offset_of!(Sphere, r),
            offset_of!(Sphere, g),
            offset_of!(Sphere, b),
        ];
        for ((field, offset), rust) in kernels::SPHERE_OFFSETS.iter().zip(rust_offsets) {
            assert_eq!(*offset, rust, "field {field}");
        }
        // A full [Sphere; MAX_SPHERES] is what Module::get_global asserts against the symbol's size.
        assert!(size_of::<[Sphere; kernels::MAX_SPHERES]>() <= 64 * 1024);
        assert!(size_of::<[Sphere; kernels::MAX_SPHERES + 1]>() > 64 * 1024);
    }

    #[test]
    fn view_has_the_layout_of_the_cuda_struct() {
        assert_eq!(
            (size_of::<View>(), offset_of!(View, eye_z), offset_of!(View, ambient)),
            (28, 8, 24)
        );
    }

    #[test]
    fn parses_a_scene_file_with_comments() {
        let spheres = parse_scene("# two spheres\n0 0 5 1 1 0 0 # red\n\n1 2 3 0.5 0 1 0.5\n", "s.txt").unwrap();
        assert_eq!(spheres.len(), 2);
        assert_eq!(
            spheres[1],
            Sphere {
                x: 1.0,
                y: 2.0,
                z: 3.0,
                radius: 0.5,
                r: 0.0,
                g: 1.0,
                b: 0.5
            }
        );
    }

    #[test]
    fn names_line_and_field_of_a_malformed_scene() {
        let message = |text| parse_scene(text, "s.txt").unwrap_err().to_string();
        assert_eq!(
            message("0 0 5 1 1 0 0\n0 0 5 x 1 0 0\n"),
            "s.txt:2: field radius = \"x\" is not a finite number"
        );
        assert_eq!(
            message("0 0 5 1 1 0\n"),
            "s.txt:1: expected 7 fields (x y z radius r g b), found 6"
        );
        assert_eq!(
            message("0 0 5 -1 1 0 0\n"),
            "s.txt:1: field radius = -1 must be positive"
        );
        assert_eq!(
            message("0 0 5 1 1 2 0\n"),
            "s.txt:1: field g = 2 must be between 0 and 1"
        );
    }

    #[test]
    fn refuses_no_spheres_and_too_many() {
        assert_eq!(
            format!("{:#}", parse_scene("# none\n", "s.txt").unwrap_err()),
            "s.txt: a scene needs at least one sphere"
        );
        let too_many = check_count(kernels::MAX_SPHERES + 1).unwrap_err().to_string();
        assert!(
            too_many.contains("64 KiB hold at most 2340 spheres of 28 bytes"),
            "{too_many}"
        );
        assert!(random_scene(kernels::MAX_SPHERES, 1).is_ok());
    }

    #[test]
    fn random_scenes_repeat_with_their_seed() {
        assert_eq!(random_scene(50, 3).unwrap(), random_scene(50, 3).unwrap());
        assert_ne!(random_scene(50, 3).unwrap(), random_scene(50, 4).unwrap());
    }

    #[test]
    fn refuses_an_empty_image() {
        assert!(View::new(0, 10).unwrap_err().to_string().contains("at least 1 x 1"));
    }

    /// Property tests (issue 12): any scene file gives spheres or a one-line error, never a panic.
    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn answers_in_one_line(text: &str) -> Result<(), TestCaseError> {
            match parse_scene(text, "scene.txt") {
                Ok(spheres) => prop_assert!(spheres.iter().all(|s| s.radius.is_finite())),
                Err(err) => {
                    let message = format!("{err:#}");
                    prop_assert!(
                        message.starts_with("scene.txt") && !message.contains('\n'),
                        "{}",
                        message
                    );
                }
            }
            Ok(())
        }

        proptest! {
            #[test]
            fn any_bytes_give_spheres_or_a_one_line_error(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
                answers_in_one_line(&String::from_utf8_lossy(&bytes))?;
            }

            #[test]
            fn number_like_text_gives_spheres_or_a_one_line_error(text in "[0-9eE.+ \t\n#xinfa-]{0,300}") {
                answers_in_one_line(&text)?;
            }
        }
    }
}
