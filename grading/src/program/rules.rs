//! What the rules of weeks 5 and 6 measure on a program's trace: pure functions of its records, so
//! that the CI tests them on saved traces, without a GPU. Times are nanoseconds of CUPTI's clock;
//! overlapping work is counted once (the union of the intervals), however many records overlap.

use std::collections::BTreeSet;

use profiler::records::{Activity, Direction, What};

/// The bytes of every copy in `direction`.
pub fn copied_bytes(activities: &[Activity], direction: Direction) -> u64 {
    copies(activities)
        .filter(|(dir, _, _)| *dir == direction)
        .map(|(_, bytes, _)| bytes)
        .sum()
}

/// How many copies there were, and how many of them had pageable host memory on one end.
pub fn pageable_copies(activities: &[Activity]) -> (usize, usize) {
    let all: Vec<bool> = copies(activities).map(|(_, _, pageable)| pageable).collect();
    (all.iter().filter(|pageable| **pageable).count(), all.len())
}

/// The streams that carried a kernel or a copy (a memset alone does not count).
pub fn streams_with_work(activities: &[Activity]) -> usize {
    activities
        .iter()
        .filter(|a| !matches!(a.what, What::Memset { .. }))
        .map(|a| (a.device, a.stream))
        .collect::<BTreeSet<_>>()
        .len()
}

/// How much of the work that could overlap did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    /// The time during which both kinds of work ran at once (on different streams, for kernels and
    /// copies).
    pub overlapped_ns: u64,
    /// The most that could have: the shorter of the two kinds' busy times.
    pub possible_ns: u64,
}

impl Overlap {
    /// `overlapped` as a share of `possible`, 0 where nothing could overlap.
    pub fn share(&self) -> f64 {
        if self.possible_ns == 0 {
            0.0
        } else {
            self.overlapped_ns as f64 / self.possible_ns as f64
        }
    }
}

/// Kernels against copies on other streams: the pipeline's whole point. The share is of the
/// shorter of the kernels' and the copies' busy time, so that it means the same where the kernels
/// take ten times as long as the copies (a T4) as where they take as long (an H100).
pub fn kernel_copy_overlap(activities: &[Activity]) -> Overlap {
    let kernels: Vec<&Activity> = activities
        .iter()
        .filter(|a| matches!(a.what, What::Kernel { .. }))
        .collect();
    // Only copies across the bus: a copy within the GPU's memory beside a kernel is no pipelining.
    let copies: Vec<&Activity> = activities
        .iter()
        .filter(|a| {
            matches!(a.what, What::Copy { direction, .. } if matches!(direction, Direction::HtoD | Direction::DtoH))
        })
        .collect();
    let both = kernels
        .iter()
        .flat_map(|k| {
            copies
                .iter()
                .filter(|c| c.stream != k.stream)
                .filter_map(|c| intersection(k, c))
        })
        .collect();
    Overlap {
        overlapped_ns: union_ns(both),
        possible_ns: busy_ns(&kernels).min(busy_ns(&copies)),
    }
}

/// Copies to the GPU against copies to the host: both copy engines at work at once.
pub fn both_directions(activities: &[Activity]) -> Overlap {
    let direction = |wanted: Direction| -> Vec<&Activity> {
        activities
            .iter()
            .filter(|a| matches!(a.what, What::Copy { direction, .. } if direction == wanted))
            .collect()
    };
    let (to_gpu, to_host) = (direction(Direction::HtoD), direction(Direction::DtoH));
    let both = to_gpu
        .iter()
        .flat_map(|h| to_host.iter().filter_map(|d| intersection(h, d)))
        .collect();
    Overlap {
        overlapped_ns: union_ns(both),
        possible_ns: busy_ns(&to_gpu).min(busy_ns(&to_host)),
    }
}

