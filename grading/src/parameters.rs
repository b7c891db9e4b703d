//! A kernel's parameters as its image lists them, read without the driver.
//!
//! Why not `cuFuncGetParamInfo`: the driver gives one parameter per call and answers
//! `CUDA_ERROR_INVALID_VALUE` past the last, so the only way to count them is to provoke that error,
//! and compute-sanitizer reports every such call as an error of ours (eight per `--kernel-source`
//! run). `cuFuncGetParamCount` would count them, but it came after CUDA 13.0, the driver of the
//! course's machines. The compiler writes the same table into the image: the cubin (an ELF file, alone
//! or inside the fatbin, where nvcc 13 stores it uncompressed) has a section `.nv.info.<kernel>` of
//! attribute records, and each parameter is one `EIATTR_KPARAM_INFO` record with its ordinal, offset
//! and size: what the driver's answers are made from. Reading it needs no GPU, so a wrong signature
//! is reported before any case runs.
//!
//! Record layout (as cuobjdump prints it, and as CuAssembler's `CuNVInfo` decodes it): a format byte,
//! an attribute byte, a 16-bit little-endian value (for `EIFMT_SVAL`, the byte count of the data that
//! follows). `EIATTR_KPARAM_INFO` is attribute 0x17 with 12 bytes: a 32-bit index, a 16-bit ordinal, a
//! 16-bit offset, and 32 bits of flags whose bits 18 to 31 are the size.

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const FATBIN_ELF: u16 = 2;
const ELF_MAGIC: &[u8] = b"\x7fELF";
const EIFMT_SVAL: u8 = 4;
const EIATTR_KPARAM_INFO: u8 = 0x17;

/// `(offset, size)` in bytes of each parameter of `kernel`, in order, from a fatbin or cubin.
pub fn parameters(image: &[u8], kernel: &str) -> Result<Vec<(usize, usize)>, String> {
    let section = format!(".nv.info.{kernel}");
    let mut found_elf = false;
    for elf in elf_images(image) {
        found_elf = true;
        if let Some(info) = elf_section(elf, &section) {
            return parameter_records(info);
        }
    }
    Err(if found_elf {
        format!("the image has no parameter table for {kernel}")
    } else {
        "the image holds no uncompressed cubin".to_string()
    })
}

/// The ELF files in `image`: itself if it is one, else each cubin entry of the fatbin.
fn elf_images(image: &[u8]) -> Vec<&[u8]> {
    if image.starts_with(ELF_MAGIC) {
        return vec![image];
    }
    let mut found = Vec::new();
    if u32_at(image, 0) != Some(FATBIN_MAGIC) {
        return found;
    }
    let (Some(header), Some(size)) = (u16_at(image, 6), u64_at(image, 8)) else {
        return found;
    };
    let end = (header as usize).saturating_add(size as usize).min(image.len());
    let mut at = header as usize;
    // Each entry: kind (u16), version (u16), header size (u32), payload size (u64), ... then the payload.
    while at < end {
        let (Some(kind), Some(entry_header), Some(payload)) =
            (u16_at(image, at), u32_at(image, at + 4), u64_at(image, at + 8))
        else {
            break;
        };
        let start = at.saturating_add(entry_header as usize);
        let stop = start.saturating_add(payload as usize);
        if entry_header == 0 || stop > image.len() {
            break;
        }
        let body = &image[start..stop];
        if kind == FATBIN_ELF && body.starts_with(ELF_MAGIC) {
            found.push(body);
        }
        at = stop;
    }
    found
}

/// The contents of the section called `name` in a 64-bit little-endian ELF file.
fn elf_section<'a>(elf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let table = u64_at(elf, 0x28)? as usize;
    let (entry_size, count, names_index) = (
        u16_at(elf, 0x3A)? as usize,
        u16_at(elf, 0x3C)? as usize,
        u16_at(elf, 0x3E)? as usize,
    );
    let header = |index: usize| table.checked_add(index.checked_mul(entry_size)?);
    let contents = |index: usize| -> Option<&'a [u8]> {
        let at = header(index)?;
        let (offset, size) = (u64_at(elf, at + 24)? as usize, u64_at(elf, at + 32)? as usize);
        elf.get(offset..offset.checked_add(size)?)
    };
    let names = contents(names_index)?;
    (0..count).find_map(|index| {
        let name_at = u32_at(elf, header(index)?)? as usize;
        let rest = names.get(name_at..)?;
        let text = &rest[..rest.iter().position(|&b| b == 0)?];
        (text == name.as_bytes()).then(|| contents(index)).flatten()
    })
}

