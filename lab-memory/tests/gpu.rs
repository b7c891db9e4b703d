//! Every mode of lab-memory against the CPU, outputs poisoned first, at awkward sizes.
//! Needs a GPU: `bash gpu-bundle/run.sh` (README).

use common::gpu::Gpu;
use common::verify::Random;
use lab_memory::banks::{self, Element, Transpose, Word};
use lab_memory::cache::{self, Preference};
use lab_memory::coalescing::{self, Access, Notes, Sweep, Words};
use lab_memory::coherence;
use lab_memory::contexts;
use lab_memory::device_query::measure_copy;
use lab_memory::divergence::{self, Branch};
use lab_memory::indexing::{self, Helper};
use lab_memory::latency::{self, Place};
use lab_memory::line_order::{self, Order};
use lab_memory::local_arrays::{self, Indexing};
use lab_memory::readonly::{self, Path, Pattern};
use lab_memory::registers::{self, Variant, Work};
use lab_memory::small_words::{self, Small};
use lab_memory::symbols::{self, round_trip, Symbols, SYMBOL_LENGTH};
use lab_memory::transactions::{self, Path as ReadPath};

const NEEDS_GPU: &str = "needs a GPU: bash gpu-bundle/run.sh";

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_helper_numbers_the_threads_0_to_n_minus_1_each_once() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (grid, block) in [
        ((1, 1, 1), (1, 1, 1)),
        ((3, 2, 2), (4, 3, 2)),
        ((70, 3, 2), (7, 5, 3)),
        ((1000, 1, 1), (1024, 1, 1)),
        ((2, 65, 3), (32, 32, 1)),
    ] {
        for helper in Helper::all() {
            let mapping = indexing::run(&module, helper, grid, block).unwrap();
            assert_eq!(
                mapping.wrong(),
                (0, 0),
                "{} on grid {grid:?}, block {block:?}",
                helper.name()
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn symbols_go_to_the_gpu_change_there_and_come_back() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    let mut random = Random::new(5);
    for factor in [2.0f32, -0.75, 1e-3] {
        let input = Symbols {
            data: random.uniform(-10.0, 10.0) as f32,
            array: (0..SYMBOL_LENGTH).map(|_| random.uniform(-1.0, 1.0) as f32).collect(),
        };
        let output = round_trip(&module, &input, factor).unwrap();
        assert_eq!(
            output.differences(&input.scaled(factor)),
            0,
            "factor {factor}: {output:?}"
        );
        // A second round trip starts from what the host writes, not from what the kernel left.
        let again = round_trip(&module, &input, factor).unwrap();
        assert_eq!(again, output);
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_pointer_symbol_the_constant_array_and_the_lock_work_as_the_cpu_says() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    let mut random = Random::new(11);
    for _ in 0..3 {
        let data: [f32; SYMBOL_LENGTH] = std::array::from_fn(|_| random.uniform(-100.0, 100.0) as f32);
        let got = symbols::constants(&module, &data).unwrap();
        assert_eq!(
            lab_memory::differing_bits(&got.through_pointer, &symbols::through_pointer_expected(&data)),
            0
        );
        assert_eq!(lab_memory::differing_bits(&got.from_symbol, &data), 0);
        assert_eq!(lab_memory::differing_bits(&got.by_address, &data), 0);
    }
    // One block, a partial block, many blocks queueing for the lock; negative values too.
    for n in [1, 255, 257, 100_003, 2_000_001] {
        let input: Vec<i32> = (0..n).map(|_| random.below(2001) as i32 - 1000).collect();
        assert_eq!(
            symbols::locked_sum(&module, &input).unwrap(),
            symbols::locked_expected(&input),
            "{n} values"
        );
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn a_second_context_keeps_its_own_globals_and_moves_between_threads() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    // Twice: the first walk must leave the stack as it found it.
    for _ in 0..2 {
        let walk = contexts::walk(&module).unwrap();
        assert!(walk.right(), "{walk:?}");
    }
    // The lab's context is still current and usable.
    assert!(symbols::locked_sum(&module, &[1, 2, 3]).unwrap() == symbols::locked_expected(&[1, 2, 3]));
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn local_arrays_compute_what_the_cpu_computes_registers_or_not() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (n, rounds) in [(1, 0), (33, 1), (1000, 7), (65_537, 64)] {
        let work = local_arrays::Work::new(n, rounds, n as u64);
        for indexing in Indexing::ALL {
            let (_timing, wrong) = local_arrays::run(&module, indexing, &work, 1).unwrap();
            assert_eq!(wrong, 0, "{indexing:?}: {n} threads, {rounds} rounds");
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn both_branches_compute_their_sides_and_the_ballot_counts_split_warps() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (n, rounds) in [(1, 0), (33, 3), (257, 100), (100_003, 17)] {
        let input = divergence::random_input(n, n as u64);
        for branch in Branch::ALL {
            let measured = divergence::run(&module, branch, &input, rounds, 2).unwrap();
            assert_eq!(measured.wrong, 0, "{branch:?}: {n} threads, {rounds} rounds");
            let blocks = n.div_ceil(divergence::BLOCK as usize) as u32;
            assert_eq!(
                measured.divergent,
                branch.divergent_warps(blocks),
                "{branch:?}: {n} threads"
            );
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_bandwidth_copy_copies_every_word() {
    let _gpu = Gpu::open(0).expect(NEEDS_GPU);
    for bytes in [4, 4 * 1001, 1 << 24] {
        let (timing, wrong) = measure_copy(bytes, 2, bytes as u64).unwrap();
        assert_eq!(wrong, 0, "{bytes} bytes");
        assert_eq!(timing.samples_ms.len(), 2);
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_notes_kernels_write_their_places_and_nothing_beside() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (blocks, block) in [(1, 32), (3, 96), (7, 256), (1000, 1024)] {
        for kernel in [Notes::Kernel1, Notes::Kernel2] {
            let run = coalescing::run_notes(&module, kernel, blocks, block, gpu.info.l2_bytes, 2).unwrap();
            assert_eq!(run.wrong, 0, "{} on {blocks} x {block}", kernel.name());
            assert_eq!(run.access.elements, (blocks * block) as usize);
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_order_within_a_line_copies_every_float_and_nothing_beside() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (floats, seed) in [(1_000_003, 4), (4096, 8)] {
        let mut sweep = Sweep::new(&module, floats, gpu.info.l2_bytes, gpu.info.peak_bandwidth(), seed).unwrap();
        // One warp's line, a partial block, a partial grid, and the table's own launch (the lengths
        // the buffer holds: the check reads one float past the last).
        for elements in [32, 96, 32 * 333, (floats - 2) & !31]
            .into_iter()
            .filter(|&e| e < floats)
        {
            let access = Access {
                stride: 1,
                offset: 0,
                elements,
            };
            for order in Order::ALL {
                let measured = line_order::measure(&module, &mut sweep, order, access, 2).unwrap();
                assert_eq!(measured.wrong, 0, "{floats} floats, {elements} elements, {order:?}");
            }
        }
        let partial = Access {
            stride: 1,
            offset: 0,
            elements: 33,
        };
        assert!(line_order::measure(&module, &mut sweep, Order::Reversed, partial, 1).is_err());
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn another_blocks_write_is_seen_through_l2_and_by_a_volatile_load() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for seed in [3, 4] {
        let counts = coherence::run(&module, 10, seed).unwrap();
        assert_eq!(counts.wrong, 0, "seed {seed}: {counts:?}");
        assert_eq!((counts.stale_l2, counts.stale_volatile), (0, 0), "seed {seed}");
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_chase_ends_where_the_cpu_walk_ends() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for seed in [1, 2, 77] {
        let rows = latency::measure(&gpu, &module, 3, seed).unwrap();
        assert_eq!(rows.iter().map(|row| row.place).collect::<Vec<_>>(), Place::ALL);
        for row in rows {
            assert_eq!(row.wrong, 0, "seed {seed}: {:?}", row.place);
            assert!(row.cycles > 0.0, "seed {seed}: {:?} counted no cycles", row.place);
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_strided_copy_is_right_at_every_stride_and_offset() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (floats, seed) in [(1_000_003, 9), (4096, 1)] {
        let mut sweep = Sweep::new(&module, floats, gpu.info.l2_bytes, gpu.info.peak_bandwidth(), seed).unwrap();
        for stride in [1, 2, 3, 7, 8, 33, 1000, 1024] {
            for offset in [0, 1, 5, 31, 32] {
                let measured = sweep.measure(Access::fitting(stride, offset, floats), 2).unwrap();
                assert_eq!(measured.wrong, 0, "{floats} floats, {:?}", measured.access);
            }
        }
        // One element, and a launch shorter than a warp.
        for elements in [1, 17] {
            let measured = sweep
                .measure(
                    Access {
                        stride: 5,
                        offset: 3,
                        elements,
                    },
                    1,
                )
                .unwrap();
            assert_eq!(measured.wrong, 0, "{elements} elements");
        }
        // The alignment table's copies, and short ones: a word, a partial warp, a partial block.
        for words in Words::rows(floats) {
            let measured = sweep.measure_words(words, 2).unwrap();
            assert_eq!(measured.wrong, 0, "{floats} floats, {words:?}");
            for count in [1, 7, 333] {
                let short = Words {
                    floats: count * words.bytes / 4,
                    ..words
                };
                assert_eq!(sweep.measure_words(short, 1).unwrap().wrong, 0, "{short:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_bank_walks_end_where_the_cpu_says_and_every_transpose_is_right() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for word in Word::ALL {
        for (stride, steps, blocks) in [(1, 1, 1), (3, 777, 5), (16, 64, 2), (32, 4097, 3)] {
            let (_timing, wrong) = banks::walk(&module, word, stride, steps, blocks, 1).unwrap();
            assert_eq!(wrong, 0, "{word:?} stride {stride} steps {steps}");
        }
    }
    // The Korean notes' elements, at step counts that wrap each table (1344 Float3s, 16384 chars).
    for element in Element::ALL {
        for (steps, blocks) in [(0, 1), (1, 1), (43, 3), (1345, 2), (16385, 1)] {
            let (_timing, wrong) = banks::element_walk(&module, element, steps, blocks, 1).unwrap();
            assert_eq!(wrong, 0, "{element:?} steps {steps}");
        }
    }
    for (rows, cols) in [(1, 1), (33, 65), (100, 37), (1000, 1001), (32, 256)] {
        let input = banks::random_matrix(rows, cols, (rows * cols) as u64);
        for kernel in Transpose::ALL {
            let (_timing, wrong) = banks::transpose(&module, kernel, &input, rows, cols, gpu.info.l2_bytes, 1).unwrap();
            assert_eq!(wrong, 0, "{kernel:?} {rows} x {cols}");
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_register_cap_computes_what_the_cpu_computes() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    for (n, rounds) in [(1, 0), (255, 1), (1000, 7), (4099, 33)] {
        let work = Work::new(n, rounds, 1, n as u64);
        for variant in Variant::all(gpu.info.arch()).unwrap() {
            let measured = registers::run(&variant, &work, 1).unwrap();
            assert_eq!(
                (measured.checked, measured.wrong),
                (n, 0),
                "{} with {n} threads, {rounds} rounds",
                variant.label()
            );
            assert!(measured.blocks_per_multiprocessor > 0);
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn the_gather_is_right_under_every_cache_preference() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (bytes, threads, reads) in [(4, 1, 1), (12_344, 1000, 5), (100 << 10, 4097, 64)] {
        let gather = cache::Gather::new(bytes, threads, reads, 3);
        for preference in Preference::all() {
            let (_timing, wrong) = cache::measure(&module, &gather, preference, 1).unwrap();
            assert_eq!(wrong, 0, "{} table {bytes} B, {threads} threads", preference.name());
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_read_path_gathers_the_same_elements() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for (table, n) in [(1, 1), (1000, 1001), (1 << 20, 70_000)] {
        for pattern in Pattern::ALL {
            let gather = readonly::Gather::new(table, n, pattern, table as u64).unwrap();
            for path in Path::ALL {
                let (_timing, wrong) = readonly::measure(&module, &gather, path, 1).unwrap();
                assert_eq!(wrong, 0, "{path:?} {pattern:?} table {table}, {n} elements");
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_small_word_copy_changes_every_byte_and_nothing_beside() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let module = gpu.load(&kernels::MEMORY).unwrap();
    let (l2, peak) = (gpu.info.l2_bytes, gpu.info.peak_bandwidth());
    for (floats, seed) in [(1_000_003, 6), (4096, 2)] {
        let mut sweep = Sweep::new(&module, floats, l2, peak, seed).unwrap();
        // One float (a partial warp of every word size), a partial block, a partial grid, and the
        // table's own launch: the floats of the 32-bit row.
        let table = Words::fitting(4, 0, floats).access().elements;
        let from_start = |elements| Access {
            elements,
            ..Access::fitting(1, 0, floats)
        };
        let lengths = [1, 7, 333, 3 * 1024 + 5, table];
        for (elements, small) in lengths.into_iter().flat_map(|e| Small::ALL.map(|s| (e, s))) {
            let wrong = small_words::measure(&module, &mut sweep, small, from_start(elements), 2)
                .unwrap()
                .wrong;
            assert_eq!(wrong, 0, "{floats} floats, {elements} elements, {small:?}");
        }
        // The check can fail: bytes plus 1 checked as halves plus 1 differ in most floats.
        // 2048 floats and the neighbour the check reads fit the smaller buffer too.
        let n = 2048;
        let access = from_start(n);
        let copy = module.get_function("word_copy_8").unwrap();
        let measured = sweep
            .measure_other_as(
                access,
                1,
                |x| Small::Halves.changed(x),
                |stream, input, output| {
                    // __global__ void word_copy_8(const unsigned char* in, unsigned char* out, int n)
                    // SAFETY: the arguments match the kernel's C signature in order; 4 x n bytes lie
                    // inside both of the sweep's buffers.
                    unsafe { cust::launch!(copy<<<16, 256, 0, stream>>>(input, output, 4 * n as i32)) }?;
                    Ok(())
                },
            )
            .unwrap();
        let wrong = measured.wrong;
        assert!(
            wrong > n / 2,
            "a byte copy checked as a copy of halves: only {wrong} of {n} wrong"
        );
    }
}

#[test]
#[ignore = "needs a GPU: bash gpu-bundle/run.sh"]
fn every_line_read_sums_what_the_cpu_sums() {
    let gpu = Gpu::open(0).expect(NEEDS_GPU);
    let l2 = gpu.info.l2_bytes as usize;
    let module = gpu.load(&kernels::MEMORY).unwrap();
    for path in ReadPath::ALL {
        for (blocks, seed) in [(1, 3), (7, 5), (2 * gpu.info.multiprocessors, 8)] {
            let measured = transactions::measure(&module, path, l2, blocks, 2, seed).unwrap();
            assert_eq!(measured.wrong, 0, "{path:?}, {blocks} blocks, seed {seed}");
            assert_eq!(measured.threads, blocks as usize * transactions::BLOCK as usize);
            assert!(measured.bandwidth() > 0.0, "{path:?}");
        }
    }
}
