//! The kernels a lab calls ([`Entry`]) and what a student's image must have of them: each one a
//! kernel of the image ([`require_entries`]), taking what ours takes ([`require_same_parameters`]).

use anyhow::{bail, Context as _, Result};
use kernels::KernelImage;

use crate::parameters;

/// A kernel the lab calls: the entry name it looks up (mangled for C++ kernels) and the declaration a
/// student must write, for the error message.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub declaration: &'static str,
}

impl Entry {
    /// The kernel's name as the student wrote it (`simpson`, not `_Z7simpsonddPd`): the identifier
    /// before the parameters in its declaration.
    pub fn c_name(&self) -> &'static str {
        let before = self.declaration.split('(').next().unwrap_or(self.declaration);
        before
            .rsplit(|c: char| c.is_whitespace() || c == '*')
            .next()
            .unwrap_or(self.name)
    }
}

/// The build of a student's image (it has one, for the GPU it runs on) and its parsed report.
pub(crate) fn student_report(image: &KernelImage) -> Result<kernels::ptxas::Report> {
    let build = image
        .newest()
        .with_context(|| format!("{} was not compiled", image.source))?;
    build
        .report()
        .with_context(|| format!("reading nvcc's report on {}", image.source))
}

/// Every entry the lab calls must be a kernel of the student's image; the error names what the lab
/// looked for and what the file has.
pub fn require_entries(image: &KernelImage, entries: &[Entry]) -> Result<()> {
    let report = student_report(image)?;
    let kernels: Vec<&str> = report
        .functions
        .iter()
        .filter(|f| f.is_entry())
        .map(|f| f.name.as_str())
        .collect();
    for entry in entries {
        if !kernels.contains(&entry.name) {
            let has = if kernels.is_empty() {
                "no kernels".to_string()
            } else {
                format!("the kernels {}", kernels.join(", "))
            };
            bail!(
                "{} has no kernel `{}` (the lab looks for `{}`); it has {has}",
                image.source,
                entry.declaration,
                entry.name
            );
        }
    }
    Ok(())
}

/// The student's kernel takes what ours takes (same parameter sizes and offsets, read from both
/// images: [`parameters`]), so the lab's launch fits it; otherwise a one-line error with both lists.
pub fn require_same_parameters(student: &KernelImage, ours: &KernelImage, entry: &Entry) -> Result<()> {
    // The newest builds: a student's only one, and ours with every kernel (parameters do not change with
    // the architecture).
    let image = |of: &KernelImage| of.newest().map_or(&[][..], |build| build.image);
    let expected = parameters::parameters(image(ours), entry.name)
        .map_err(|why| anyhow::anyhow!("reading our {}'s parameters: {why}", entry.name))?;
    let theirs = match parameters::parameters(image(student), entry.name) {
        Ok(theirs) => theirs,
        Err(why) => {
            eprintln!(
                "note: {}: {why}; the parameters of {} are not compared",
                student.source, entry.name
            );
            return Ok(());
        }
    };
    if theirs != expected {
        let sizes = |list: &[(usize, usize)]| {
            list.iter()
                .map(|(_, size)| format!("{size}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        bail!(
            "{}: kernel `{}` takes {} parameter(s) of {} bytes, but the lab passes {} of {} bytes: `{}`",
            student.source,
            entry.name,
            theirs.len(),
            sizes(&theirs),
            expected.len(),
            sizes(&expected),
            entry.declaration
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::private_dir::PrivateDir;
    use kernels::runtime;

    #[test]
    fn a_missing_kernel_names_what_the_lab_looked_for() {
        let build = kernels::ArchImage { arch: 90, image: &[], relocatable_ptx: None, ptx: None, ptxas: "ptxas info    : Compiling entry function '_Z7simpsonffPf' for 'sm_90'\nptxas info    : Used 8 registers\n" };
        let image = KernelImage {
            source: "mine.cu",
            flags: &[],
            builds: Box::leak(Box::new([build])),
            linked_with_device_runtime: false,
            ptx_inside: true,
        };
        let entry = Entry {
            name: "_Z7simpsonddPd",
            declaration: "__global__ void simpson(double a, double b, double* sums)",
        };
        let error = require_entries(&image, &[entry]).unwrap_err().to_string();
        assert_eq!(error, "mine.cu has no kernel `__global__ void simpson(double a, double b, double* sums)` (the lab looks for `_Z7simpsonddPd`); it has the kernels _Z7simpsonffPf");
    }

    #[test]
    fn a_different_signature_is_found_in_the_images_without_a_gpu() {
        let dir = PrivateDir::new("signature-test").unwrap();
        let path = dir.path().join("mmm.cu");
        std::fs::write(&path, "#include \"matrix_view.cuh\"\nextern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b) { b(0, 0) = a(0, 0); }\n").unwrap();
        let image = runtime::compile(&path, &kernels::MMM_BS16, kernels::BUILT_ARCHS[0])
            .unwrap()
            .image;
        let entry = Entry {
            name: "mmm_f64",
            declaration:
                "extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)",
        };
        let error = require_same_parameters(&image, &kernels::MMM_BS16, &entry)
            .unwrap_err()
            .to_string();
        assert!(error.ends_with("kernel `mmm_f64` takes 2 parameter(s) of 16, 16 bytes, but the lab passes 3 of 16, 16, 16 bytes: `extern \"C\" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c)`"), "{error}");
        require_same_parameters(&kernels::MMM_BS16, &kernels::MMM_BS16, &entry).unwrap();
    }
}
