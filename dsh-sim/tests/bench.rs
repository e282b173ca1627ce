//! `dsh-sim bench` end to end, at the smallest size (a debug build: the figures mean
//! nothing here, only that every row is measured against its floor and that the document
//! is one `ci/bench-compare.sh` reads). Timing goals live in BENCHMARKS.md, never here.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

fn small_bench(json: &Path) {
    cargo_bin_cmd!("dsh-sim")
        .args([
            "bench",
            "--repetitions",
            "2",
            "--rounds",
            "3",
            "--parallel-rounds",
            "1",
            "--turns",
            "2",
            "--cold-turns",
            "1",
            "--floor-calls",
            "5",
            "--chunks",
            "200",
            "--memory-turns",
            "5",
            "--generations",
            "3",
            "--chat-messages",
            "2",
            "--chat-scale",
            "100",
            "--chat-pause-ms",
            "0",
            "--chat-short-pause-ms",
            "0",
            "--json",
        ])
        .arg(json)
        .assert()
        .success();
}

fn compare(old: &Path, new: &Path) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci/bench-compare.sh");
    Command::new("bash")
        .arg(script)
        .arg(old)
        .arg(new)
        .output()
        .unwrap()
}

#[test]
fn every_row_is_measured_against_its_floor_and_the_document_compares() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    small_bench(&json);
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(document["schema"], "antigravity-acp-bench/1");
    assert_eq!(document["repetitions"], 2);
    let rows = document["rows"].as_array().unwrap();
    let ids: BTreeSet<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for id in [
        "tool_round",
        "tool_round_fresh_connections",
        "parallel_64",
        "warm_vs_cold",
        "streaming_20k",
        "cold_turn",
        "cold_turn_confined",
        "rss_growth",
        "rss_per_turn_in_flight",
        "first_tool_stream",
        "parallel_64_vs_rmcp",
        "chat_growth_slope",
        "chat_growth_rss",
        "chat_256_tools_slope",
        "chat_256_tools_turn",
        "floor_rmcp_across_round_trip",
        "floor_rmcp_across_kept_round_trip",
        "floor_acp_session_prompt",
        "chat_wait",
        "chat_wait_tool_round",
        "chat_wait_first",
        "chat_wait_short_pause",
        "chat_wait_no_pause",
        "chat_wait_tools_changed",
        "chat_wait_model_changed",
    ] {
        assert!(ids.contains(id), "no row {id} in {ids:?}");
    }
    assert_eq!(ids.len(), rows.len(), "row ids repeat");
    for row in rows {
        let id = &row["id"];
        let values = row["value"]["values"].as_array().unwrap();
        assert_eq!(values.len(), 2, "{id}: one value per repetition");
        if row["value"]["kind"] == "ratio" {
            let floor = row["floor"]["values"].as_array().unwrap();
            assert!(
                floor.iter().all(|f| f.as_f64().unwrap() > 0.0),
                "{id}: floor not measured"
            );
            let figure = row["figure"]["values"].as_array().unwrap();
            // Each ratio is its own repetition's figure over its own floor.
            for ((v, f), b) in values.iter().zip(figure).zip(floor) {
                let expected = f.as_f64().unwrap() / b.as_f64().unwrap();
                assert!(
                    (v.as_f64().unwrap() - expected).abs() < 1e-9,
                    "{id}: {v} != {expected}"
                );
            }
        }
        assert_eq!(
            row["met"].is_null(),
            row["goal"].is_null(),
            "{id}: met without goal"
        );
    }
    // The comparer reads it: a document against itself is within noise everywhere.
    let same = compare(&json, &json);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
}

#[test]
fn a_ratio_worse_beyond_the_noise_is_flagged_by_the_comparer() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    small_bench(&old);
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(&old).unwrap()).unwrap();
    let rows = document["rows"].as_array_mut().unwrap();
    let round = rows.iter_mut().find(|r| r["id"] == "tool_round").unwrap();
    // Twice the old worst value: wholly outside the old spread, on the worse side.
    let worse = round["value"]["max"].as_f64().unwrap() * 2.0;
    for key in ["median", "min", "max"] {
        round["value"][key] = worse.into();
    }
    let new = dir.path().join("new.json");
    std::fs::write(&new, document.to_string()).unwrap();
    let flagged = compare(&old, &new);
    let out = String::from_utf8_lossy(&flagged.stdout);
    assert_eq!(flagged.status.code(), Some(1), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("tool_round ") && l.contains("WORSE")),
        "{out}"
    );
}
