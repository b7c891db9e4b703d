//! Placing the bars: copies by copy engine, CUPTI's records in place of stamps and events, and how
//! long kernels and copies overlapped.

use super::{Kind, Source, Span};

/// Puts CUPTI's record of each operation (`records`: first start and last end in ns, in the order
/// of `spans`) in place of the stamps' and events' times, if CUPTI recorded every one. The two
/// clocks are lined up on the operations' ends, which both measure exactly (a kernel's last block, the
/// event after a copy): the median difference of the ends is the offset.
pub fn use_cupti_records(spans: &mut [Span], records: &[Option<(u64, u64)>]) {
    let Some(records) = records.iter().copied().collect::<Option<Vec<(u64, u64)>>>() else {
        return;
    };
    if records.len() != spans.len() || spans.is_empty() {
        return;
    }
    let mut offsets: Vec<f64> = spans
        .iter()
        .zip(&records)
        .map(|(span, (_, end))| span.end_ms - *end as f64 / 1e6)
        .collect();
    offsets.sort_by(f64::total_cmp);
    let offset_ms = offsets[offsets.len() / 2];
    for (span, (start, end)) in spans.iter_mut().zip(records) {
        span.source = Source::Cupti {
            stamps_start_ms: span.start_ms,
            stamps_end_ms: span.end_ms,
        };
        span.start_ms = start as f64 / 1e6 + offset_ms;
        span.end_ms = end as f64 / 1e6 + offset_ms;
    }
}

/// How far CUPTI's bars and the stamps' and events' differ, in µs: the largest difference of a
/// kernel's start or end, of a copy's end, and of a copy's (inferred) start. `None` for bars that
/// are not CUPTI's.
pub fn disagreement_us(spans: &[Span]) -> Option<(f64, f64, f64)> {
    let mut worst = (0.0_f64, 0.0_f64, 0.0_f64);
    for span in spans {
        let Source::Cupti {
            stamps_start_ms,
            stamps_end_ms,
        } = span.source
        else {
            return None;
        };
        let (start, end) = (
            (span.start_ms - stamps_start_ms).abs() * 1e3,
            (span.end_ms - stamps_end_ms).abs() * 1e3,
        );
        if span.kind == Kind::Kernel {
            worst.0 = worst.0.max(start).max(end);
        } else {
            worst.1 = worst.1.max(end);
            worst.2 = worst.2.max(start);
        }
    }
    (!spans.is_empty()).then_some(worst)
}

/// Starts each copy when its copy engine was free: no earlier than the end of the copy on the same
/// engine that finished before it. Events give a copy's end exactly (the event after it fires when it
/// is done) but its start only as the moment its stream reached it. With two or more copy engines
/// (`copy_engines`, the device's `asyncEngineCount`) each direction has its own and runs its copies
/// one at a time; with one (or none), every copy waits for the one before it, in either direction.
pub fn place_copies(spans: &mut [Span], copy_engines: u32) {
    let queues: &[&[Kind]] = if copy_engines >= 2 {
        &[&[Kind::CopyIn], &[Kind::CopyOut]]
    } else {
        &[&[Kind::CopyIn, Kind::CopyOut]]
    };
    for kinds in queues {
        let mut order: Vec<usize> = (0..spans.len()).filter(|&i| kinds.contains(&spans[i].kind)).collect();
        order.sort_by(|&x, &y| spans[x].end_ms.total_cmp(&spans[y].end_ms));
        let mut engine_free_ms = f64::NEG_INFINITY;
        for i in order {
            spans[i].start_ms = spans[i].start_ms.max(engine_free_ms);
            engine_free_ms = spans[i].end_ms;
        }
    }
}

/// How long kernels ran, how long copies ran, and how long both ran at once (on any streams), in ms:
/// what the chronogram shows, as numbers.
pub fn overlap(spans: &[Span]) -> (f64, f64, f64) {
    let busy = |keep: &dyn Fn(Kind) -> bool| {
        union(
            spans
                .iter()
                .filter(|s| keep(s.kind))
                .map(|s| (s.start_ms, s.end_ms))
                .collect(),
        )
    };
    let kernels = busy(&|kind| kind == Kind::Kernel);
    let copies = busy(&|kind| kind != Kind::Kernel);
    let both: f64 = kernels
        .iter()
        .flat_map(|k| copies.iter().map(move |c| (k.1.min(c.1) - k.0.max(c.0)).max(0.0)))
        .sum();
    let length = |set: &[(f64, f64)]| set.iter().map(|(a, b)| b - a).sum::<f64>();
    // `+ 0.0`: an empty sum is -0.0, which would print as "-0.0 ms".
    (length(&kernels) + 0.0, length(&copies) + 0.0, both + 0.0)
}

