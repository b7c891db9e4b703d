//! `--mode fifteen`: the Korean notes' sample. 15 streams over N = 512 x 65535 ints, each copying its
//! part in, adding In to Out five times and copying Out back; timed with events, against one stream.

use anyhow::Result;
use common::check_cuda;
use common::context::new_streams;
use common::timing::time_on_stream;
use cust::module::Module;
use cust::stream::{Stream, StreamFlags};
use lab_streams::vector::AddFiveTimes;

use crate::Args;

pub const N: usize = 512 * 65535;

pub fn run(module: &Module, args: &Args) -> Result<bool> {
    let add = check_cuda!(module.get_function("add_five_times"))?;
    let main = check_cuda!(Stream::new(StreamFlags::DEFAULT, None))?;
    let mut job = AddFiveTimes::random(N, args.seed)?;
    println!("\nKorean notes' sample: N = 512 x 65535 = {N} ints, Out += In five times, pageable host memory\n");
    println!("| streams | GPU time in ms | speedup | check |");
    println!("|---------|----------------|---------|-------|");
    let mut passed = true;
    let mut one_stream_ms = None;
    let mut last = None;
    for count in [1, 15] {
        let streams = new_streams(count)?;
        let timing = time_on_stream(&main, 1, args.repetitions as usize, || job.run(&add, &main, &streams))?;
        check_cuda!(main.synchronize())?;
        let wrong = job.wrong_elements();
        passed &= wrong == 0;
        let baseline = *one_stream_ms.get_or_insert(timing.median_ms());
        println!(
            "| {count} | {:.3} | {:.2}x | {} |",
            timing.median_ms(),
            baseline / timing.median_ms(),
            if wrong == 0 { "PASS".to_string() } else { format!("FAIL ({wrong} wrong)") }
        );
        last = Some(timing);
    }
    if let Some(timing) = last {
        println!("\n15 streams: {timing}");
    }
    Ok(passed)
}
