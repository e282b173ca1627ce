//! The renderer on a clock the tests drive: the bar and its redraws, the plain lines and
//! their pace, the time left, an unannounced size, and DSH's log lines.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;
use crate::install::{InstallEvent, InstallStep};

const MIB: u64 = 1024 * 1024;

fn started(total: Option<u64>) -> InstallEvent {
    InstallEvent::DownloadStarted {
        url: "https://user:secret@dl.example/a.zip?token=t0k".into(),
        total,
    }
}

fn got(bytes: u64, total: Option<u64>) -> InstallEvent {
    InstallEvent::Downloaded { bytes, total }
}

/// A whole install's events at `t0 + ms`, rendered; `None`s dropped.
fn render(mode: ProgressMode, events: &[(u64, InstallEvent)]) -> Vec<String> {
    let t0 = Instant::now();
    let mut renderer = InstallProgress::new(mode);
    events
        .iter()
        .filter_map(|(ms, event)| renderer.event(event, t0 + Duration::from_millis(*ms)))
        .collect()
}

/// 100 MiB at 10 MiB/s, a Downloaded every half second (every 5 MiB), then the steps.
fn install(total: Option<u64>) -> Vec<(u64, InstallEvent)> {
    let mut events = vec![
        (0, started(total)),
        (0, InstallEvent::Step(InstallStep::Download)),
    ];
    for i in 1..=20 {
        events.push((i * 500, got(i * 5 * MIB, total)));
    }
    events.extend([
        (10_000, InstallEvent::Step(InstallStep::Verify)),
        (
            11_000,
            InstallEvent::Extracting {
                path: "agy_acp_server.par".into(),
            },
        ),
        (
            11_500,
            InstallEvent::Extracting {
                path: "localharness_external".into(),
            },
        ),
        (12_000, InstallEvent::Step(InstallStep::Receipt)),
        (12_000, InstallEvent::Step(InstallStep::Rename)),
        (12_000, InstallEvent::Installed { repaired: false }),
    ]);
    events
}

#[test]
fn a_terminal_gets_a_bar_redrawn_in_place_with_rate_and_time_left() {
    let shown = render(ProgressMode::Terminal, &install(Some(100 * MIB)));
    let bars: Vec<&String> = shown.iter().filter(|s| s.starts_with('\r')).collect();
    // Every Downloaded is 500 ms after the last: each is a redraw.
    assert_eq!(bars.len(), 20, "{shown:#?}");
    assert!(
        bars.iter()
            .all(|b| b.ends_with(ERASE_LINE) && !b.contains('\n'))
    );
    assert_eq!(
        bars[3].as_str(),
        "\r[====>                   ] 20.0 MiB / 100.0 MiB  20%  10.0 MiB/s  8 s left\x1b[K",
    );
    // Every byte in: no time left is shown.
    assert_eq!(
        bars[19].as_str(),
        "\r[========================] 100.0 MiB / 100.0 MiB  100%  10.0 MiB/s\x1b[K"
    );
    assert_eq!(shown[0], "downloading the pinned server (100.0 MiB)\n");
    // The step after the bar ends its line first.
    assert_eq!(
        shown[21],
        "\ndownloaded 100.0 MiB in 10 s; checking its SHA-256\n"
    );
    assert_eq!(
        &shown[22..],
        [
            "extracting\n",
            "writing the receipt\n",
            "publishing the install\n",
            "installed the pinned server\n"
        ]
    );
}

#[test]
fn a_terminal_bar_is_redrawn_at_most_every_100_ms() {
    let t0 = Instant::now();
    let mut renderer = InstallProgress::new(ProgressMode::Terminal);
    let total = Some(1000);
    let at = |ms| t0 + Duration::from_millis(ms);
    assert!(renderer.event(&started(total), at(0)).is_some());
    assert!(renderer.event(&got(10, total), at(50)).is_none());
    assert!(renderer.event(&got(20, total), at(100)).is_some());
    assert!(renderer.event(&got(30, total), at(199)).is_none());
    // The last bytes are always drawn.
    assert!(renderer.event(&got(1000, total), at(200)).is_some());
}

#[test]
fn plain_lines_come_every_five_seconds_and_at_each_step() {
    let shown = render(ProgressMode::Lines, &install(Some(100 * MIB)));
    assert_eq!(
        shown,
        [
            "downloading the pinned server (100.0 MiB)\n",
            "downloading: 50.0 MiB of 100.0 MiB (50%), 10.0 MiB/s, about 5 s left\n",
            "downloaded 100.0 MiB in 10 s; checking its SHA-256\n",
            "extracting\n",
            "writing the receipt\n",
            "publishing the install\n",
            "installed the pinned server\n",
        ]
    );
    assert!(
        shown
            .iter()
            .all(|s| !s.contains('\r') && !s.contains('\x1b'))
    );
}

#[test]
fn a_long_download_gets_a_line_every_five_seconds_never_one_per_chunk() {
    let total = Some(1000 * MIB);
    // A chunk every 10 ms for 60 s.
    let mut events = vec![(0, started(total))];
    for i in 1..=6000 {
        events.push((i * 10, got(i * 100 * 1024, total)));
    }
    let shown = render(ProgressMode::Lines, &events);
    assert_eq!(shown.len(), 1 + 12, "{shown:#?}");
    assert_eq!(
        shown[12],
        "downloading: 585.9 MiB of 1000.0 MiB (58%), 9.8 MiB/s, about 43 s left\n"
    );
}

