//! The German slides' first condition for fast global accesses: words of at least 32 bits. The
//! alignment table (`coalescing::Words`) starts at 32-bit words; this one goes below them. The same
//! bytes as the table's aligned 32-bit row are copied as `unsigned char` (`word_copy_8`) and
//! `unsigned short` (`word_copy_16`), every word plus 1, so a warp's load asks for 32 or 64 bytes (1
//! or 2 sectors) where a float's asks for 128 (4): four and two times the requests for the same
//! bytes. Then the bytes again, four to a thread as one 32-bit `uchar4` (`word_copy_8x4`), which is
//! the fix. All run through the sweep's buffers and check ([`Sweep::measure_other_as`]): output
//! poisoned first, the L2 emptied before every run, every float of the copy and the one after it
//! read back. Part of `--mode coalescing`, after the alignment table.

use anyhow::{ensure, Result};
use common::check_cuda;
use common::verify::check_cell;
use cust::launch;
use cust::module::Module;

use crate::blocks_for;
use crate::coalescing::{measure_rows, Access, Measured, Sweep, BLOCK, COPIES_PER_THREAD};

/// A copy in words narrower than a float, or bytes packed into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Small {
    /// One `unsigned char` a load.
    Bytes,
    /// One `unsigned short` a load.
    Halves,
    /// Four `unsigned char` a load, as one `uchar4`: 32 bits.
    PackedBytes,
}

impl Small {
    pub const ALL: [Small; 3] = [Small::Bytes, Small::Halves, Small::PackedBytes];

    /// The kernel in memory.cu.
    pub fn kernel(self) -> &'static str {
        match self {
            Small::Bytes => "word_copy_8",
            Small::Halves => "word_copy_16",
            Small::PackedBytes => "word_copy_8x4",
        }
    }

    /// The row's name.
    pub fn label(self) -> &'static str {
        match self {
            Small::Bytes => "8-bit (unsigned char)",
            Small::Halves => "16-bit (unsigned short)",
            Small::PackedBytes => "8-bit, four as one 32-bit uchar4",
        }
    }

    /// Bytes one thread loads at once.
    pub fn word_bytes(self) -> usize {
        match self {
            Small::Bytes => 1,
            Small::Halves => 2,
            Small::PackedBytes => 4,
        }
    }

    /// Bytes a warp's load asks for: 32 words.
    pub fn bytes_per_request(self) -> usize {
        32 * self.word_bytes()
    }

    /// 32-byte sectors one aligned warp load touches.
    pub fn sectors_per_warp(self) -> usize {
        self.bytes_per_request().div_ceil(32)
    }

    /// Warp loads it takes to move the 128 bytes one load of floats moves.
    pub fn requests_per_128_bytes(self) -> usize {
        128 / self.bytes_per_request()
    }

    /// What the copy leaves where the input float was `x`: 1 added to each byte (wrapping at 256) or
    /// each 16-bit half (wrapping at 65536), little-endian as on the GPU.
    pub fn changed(self, x: f32) -> f32 {
        let b = x.to_le_bytes();
        match self {
            Small::Bytes | Small::PackedBytes => f32::from_le_bytes(b.map(|byte| byte.wrapping_add(1))),
            Small::Halves => {
                let low = u16::from_le_bytes([b[0], b[1]]).wrapping_add(1).to_le_bytes();
                let high = u16::from_le_bytes([b[2], b[3]]).wrapping_add(1).to_le_bytes();
                f32::from_le_bytes([low[0], low[1], high[0], high[1]])
            }
        }
    }
}

/// Times and checks the copy of `access`'s floats (stride 1, offset 0) as `small` words.
pub fn measure(
    module: &Module,
    sweep: &mut Sweep,
    small: Small,
    access: Access,
    repetitions: usize,
) -> Result<Measured> {
    ensure!(
        access.stride == 1 && access.offset == 0,
        "{access:?}: the small words are copied from the buffers' start, at stride 1"
    );
    let n = 4 * access.elements / small.word_bytes();
    ensure!(
        i32::try_from(n).is_ok(),
        "{access:?}: {n} words is more than the kernel counts"
    );
    let copy = check_cuda!(module.get_function(small.kernel()))?;
    let grid = blocks_for(n.div_ceil(COPIES_PER_THREAD), BLOCK);
    sweep.measure_other_as(
        access,
        repetitions,
        |x| small.changed(x),
        |stream, input, output| {
            // __global__ void word_copy_8(const unsigned char* in, unsigned char* out, int n), and
            // word_copy_16 and word_copy_8x4 with unsigned short and uchar4
            // SAFETY: the arguments match the kernel's C signature in order; the pointers are the
            // sweep's 256-byte aligned buffers, passed as the untyped addresses C takes, and the n
            // words are the bytes of `access`'s floats, inside both buffers (the sweep checks the span
            // fits before any launch).
            check_cuda!(unsafe { launch!(copy<<<grid, BLOCK, 0, stream>>>(input, output, n as i32)) })?;
            Ok(())
        },
    )
}

