//! What an nvcc fatbin holds: machine code (ELF cubins) and PTX, each for one architecture.
//!
//! A student pack must carry our kernels as machine code only: PTX is our CUDA C almost line by line,
//! and nvcc compresses it inside a fatbin, so searching a binary for PTX text finds nothing. This reads
//! the fatbin's own entry headers instead (the layout `cuobjdump` reads, as nvcc 12 and 13 write it).
//!
//! A fatbin is a 16-byte header (magic 0xBA55ED50, version, header size, size of what follows), then
//! entries, each a header (kind at byte 0: 1 PTX, 2 ELF; header size at byte 4; payload size at byte 8;
//! architecture at byte 28) and its payload.

/// The magic number a fatbin starts with.
pub const MAGIC: u32 = 0xBA55_ED50;

/// What one entry of a fatbin holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// PTX (usually compressed), which the driver compiles for GPUs newer than the machine code.
    Ptx,
    /// Machine code (SASS in an ELF cubin).
    Elf,
    /// An entry kind this reader does not know.
    Other(u16),
}

/// One entry: its kind and the architecture it is for (90 for sm_90 or compute_90).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    pub arch: u32,
}

/// The entries of the fatbin at the start of `bytes`.
pub fn entries(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    if read_u32(bytes, 0) != Some(MAGIC) {
        return Err("not a fatbin (no magic 0xBA55ED50)".to_string());
    }
    let header = read_u16(bytes, 6).ok_or("truncated fatbin header")? as usize;
    let size = read_u64(bytes, 8).ok_or("truncated fatbin header")?;
    let end = usize::try_from(size)
        .ok()
        .and_then(|size| size.checked_add(header))
        .filter(|&end| end <= bytes.len());
    let end = end.ok_or_else(|| format!("the fatbin says it holds {size} bytes, more than there are"))?;
    let mut entries = Vec::new();
    let mut at = header;
    while at < end {
        let truncated = || format!("truncated entry header at byte {at}");
        let kind = match read_u16(bytes, at).ok_or_else(truncated)? {
            1 => Kind::Ptx,
            2 => Kind::Elf,
            other => Kind::Other(other),
        };
        let entry_header = read_u32(bytes, at + 4).ok_or_else(truncated)? as usize;
        let payload = read_u64(bytes, at + 8).ok_or_else(truncated)?;
        let arch = read_u32(bytes, at + 28).ok_or_else(truncated)?;
        entries.push(Entry { kind, arch });
        let next = usize::try_from(payload)
            .ok()
            .and_then(|payload| at.checked_add(entry_header)?.checked_add(payload));
        at = next
            .filter(|&next| next > at && next <= end)
            .ok_or_else(|| format!("entry at byte {at} has no size or runs past the fatbin's end"))?;
    }
    Ok(entries)
}

/// Every fatbin found anywhere in `bytes` (a lab's executable embeds one per kernel and architecture),
/// with its offset and its entries, or why they cannot be read. A fatbin starts with the magic number,
/// version 1 and a 16-byte header; the magic number alone is no fatbin (code that compares with it
/// holds it too).
pub fn find_all(bytes: &[u8]) -> Vec<(usize, Result<Vec<Entry>, String>)> {
    let start = [
        MAGIC.to_le_bytes().as_slice(),
        &1u16.to_le_bytes(),
        &16u16.to_le_bytes(),
    ]
    .concat();
    bytes
        .windows(start.len())
        .enumerate()
        .filter(|(_, window)| *window == start)
        .map(|(at, _)| (at, entries(&bytes[at..])))
        .collect()
}

fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fatbin header and entries as nvcc writes them, with `payload` bytes of zeros each.
    fn fatbin(entries: &[(u16, u32)], payload: usize) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, arch) in entries {
            let mut header = vec![0u8; 64];
            header[0..2].copy_from_slice(&kind.to_le_bytes());
            header[4..8].copy_from_slice(&64u32.to_le_bytes());
            header[8..16].copy_from_slice(&(payload as u64).to_le_bytes());
            header[28..32].copy_from_slice(&arch.to_le_bytes());
            body.extend(header);
            body.extend(vec![0u8; payload]);
        }
        let mut bytes = MAGIC.to_le_bytes().to_vec();
        bytes.extend(1u16.to_le_bytes());
        bytes.extend(16u16.to_le_bytes());
        bytes.extend((body.len() as u64).to_le_bytes());
        bytes.extend(body);
        bytes
    }

    #[test]
    fn reads_kinds_and_architectures() {
        let bytes = fatbin(&[(2, 75), (1, 75), (2, 90)], 24);
        let expected = [
            Entry {
                kind: Kind::Elf,
                arch: 75,
            },
            Entry {
                kind: Kind::Ptx,
                arch: 75,
            },
            Entry {
                kind: Kind::Elf,
                arch: 90,
            },
        ];
        assert_eq!(entries(&bytes), Ok(expected.to_vec()));
        assert_eq!(
            entries(&fatbin(&[(7, 80)], 8)),
            Ok(vec![Entry {
                kind: Kind::Other(7),
                arch: 80
            }])
        );
    }

    #[test]
    fn finds_every_fatbin_inside_other_bytes() {
        let mut binary = b"\x7fELF some code".to_vec();
        binary.extend(MAGIC.to_le_bytes()); // an immediate in code that reads fatbins: no fatbin
        binary.extend(b"..");
        binary.extend(fatbin(&[(2, 90), (1, 90)], 8));
        binary.extend(b"more");
        binary.extend(fatbin(&[(2, 120)], 8));
        let found: Vec<(usize, Vec<Entry>)> = find_all(&binary)
            .into_iter()
            .map(|(at, entries)| (at, entries.unwrap()))
            .collect();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].0, 20);
        assert_eq!(
            found[1].1,
            [Entry {
                kind: Kind::Elf,
                arch: 120
            }]
        );
    }

    #[test]
    fn a_broken_fatbin_is_an_error_not_a_panic() {
        let whole = fatbin(&[(2, 90), (1, 90)], 32);
        for cut in 0..whole.len() {
            let _ = entries(&whole[..cut]);
        }
        assert!(entries(&whole[..whole.len() - 1])
            .unwrap_err()
            .contains("more than there are"));
        let mut zero_sized = fatbin(&[(2, 90)], 0);
        zero_sized[16 + 4..16 + 8].copy_from_slice(&0u32.to_le_bytes());
        assert!(
            entries(&zero_sized).unwrap_err().contains("has no size"),
            "an entry of size 0 would loop forever"
        );
        assert_eq!(entries(b"nope"), Err("not a fatbin (no magic 0xBA55ED50)".to_string()));
    }
}