#[test]
fn an_unannounced_size_shows_bytes_and_rate_without_time_left() {
    let bar = render(ProgressMode::Terminal, &install(None));
    assert_eq!(
        bar[0],
        "downloading the pinned server (size not announced)\n"
    );
    assert_eq!(bar[4], "\r20.0 MiB downloaded  10.0 MiB/s\x1b[K");
    assert!(bar.iter().all(|s| !s.contains("left") && !s.contains('%')));
    let lines = render(ProgressMode::Lines, &install(None));
    assert_eq!(
        lines[1], "downloading: 50.0 MiB so far, 10.0 MiB/s\n",
        "{lines:#?}"
    );
    // With no total the end is unknown: the verify step's line reports it.
    assert_eq!(
        lines[3],
        "downloaded 100.0 MiB in 10 s; checking its SHA-256\n"
    );
}

#[test]
fn time_left_reads_in_seconds_minutes_and_hours() {
    assert_eq!(duration(Duration::from_millis(1)), "1 s");
    assert_eq!(duration(Duration::from_secs(59)), "59 s");
    assert_eq!(duration(Duration::from_secs(185)), "3 min 05 s");
    assert_eq!(duration(Duration::from_secs(3720)), "1 h 02 min");
    let t0 = Instant::now();
    let download = Download {
        started: t0,
        bytes: 10 * MIB,
        total: Some(1000 * MIB),
    };
    // 10 MiB in 100 s: 990 MiB at 0.1 MiB/s is 9900 s left.
    assert_eq!(
        progress_line(&download, t0 + Duration::from_secs(100)),
        "downloading: 10.0 MiB of 1000.0 MiB (1%), 102.4 KiB/s, about 2 h 45 min left"
    );
    // 10 MiB in 5 s: 495 s left.
    assert_eq!(
        progress_line(&download, t0 + Duration::from_secs(5)),
        "downloading: 10.0 MiB of 1000.0 MiB (1%), 2.0 MiB/s, about 8 min 15 s left"
    );
    // No time has passed: no rate, no time left.
    assert_eq!(
        progress_line(&download, t0),
        "downloading: 10.0 MiB of 1000.0 MiB (1%)"
    );
}

#[test]
fn retries_waits_and_repairs_have_their_lines_and_never_a_url() {
    let events = [
        (0, InstallEvent::WaitingForLock),
        (
            0,
            InstallEvent::Repairing {
                why: "`archive.zip.part` was left by an interrupted install".into(),
            },
        ),
        (0, started(Some(10 * MIB))),
        (1000, got(4 * MIB, Some(10 * MIB))),
        (
            2000,
            InstallEvent::Retrying {
                attempt: 2,
                reason: "stalled".into(),
            },
        ),
        (2500, started(Some(10 * MIB))),
        (3000, InstallEvent::Step(InstallStep::Verify)),
        (3000, InstallEvent::Step(InstallStep::Retire)),
        (3000, InstallEvent::Installed { repaired: true }),
        (4000, InstallEvent::Reused),
    ];
    let shown = render(ProgressMode::Terminal, &events).concat();
    assert_eq!(
        shown,
        "waiting for another install of the server to finish\n\
         repairing the install: `archive.zip.part` was left by an interrupted install\n\
         downloading the pinned server (10.0 MiB)\n\
         \r[=========>              ] 4.0 MiB / 10.0 MiB  40%  4.0 MiB/s  2 s left\x1b[K\n\
         the download failed (stalled); trying again (attempt 2)\n\
         downloading the pinned server (10.0 MiB)\n\
         downloaded 0 B in 1 s; checking its SHA-256\n\
         removing the replaced install\n\
         repaired: the pinned server is installed\n"
    );
    for secret in ["secret", "t0k", "dl.example", "http"] {
        assert!(!shown.contains(secret), "{secret} shown");
    }
}

#[test]
fn dsh_gets_prefixed_lines_through_its_log_sink() -> crate::TestResult {
    let logged = Arc::new(Mutex::new(Vec::new()));
    let into = logged.clone();
    let sink = log_sink(move |line| {
        if let Ok(mut logged) = into.lock() {
            logged.push(line);
        }
    });
    let mut config = crate::PluginConfig::from_json("{}")?.into_adapter_config()?;
    let first = Arc::new(Mutex::new(0usize));
    let counted = first.clone();
    if let ServerSource::Installed(options) = &mut config.server {
        options.progress = Some(ProgressSink(Arc::new(move |_event: &InstallEvent| {
            if let Ok(mut count) = counted.lock() {
                *count += 1;
            }
        })));
    }
    attach(&mut config, sink);
    let ServerSource::Installed(options) = &config.server else {
        return Err("the default config has no installer".into());
    };
    let progress = options.progress.clone().ok_or("no sink attached")?;
    for (_, event) in install(Some(100 * MIB)).iter().take(3) {
        (progress.0)(event);
    }
    (progress.0)(&InstallEvent::Step(InstallStep::Verify));
    let logged = logged.lock().map_err(|_| "poisoned")?.clone();
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert_eq!(
        logged[0],
        "install: downloading the pinned server (100.0 MiB)"
    );
    assert!(
        logged[1].starts_with("install: downloaded 5.0 MiB in "),
        "{logged:?}"
    );
    assert_eq!(*first.lock().map_err(|_| "poisoned")?, 4, "the first sink");
    Ok(())
}