/// The table: each small copy over the bytes of `reference` (the alignment table's aligned 32-bit
/// row, measured in the same sweep), beside it.
pub fn table(module: &Module, sweep: &mut Sweep, reference: &Measured, repetitions: usize) -> Result<Vec<Measured>> {
    let access = reference.access;
    let copy = |small| measure(module, sweep, small, access, repetitions);
    let measured = measure_rows(&Small::ALL, "words under 32 bits", Small::label, copy)?;
    println!(
        "\nThe German slides: fast only with words of at least 32 bits. The {} bytes of the 32-bit row copied as smaller words, each plus 1:\n",
        4 * access.elements
    );
    println!("| word | kernel | bytes per warp request | sectors per warp | warp requests per 128 bytes | GPU time in ms | effective GB/s | vs 32-bit | check |");
    println!("|------|--------|------------------------|------------------|-----------------------------|----------------|----------------|-----------|-------|");
    let row = |label: &str, kernel: &str, word_bytes: usize, m: &Measured| {
        println!(
            "| {label} | {kernel} | {} | {} | {} | {:.4} | {:.0} | {:.2} | {} |",
            32 * word_bytes,
            word_bytes,
            4 / word_bytes,
            m.timing.median_ms(),
            m.bandwidth() / 1e9,
            m.bandwidth() / reference.bandwidth(),
            check_cell(m.wrong)
        );
    };
    for (small, m) in Small::ALL.iter().zip(&measured) {
        row(small.label(), small.kernel(), small.word_bytes(), m);
    }
    row(
        "32-bit (float), the alignment table's row",
        "strided_copy",
        4,
        reference,
    );
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_words_ask_for_fewer_sectors_a_request_and_more_requests() {
        let shape: Vec<(usize, usize, usize)> = Small::ALL
            .iter()
            .map(|s| (s.bytes_per_request(), s.sectors_per_warp(), s.requests_per_128_bytes()))
            .collect();
        assert_eq!(shape, [(32, 1, 4), (64, 2, 2), (128, 4, 1)]);
        let source = include_str!("../../kernels/cuda/memory.cu");
        let signatures = [
            "void word_copy_8(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, int n)",
            "void word_copy_16(const unsigned short* __restrict__ in, unsigned short* __restrict__ out, int n)",
            "void word_copy_8x4(const uchar4* __restrict__ in, uchar4* __restrict__ out, int n)",
        ];
        let missing: Vec<&str> = signatures.into_iter().filter(|s| !source.contains(s)).collect();
        assert!(missing.is_empty(), "memory.cu changed: {missing:?}");
    }

    #[test]
    fn every_byte_or_half_gains_one_and_wraps() {
        // 0.5 is 0x3f000000: bytes 00 00 00 3f.
        assert_eq!(Small::Bytes.changed(0.5).to_bits(), 0x4001_0101);
        assert_eq!(Small::PackedBytes.changed(0.5).to_bits(), 0x4001_0101);
        assert_eq!(Small::Halves.changed(0.5).to_bits(), 0x3f01_0001);
        let x = f32::from_bits(0x3fff_ffff);
        assert_eq!(Small::Bytes.changed(x).to_bits(), 0x4000_0000, "255 + 1 wraps to 0");
        assert_eq!(Small::Halves.changed(x).to_bits(), 0x4000_0000, "65535 + 1 wraps to 0");
        // The sweep's inputs lie in [0.5, 1.5): what the copies leave is never a NaN, so the
        // float comparison of the check sees every difference.
        for bits in [0x3f00_0000u32, 0x3f7f_ffff, 0x3fbf_ffff, 0x3fff_ffff] {
            for small in Small::ALL {
                assert!(!small.changed(f32::from_bits(bits)).is_nan(), "{small:?} {bits:#x}");
            }
        }
    }
}