/// The program's GPU time: how long the GPU had a kernel or a copy of it running (the union of
/// their intervals). Not first start to last end: a program's first CUDA calls set up the context
/// and its streams, which leaves the GPU idle for milliseconds that are no fault of the pipeline.
pub fn gpu_busy_ns(activities: &[Activity]) -> u64 {
    let work: Vec<&Activity> = activities
        .iter()
        .filter(|a| !matches!(a.what, What::Memset { .. }))
        .collect();
    busy_ns(&work)
}

/// How long after the GPU's last kernel or copy ended the program began to read its results (the
/// last mark of one of `names`): negative where it read them while work was still running (no wait,
/// or a wait for the wrong thing), `None` where it never reached any of them.
pub fn read_after_ns(activities: &[Activity], marks: &[(u64, String)], names: &[&str]) -> Option<i64> {
    let read = marks
        .iter()
        .filter(|(_, mark)| names.contains(&mark.as_str()))
        .map(|(time, _)| *time)
        .max()?;
    Some(read as i64 - last_end_ns(activities) as i64)
}

/// When the GPU's last kernel or copy ended (0 where there was none).
fn last_end_ns(activities: &[Activity]) -> u64 {
    activities
        .iter()
        .filter(|a| !matches!(a.what, What::Memset { .. }))
        .map(|a| a.end_ns)
        .max()
        .unwrap_or(0)
}

/// The last of `waits` (calls that wait for the GPU, as the recorder saw them return) that returned
/// once the GPU's last kernel or copy had ended, and at most `read_after_ns` after that end, that is
/// before the read ([`read_after_ns`]): the call the program waited in. `None` for a program that
/// read after the GPU was done without waiting for it, which was lucky: on a run where its GPU is
/// slower, it reads too early.
pub fn waited_in<'a>(activities: &[Activity], waits: &'a [(u64, String)], read_after_ns: i64) -> Option<&'a str> {
    let end = last_end_ns(activities);
    waits
        .iter()
        .filter(|(time, _)| *time >= end && (*time - end) as i64 <= read_after_ns)
        .max_by_key(|(time, _)| *time)
        .map(|(_, name)| name.as_str())
}

/// How many streams carried a whole job: a kernel, at least `to_gpu` bytes copied to the GPU and
/// at least `to_host` back. A stream with an empty kernel alone does not count.
pub fn streams_with_whole_jobs(activities: &[Activity], to_gpu: u64, to_host: u64) -> usize {
    let mut streams: std::collections::BTreeMap<(u32, u32), (bool, u64, u64)> = Default::default();
    for a in activities {
        let (kernel, gpu, host) = streams.entry((a.device, a.stream)).or_default();
        match a.what {
            What::Kernel { .. } => *kernel = true,
            What::Copy {
                direction: Direction::HtoD,
                bytes,
                ..
            } => *gpu += bytes,
            What::Copy {
                direction: Direction::DtoH,
                bytes,
                ..
            } => *host += bytes,
            _ => {}
        }
    }
    streams
        .values()
        .filter(|(kernel, gpu, host)| *kernel && *gpu >= to_gpu && *host >= to_host)
        .count()
}

/// How long the GPU had a kernel of the program running.
pub fn kernel_busy_ns(activities: &[Activity]) -> u64 {
    let kernels: Vec<&Activity> = activities
        .iter()
        .filter(|a| matches!(a.what, What::Kernel { .. }))
        .collect();
    busy_ns(&kernels)
}

fn copies(activities: &[Activity]) -> impl Iterator<Item = (Direction, u64, bool)> + '_ {
    activities.iter().filter_map(|a| match a.what {
        What::Copy {
            direction,
            bytes,
            pageable,
        } => Some((direction, bytes, pageable)),
        _ => None,
    })
}

fn intersection(a: &Activity, b: &Activity) -> Option<(u64, u64)> {
    let (start, end) = (a.start_ns.max(b.start_ns), a.end_ns.min(b.end_ns));
    (start < end).then_some((start, end))
}