/// Merges intervals into disjoint ones, sorted.
fn union(mut intervals: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    intervals.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for (start, end) in intervals {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::test_span as span;

    #[test]
    fn cuptis_records_replace_the_bars_lined_up_on_the_ends_and_the_differences_are_reported() {
        // Stamps and events: a copy in (start inferred at 0), the kernel, a copy out.
        let mut spans = vec![
            span(0, Kind::CopyIn, 0.0, 1.0),
            span(0, Kind::Kernel, 1.010, 3.0),
            span(0, Kind::CopyOut, 3.0, 3.5),
        ];
        // CUPTI, on its own clock: the copy really started 0.2 ms in; ends agree but for 2 us.
        let records = [
            Some((5_200_000, 6_000_000)),
            Some((6_012_000, 8_002_000)),
            Some((8_010_000, 8_500_000)),
        ];
        use_cupti_records(&mut spans, &records);
        let offset = 1.0 - 6.0; // the median of the ends' differences: 1 - 6, 3 - 8.002, 3.5 - 8.5
        assert!((spans[0].start_ms - (5.2 + offset)).abs() < 1e-9, "{spans:?}");
        assert_eq!(
            spans[1].source,
            Source::Cupti {
                stamps_start_ms: 1.010,
                stamps_end_ms: 3.0
            }
        );
        let (kernels, copy_ends, copy_starts) = disagreement_us(&spans).unwrap();
        assert!(
            (kernels - 2.0).abs() < 1e-6 && copy_ends.abs() < 1e-6 && (copy_starts - 200.0).abs() < 1e-6,
            "{kernels} {copy_ends} {copy_starts}"
        );
    }

    #[test]
    fn without_a_record_for_every_operation_the_stamps_stay() {
        let mut spans = vec![span(0, Kind::CopyIn, 0.0, 1.0), span(0, Kind::Kernel, 1.0, 2.0)];
        let before = spans.clone();
        use_cupti_records(&mut spans, &[Some((0, 10)), None]);
        assert_eq!(spans, before);
        assert_eq!(disagreement_us(&spans), None);
    }

    #[test]
    fn overlap_counts_time_when_copies_and_kernels_run_together() {
        let spans = vec![
            span(0, Kind::CopyIn, 0.0, 2.0),
            span(0, Kind::Kernel, 2.0, 7.0),
            span(1, Kind::CopyIn, 2.0, 4.0),
            span(1, Kind::Kernel, 7.0, 9.0),
            span(0, Kind::CopyOut, 7.0, 8.0),
        ];
        // Kernels 2-9 (7 ms), copies 0-4 and 7-8 (5 ms), both at 2-4 and 7-8 (3 ms).
        assert_eq!(overlap(&spans), (7.0, 5.0, 3.0));
        let none = overlap(&[]);
        assert_eq!(none, (0.0, 0.0, 0.0));
        assert!(
            !format!("{:.1} {:.1} {:.1}", none.0, none.1, none.2).contains('-'),
            "{none:?}"
        );
    }

    #[test]
    fn copies_of_one_direction_start_when_the_one_before_them_ended() {
        // Four streams reach their copies in at 0 ms; the engine runs them one after another, 5 ms each.
        let mut spans: Vec<Span> = (0..4)
            .map(|lane| span(lane, Kind::CopyIn, 0.0, 5.0 * (lane + 1) as f64))
            .collect();
        // Copies out are placed on their own engine; a kernel is left alone.
        spans.push(span(0, Kind::CopyOut, 6.0, 8.0));
        spans.push(span(1, Kind::CopyOut, 5.5, 9.0));
        spans.push(span(2, Kind::Kernel, 1.0, 30.0));
        // A copy its stream reached after the engine was free keeps its own start.
        spans.push(span(3, Kind::CopyIn, 40.0, 41.0));
        let mut one_engine = spans.clone();
        place_copies(&mut spans, 2);
        let starts: Vec<f64> = spans.iter().map(|s| s.start_ms).collect();
        assert_eq!(starts, vec![0.0, 5.0, 10.0, 15.0, 6.0, 8.0, 1.0, 40.0]);
        assert!(spans.iter().all(|s| s.start_ms <= s.end_ms));
        // One engine: a copy out waits for every copy that ended before it, in either direction.
        place_copies(&mut one_engine, 1);
        let starts: Vec<f64> = one_engine.iter().map(|s| s.start_ms).collect();
        assert_eq!(starts, vec![0.0, 9.0, 10.0, 15.0, 6.0, 8.0, 1.0, 40.0]);
    }
}
