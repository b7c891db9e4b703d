//! `--profile` and `--trace` rebuilt from a run on a GPU (issue 23): the fixtures are what
//! `lab-streams --mode fifteen --profile --trace streams-fifteen.json` printed and wrote on an H100
//! (gpu-bundle of this change, CUPTI 13.0). Reading the trace back and summarising it must give the
//! table the lab printed, line for line, and the trace's windows the window table's numbers.

use profiler::{summary, trace};
use serde_json::Value;

const TRACE: &str = include_str!("fixtures/streams-fifteen-h100.json");
const OUTPUT: &str = include_str!("fixtures/streams-fifteen-h100.log");

/// The lines of the printed report after `heading`, up to the next blank line.
fn printed_after(heading: &str) -> Vec<&'static str> {
    OUTPUT
        .lines()
        .skip_while(|line| !line.starts_with(heading))
        .skip(1)
        .take_while(|line| !line.is_empty())
        .collect()
}

#[test]
fn the_summary_of_the_saved_trace_is_the_table_the_lab_printed() {
    let written: Value = serde_json::from_str(TRACE).unwrap();
    let activities = trace::read(&written).unwrap();
    assert_eq!(
        activities.len(),
        258,
        "the lab said: Trace of 258 kernels, copies and memsets"
    );
    let rebuilt = summary::table(&activities, 60);
    assert_eq!(rebuilt.lines().collect::<Vec<_>>(), printed_after("The whole run"));
    // nvprof's shares add up, and the calls are the copies and kernels of the Korean sample's runs.
    let lines = summary::lines(&activities);
    let calls: usize = lines.iter().map(|line| line.calls).sum();
    assert_eq!(calls, activities.len());
    assert_eq!(
        lines
            .iter()
            .find(|line| line.name == "add_five_times")
            .map(|line| line.calls),
        Some(64)
    );
}

#[test]
fn the_traces_windows_carry_the_numbers_of_the_printed_window_table() {
    let written: Value = serde_json::from_str(TRACE).unwrap();
    let windows: Vec<&Value> = written["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["cat"] == "window")
        .collect();
    let rows: Vec<&str> = printed_after("Timed windows").into_iter().skip(2).collect();
    assert_eq!(windows.len(), rows.len());
    for (window, row) in windows.iter().zip(rows) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(window["name"].as_str(), Some(cells[1]), "{row}");
        assert_eq!(
            format!("{:.4}", window["args"]["event_ms"].as_f64().unwrap()),
            cells[5],
            "{row}"
        );
        assert_eq!(
            format!("{:.4}", window["args"]["cupti_ms"].as_f64().unwrap()),
            cells[6],
            "{row}"
        );
        assert_eq!(
            format!("{:.1}", window["args"]["work_per_run"].as_f64().unwrap()),
            cells[4],
            "{row}"
        );
    }
    // Every complete event has what the Trace Event Format requires.
    for event in written["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["ph"] == "X")
    {
        assert!(
            event["name"].is_string()
                && event["ts"].is_number()
                && event["dur"].is_number()
                && event["pid"].is_u64()
                && event["tid"].is_u64(),
            "{event}"
        );
    }
}

/// What `ncu --csv --page raw --print-units base --print-kernel-base mangled --metrics ...` wrote for
/// `lab-memory --mode banks --repetitions 1` on an H100 (Nsight Compute 2025.3.1; launches 0 to 7 and
/// 124 to 135 of 136 kept).
const NCU: &str = include_str!("fixtures/lab-memory-banks-ncu-h100.csv");

#[test]
fn ncus_saved_output_gives_the_n_way_bank_conflicts_the_lab_predicts() {
    use profiler::counters::parse_csv;
    let launches = parse_csv(NCU).unwrap();
    assert_eq!(launches.len(), 20);
    let per_load = |i: usize| {
        let launch = &launches[i];
        launch.values["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
            / launch.values["smsp__inst_executed_op_shared_ld.sum"]
    };
    let names: Vec<&str> = launches.iter().map(|launch| launch.kernel.as_str()).collect();
    assert_eq!(
        &names[..4],
        ["bank_walk_32", "bank_walk_32", "bank_walk_64", "bank_walk_64"]
    );
    // Warm-up and timed launch of each: 4-byte words at stride 1 (no conflict), 8-byte words at
    // stride 1 (two wavefronts, half a warp each), 4-byte at stride 2 (2-way), 8-byte at stride 2.
    let ways: Vec<f64> = (0..8).map(per_load).collect();
    assert_eq!(ways, [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 4.0, 4.0]);
    // Stride 32 in 4-byte words: all 32 lanes in one bank.
    assert_eq!((names[8], per_load(8)), ("bank_walk_32", 32.0));
    // The transpose through tile[32][32] conflicts 32 ways on its column reads; one padding column
    // takes that away.
    assert_eq!(names[16], "transpose_shared");
    assert!((per_load(16) - 32.46).abs() < 0.01, "{}", per_load(16));
    assert_eq!(names[18], "transpose_padded");
    assert!((per_load(18) - 1.12).abs() < 0.01, "{}", per_load(18));
    let occupancy = launches[0].values["sm__warps_active.avg.pct_of_peak_sustained_active"];
    assert!((occupancy - 99.51).abs() < 1e-9, "{occupancy}");
}