/// The `EIATTR_KPARAM_INFO` records of one `.nv.info.<kernel>` section, sorted by ordinal.
fn parameter_records(info: &[u8]) -> Result<Vec<(usize, usize)>, String> {
    let mut found = Vec::new();
    let mut at = 0;
    while at + 4 <= info.len() {
        let (format, attribute) = (info[at], info[at + 1]);
        let value = u16_at(info, at + 2).unwrap_or(0) as usize;
        at += 4;
        if format != EIFMT_SVAL {
            continue;
        }
        let data = info
            .get(at..at + value)
            .ok_or("a parameter table record runs past its section")?;
        at += value;
        if attribute == EIATTR_KPARAM_INFO {
            let (Some(ordinal), Some(offset), Some(flags)) = (u16_at(data, 4), u16_at(data, 6), u32_at(data, 8)) else {
                return Err("a parameter record is too short".to_string());
            };
            found.push((ordinal, offset as usize, ((flags >> 18) & 0x3FFF) as usize));
        }
    }
    found.sort_unstable();
    if found
        .iter()
        .enumerate()
        .any(|(index, (ordinal, _, _))| *ordinal as usize != index)
    {
        return Err("the parameter records do not number 0, 1, 2, ...".to_string());
    }
    Ok(found.into_iter().map(|(_, offset, size)| (offset, size)).collect())
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parameters of `kernel` in every build of `image`, which must agree.
    fn in_every_build(image: &kernels::KernelImage, kernel: &str) -> Vec<(usize, usize)> {
        let lists: Vec<_> = image
            .builds
            .iter()
            .map(|build| parameters(build.image, kernel).unwrap_or_else(|err| panic!("sm_{}: {err}", build.arch)))
            .collect();
        assert!(lists.windows(2).all(|pair| pair[0] == pair[1]), "{kernel}: {lists:?}");
        lists[0].clone()
    }

    #[test]
    fn reads_our_kernels_signatures_from_fatbins_and_linked_cubins() {
        // MatrixView<double> a, b, c: three 16-byte structs.
        assert_eq!(
            in_every_build(&kernels::MMM_BS16, "mmm_f64"),
            [(0, 16), (16, 16), (32, 16)]
        );
        // double a, double b, double* sums (the mangled name of the slide's kernel).
        assert_eq!(
            in_every_build(&kernels::SIMPSON, "_Z7simpsonddPd"),
            [(0, 8), (8, 8), (16, 8)]
        );
        // double a, double b, double tolerance, int max_depth, Tally* tally: the int is 4 bytes, the
        // pointer after it aligned to 8.
        assert_eq!(
            in_every_build(&kernels::ADAPTIVE_SIMPSON, "adaptive_master_pi"),
            [(0, 8), (8, 8), (16, 8), (24, 4), (32, 8)]
        );
        assert_eq!(in_every_build(&kernels::TRACER, "trace_constant").len(), 3);
    }

    #[test]
    fn anything_else_is_an_error_not_a_panic() {
        assert_eq!(
            parameters(kernels::MMM_BS16.builds[0].image, "no_such_kernel").unwrap_err(),
            "the image has no parameter table for no_such_kernel"
        );
        assert_eq!(
            parameters(b"not an image", "k").unwrap_err(),
            "the image holds no uncompressed cubin"
        );
        // Every truncation of a real image: an answer or an error, never a panic.
        let image = kernels::SIMPSON.builds[0].image;
        for cut in (0..image.len()).step_by(97) {
            let _ = parameters(&image[..cut], "_Z7simpsonddPd");
        }
        assert!(parameter_records(&[4, 0x17, 12, 0, 1, 2]).is_err());
    }
}
