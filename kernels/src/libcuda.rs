//! Where the NVIDIA driver's library is, as the dynamic linker sees it: `build.rs` links the labs with
//! it (see `link_libcuda` there). Included by `build.rs` with `#[path]`, so only `std` here.

use std::path::PathBuf;

/// The path of libcuda.so.1 in `ldconfig -p`'s listing: the first 64-bit one (`x86-64`, `AArch64`),
/// else the first at all. Debian lists `/usr/lib/x86_64-linux-gnu`, WSL2 `/usr/lib/wsl/lib` (where
/// Windows' driver puts it), Fedora `/usr/lib64`.
pub fn in_ldconfig(listing: &str) -> Option<PathBuf> {
    let found: Vec<(&str, &str)> = listing
        .lines()
        .filter_map(|line| {
            let (name, path) = line.trim().split_once(" => ")?;
            let (library, tags) = name.split_once(' ')?;
            (library == "libcuda.so.1").then_some((tags, path.trim()))
        })
        .collect();
    let sixty_four = |tags: &&str| tags.contains("x86-64") || tags.contains("AArch64") || tags.contains("64bit");
    let chosen = found.iter().find(|(tags, _)| sixty_four(tags)).or(found.first())?;
    Some(PathBuf::from(chosen.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_driver_library_where_debian_wsl2_and_fedora_keep_it() {
        let debian = "1234 libs found in cache `/etc/ld.so.cache'\n\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n\tlibcuda.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so\n";
        assert_eq!(
            in_ldconfig(debian),
            Some(PathBuf::from("/usr/lib/x86_64-linux-gnu/libcuda.so.1"))
        );
        // WSL2: the driver's libraries come from Windows, in /usr/lib/wsl/lib (listed by
        // /etc/ld.so.conf.d/ld.wsl.conf), and nothing in /usr/lib/x86_64-linux-gnu.
        let wsl = "\tlibdxcore.so (libc6,x86-64) => /usr/lib/wsl/lib/libdxcore.so\n\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1\n\tlibcuda.so (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so\n";
        assert_eq!(in_ldconfig(wsl), Some(PathBuf::from("/usr/lib/wsl/lib/libcuda.so.1")));
        let fedora_with_32_bit_first = "\tlibcuda.so.1 (libc6) => /usr/lib/libcuda.so.1\n\tlibcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1\n";
        assert_eq!(
            in_ldconfig(fedora_with_32_bit_first),
            Some(PathBuf::from("/usr/lib64/libcuda.so.1"))
        );
        let arm = "\tlibcuda.so.1 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libcuda.so.1\n";
        assert_eq!(
            in_ldconfig(arm),
            Some(PathBuf::from("/usr/lib/aarch64-linux-gnu/libcuda.so.1"))
        );
    }

    #[test]
    fn no_driver_library_is_none() {
        assert_eq!(
            in_ldconfig(
                "\tlibcudart.so.13 (libc6,x86-64) => /x/libcudart.so.13\n\tlibcuda.so.10 (libc6,x86-64) => /y\n"
            ),
            None
        );
        assert_eq!(in_ldconfig(""), None);
    }
}