/// The time the activities cover together.
fn busy_ns(activities: &[&Activity]) -> u64 {
    union_ns(activities.iter().map(|a| (a.start_ns, a.end_ns)).collect())
}

/// The length of the union of the intervals.
fn union_ns(mut intervals: Vec<(u64, u64)>) -> u64 {
    intervals.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for (start, end) in intervals {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e.saturating_sub(s);
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + current.map_or(0, |(s, e)| e.saturating_sub(s))
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn work(what: What, stream: u32, start_ns: u64, end_ns: u64) -> Activity {
        Activity {
            what,
            name: String::new(),
            start_ns,
            end_ns,
            device: 0,
            stream,
            correlation: 0,
            channel: 0,
        }
    }

    pub fn copy(direction: Direction, stream: u32, start: u64, end: u64) -> Activity {
        let what = What::Copy {
            direction,
            bytes: 100,
            pageable: false,
        };
        work(what, stream, start, end)
    }

    pub fn kernel(stream: u32, start: u64, end: u64) -> Activity {
        let what = What::Kernel {
            grid: [1, 1, 1],
            block: [256, 1, 1],
        };
        work(what, stream, start, end)
    }

    /// The slides' pipeline on two streams, each step 10 ns: in0 in1 | k0 k1 | out0 out1, every
    /// stage one step behind the one before.
    fn two_streams() -> Vec<Activity> {
        use Direction::*;
        vec![
            copy(HtoD, 1, 0, 10),
            copy(HtoD, 2, 10, 20),
            kernel(1, 10, 20),
            kernel(2, 20, 30),
            copy(DtoH, 1, 20, 30),
            copy(DtoH, 2, 30, 40),
        ]
    }

    #[test]
    fn a_stream_counts_only_with_a_kernel_and_its_copies_both_ways() {
        use Direction::*;
        let mut work = two_streams();
        assert_eq!(streams_with_whole_jobs(&work, 100, 100), 2);
        assert_eq!(streams_with_whole_jobs(&work, 101, 100), 0);
        // An empty kernel on a stream of its own, and a stream of copies without a kernel.
        work.extend([kernel(3, 40, 41), copy(HtoD, 4, 41, 50), copy(DtoH, 4, 50, 60)]);
        assert_eq!(streams_with_whole_jobs(&work, 100, 100), 2);
        assert_eq!(streams_with_work(&work), 4);
    }

    #[test]
    fn a_copy_within_the_gpu_beside_a_kernel_is_no_overlap() {
        use Direction::*;
        let serial = vec![
            copy(HtoD, 1, 0, 10),
            kernel(1, 10, 20),
            copy(DtoD, 2, 10, 20),
            copy(DtoH, 1, 20, 30),
        ];
        assert_eq!(kernel_copy_overlap(&serial).overlapped_ns, 0);
    }

    #[test]
    fn a_pipeline_overlaps_kernels_and_copies_and_a_serial_run_does_not() {
        let pipeline = kernel_copy_overlap(&two_streams());
        // k0 beside in1 and k1 beside out0: 20 ns of the kernels' 20.
        assert_eq!(
            pipeline,
            Overlap {
                overlapped_ns: 20,
                possible_ns: 20
            }
        );
        assert_eq!(pipeline.share(), 1.0);
        let serial: Vec<Activity> = two_streams()
            .into_iter()
            .enumerate()
            .map(|(i, mut a)| {
                (a.stream, a.start_ns, a.end_ns) = (1, 10 * i as u64, 10 * i as u64 + 10);
                a
            })
            .collect();
        assert_eq!(kernel_copy_overlap(&serial).share(), 0.0);
        // Work on the same stream never counts, even where the clocks say it overlapped.
        let same_stream = [kernel(1, 0, 10), copy(Direction::HtoD, 1, 5, 15)];
        assert_eq!(kernel_copy_overlap(&same_stream).overlapped_ns, 0);
        assert_eq!(kernel_copy_overlap(&[]).share(), 0.0);
    }

    #[test]
    fn overlapping_intervals_count_once() {
        use Direction::*;
        // Two copies on two streams, both beside one kernel over the same 5 ns.
        let work = [kernel(1, 0, 10), copy(HtoD, 2, 5, 10), copy(DtoH, 3, 5, 10)];
        assert_eq!(kernel_copy_overlap(&work).overlapped_ns, 5);
        assert_eq!(both_directions(&work).overlapped_ns, 5);
        assert_eq!(union_ns(vec![(0, 10), (2, 3), (10, 12), (20, 25)]), 17);
    }

    #[test]
    fn both_directions_needs_a_copy_each_way_at_once() {
        use Direction::*;
        assert_eq!(both_directions(&two_streams()).overlapped_ns, 0);
        let four = [copy(HtoD, 3, 20, 30), copy(DtoH, 1, 20, 30)];
        assert_eq!(both_directions(&four).share(), 1.0);
    }

    #[test]
    fn counts_streams_bytes_pageable_copies_kernels_and_the_span() {
        let mut work = two_streams();
        work.push(work_memset());
        assert_eq!(streams_with_work(&work), 2);
        assert_eq!(copied_bytes(&work, Direction::HtoD), 200);
        assert_eq!(copied_bytes(&work, Direction::DtoD), 0);
        assert_eq!(kernel_busy_ns(&work), 20);
        assert_eq!(gpu_busy_ns(&work), 40);
        assert_eq!(gpu_busy_ns(&[kernel(1, 0, 10), kernel(2, 5_000, 5_010)]), 20);
        assert_eq!(pageable_copies(&work), (0, 4));
        if let What::Copy { pageable, .. } = &mut work[0].what {
            *pageable = true;
        }
        assert_eq!(pageable_copies(&work), (1, 4));
        assert_eq!(gpu_busy_ns(&[]), 0);
    }

    #[test]
    fn results_read_before_the_last_copy_ended_count_as_negative() {
        let work = two_streams(); // the last copy back ends at 40
        let mark = |time: u64| vec![(time, "write_floats".to_string())];
        assert_eq!(read_after_ns(&work, &mark(45), &["write_floats"]), Some(5));
        assert_eq!(read_after_ns(&work, &mark(25), &["write_floats"]), Some(-15));
        // The last read counts: a program that wrote early, then waited and wrote again, is right.
        let twice = [(25, "write_floats".to_string()), (41, "write_floats".to_string())];
        assert_eq!(read_after_ns(&work, &twice, &["write_floats"]), Some(1));
        assert_eq!(read_after_ns(&work, &mark(45), &["other"]), None);
    }

    #[test]
    fn only_a_wait_between_the_gpus_last_work_and_the_read_counts() {
        let work = two_streams(); // the last copy back ends at 40; the program reads at 45
        let waits = |calls: &[(u64, &str)]| -> Vec<(u64, String)> {
            calls.iter().map(|&(time, name)| (time, name.to_string())).collect()
        };
        let synchronized = waits(&[(30, "cudaStreamSynchronize"), (42, "cudaDeviceSynchronize")]);
        assert_eq!(waited_in(&work, &synchronized, 5), Some("cudaDeviceSynchronize"));
        // Returned before the GPU was done (a wait for one stream of two), or after the read.
        assert_eq!(waited_in(&work, &waits(&[(30, "cudaStreamSynchronize")]), 5), None);
        assert_eq!(waited_in(&work, &waits(&[(46, "cudaFree")]), 5), None);
        assert_eq!(
            waited_in(&work, &waits(&[(40, "cudaStreamQuery"), (45, "cudaFree")]), 5),
            Some("cudaFree")
        );
        assert_eq!(waited_in(&work, &[], 5), None);
    }

    fn work_memset() -> Activity {
        work(What::Memset { bytes: 8 }, 9, 500, 600)
    }
}
