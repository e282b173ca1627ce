#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `expect.wire` and the leak check, judged on a hand-written journal and real sockets.

use std::path::Path;

use dsh_sim::runner::judge::leak::{find_leaks, process_is_live};
use dsh_sim::runner::judge::wire::{bridge_urls, check_wire, extract};
use dsh_sim::scenario::{
    CapabilityExpectation, McpResultKind, McpServersExpectation, WireExpectations,
};
use fake_antigravity::journal::JournalEntry;
use serde_json::json;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// A scratch root absolute on every system (on Windows a path needs a drive).
const SCRATCH_ROOT: &str = if cfg!(windows) {
    "C:/nonexistent/scratch"
} else {
    "/nonexistent/scratch"
};

fn journal(bridge_header: &str, permission_answer: serde_json::Value) -> Vec<Vec<JournalEntry>> {
    let acp_in = |frame| JournalEntry::AcpIn { frame };
    let acp_out = |frame| JournalEntry::AcpOut { frame };
    vec![vec![
        JournalEntry::Started {
            pid: 999_999_999,
            args: vec![],
            cwd: format!("{SCRATCH_ROOT}/turn-1"),
            env: Default::default(),
            env_names: vec!["HOME".into(), "PATH".into()],
        },
        acp_in(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,
            "clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}),
        ),
        acp_in(
            json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/x","mcpServers":[
            {"type":"http","name":"dsh","url":"http://127.0.0.1:9/mcp",
             "headers":[{"name":"Authorization","value":bridge_header}]}]}}),
        ),
        acp_in(
            json!({"jsonrpc":"2.0","id":2,"method":"session/set_config_option",
            "params":{"sessionId":"s","configId":"model","value":"gemini-3.8-flash-low"}}),
        ),
        acp_in(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt",
            "params":{"sessionId":"s","prompt":[{"type":"text","text":"system\nuser: hello"}]}})),
        acp_out(json!({"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}})),
        acp_in(json!({"jsonrpc":"2.0","id":0,"result":{"outcome":permission_answer}})),
        JournalEntry::McpRequest {
            server: "dsh".into(),
            method: "tools/call".into(),
            params: json!({}),
            rpc_id: Some(2),
        },
        JournalEntry::McpResponse {
            server: "dsh".into(),
            method: "tools/call".into(),
            result: Some(
                json!({"content":[{"type":"text","text":"permission denied by DSH"}],"isError":true}),
            ),
            error: None,
            params: Some(json!({"name":"read_file","arguments":{}})),
            rpc_id: Some(2),
        },
        JournalEntry::Exited {
            reason: "stdin closed".into(),
        },
    ]]
}

fn full_expectations() -> WireExpectations {
    WireExpectations {
        processes: Some(1),
        mcp_tools_listed: None,
        sessions_per_process: Some(vec![1]),
        prompts_lack: Some(vec![vec!["not said".into()]]),
        acp_methods: Some(vec![vec![
            "initialize".into(),
            "session/new".into(),
            "session/set_config_option".into(),
            "session/prompt".into(),
        ]]),
        prompts: Some(1),
        prompts_contain: Some(vec![vec!["user: hello".into()]]),
        models_selected: Some(vec!["gemini-3.8-flash-low".into()]),
        authenticate: Some(vec![]),
        client_capabilities: Some(CapabilityExpectation {
            fs: Some(false),
            terminal: Some(false),
        }),
        mcp_servers: Some(McpServersExpectation::Bridge),
        permission_answers: Some(vec!["allow".into()]),
        mcp_tool_calls: Some(1),
        mcp_tool_results: Some(vec![McpResultKind::Error]),
        exits: Some(vec!["stdin closed".into()]),
        mcp_results_contain: [("read_file".to_owned(), "denied".to_owned())].into(),
        mcp_exchanges: Some(vec!["tools/call ok".into()]),
        method_counts: [("session/load".to_owned(), 0)].into(),
        update_counts: [("tool_call".to_owned(), 0)].into(),
        private_cwd: None,
        env_absent: vec!["OPENAI_API_KEY".into()],
        env_present: Vec::new(),
        disabled_tools: None,
        native_steps_withheld: Some(vec![]),
        native_actions: None,
        frames_lack: Vec::new(),
        mcp_tool_results_any_order: Some(vec![McpResultKind::Error]),
        slash_commands: Some(vec![]),
        settings_written: Some(vec![]),
    }
}

/// `mcp_tool_results_any_order` compares the outcomes as a multiset: the order of two
/// requests sent at once does not matter, their outcomes do.
#[test]
fn tool_results_in_any_order_ignore_the_order_only() {
    let response =
        |result: Option<serde_json::Value>, error: Option<&str>| JournalEntry::McpResponse {
            server: "dsh".into(),
            method: "tools/call".into(),
            result,
            error: error.map(str::to_owned),
            params: None,
            rpc_id: Some(2),
        };
    let facts = extract(&[vec![
        response(None, Some("JSON-RPC error")),
        response(Some(json!({"content": []})), None),
    ]]);
    let expect = |kinds: Vec<McpResultKind>| WireExpectations {
        mcp_tool_results_any_order: Some(kinds),
        ..WireExpectations::default()
    };
    let check = |kinds| check_wire(Some(&expect(kinds)), &facts, Path::new("/nonexistent"));
    assert!(check(vec![McpResultKind::Ok, McpResultKind::Failed]).is_empty());
    assert!(check(vec![McpResultKind::Failed, McpResultKind::Ok]).is_empty());
    assert_eq!(check(vec![McpResultKind::Ok, McpResultKind::Ok]).len(), 1);
    assert_eq!(check(vec![McpResultKind::Ok]).len(), 1);
}

/// How the fake's journal shows a 256-bit hex bearer token.
const REDACTED: &str = "Bearer <redacted len=64 hex fp=0a1b2c3d>";

fn allow() -> serde_json::Value {
    json!({"outcome":"selected","optionId":"allow"})
}

#[test]
fn a_journal_that_matches_passes_every_check() {
    for header in [format!("Bearer {TOKEN}"), REDACTED.to_owned()] {
        let facts = extract(&journal(&header, allow()));
        let failures = check_wire(
            Some(&full_expectations()),
            &facts,
            Path::new("/nonexistent"),
        );
        assert!(failures.is_empty(), "{failures:#?}");
    }
}

#[test]
fn each_mismatch_is_reported() {
    let facts = extract(&journal("Bearer short", json!({"outcome":"cancelled"})));
    let mut expect = full_expectations();
    expect.models_selected = Some(vec![]);
    expect.prompts_contain = Some(vec![vec!["not in the prompt".into()]]);
    expect.prompts_lack = Some(vec![vec!["hello".into()]]);
    expect.sessions_per_process = Some(vec![2]);
    expect.exits = Some(vec!["signal".into()]);
    expect.client_capabilities = Some(CapabilityExpectation {
        fs: Some(true),
        terminal: None,
    });
    let failures = check_wire(Some(&expect), &facts, Path::new("/nonexistent")).join("\n");
    for expected in [
        "models selected: expected [], observed [\"gemini-3.8-flash-low\"]",
        "does not contain \"not in the prompt\"",
        "session/prompt 1 contains \"hello\"",
        "session/new per server process: expected [2], observed [1]",
        "initialize advertised fs false, expected true",
        "the header is not `Authorization: Bearer <64 hex>`",
        "permission answers: expected [\"allow\"], observed [\"cancelled\"]",
        "server process exits: expected [\"signal\"], observed [\"stdin closed\"]",
    ] {
        assert!(
            failures.contains(expected),
            "missing {expected:?} in\n{failures}"
        );
    }
    assert!(
        !failures.contains("short"),
        "the token must never be echoed"
    );
}

/// `mcp_results_contain` judges each call's own result: a result that belongs to another
/// call (or a tool never called) fails.
#[test]
fn each_tool_result_is_checked_against_its_own_call() {
    let facts = extract(&journal(REDACTED, allow()));
    for (tool, text) in [("read_file", "buy milk"), ("write_file", "denied")] {
        let expect = WireExpectations {
            mcp_results_contain: [(tool.to_owned(), text.to_owned())].into(),
            ..Default::default()
        };
        let failures = check_wire(Some(&expect), &facts, Path::new("/x")).join("\n");
        assert!(
            failures.contains(&format!("MCP results of {tool}: expected each to contain")),
            "{tool}: {failures}"
        );
    }
}

/// A tool is known by its DSH name or the bridge's `<name>_<12 hex>`; a name that only
/// looks like it (another suffix) is another tool.
#[test]
fn only_the_exported_form_of_a_name_is_the_same_tool() {
    for (called, same) in [
        ("read_file_0123456789ab", true),
        ("read_file_0123456789zz", false),
        ("read_file_0123456789abc", false),
    ] {
        let mut journal = journal(REDACTED, allow());
        for entry in journal[0].iter_mut() {
            if let JournalEntry::McpResponse { params, .. } = entry {
                *params = Some(json!({"name": called, "arguments": {}}));
            }
        }
        let expect = WireExpectations {
            mcp_results_contain: [("read_file".to_owned(), "denied".to_owned())].into(),
            ..Default::default()
        };
        let failures = check_wire(Some(&expect), &extract(&journal), Path::new("/x"));
        assert_eq!(failures.is_empty(), same, "{called}: {failures:?}");
    }
}

#[test]
fn script_failures_in_the_journal_always_fail() {
    let mut journal = journal(REDACTED, allow());
    journal[0].push(JournalEntry::ExpectationFailed {
        turn: 0,
        step: 2,
        message: "isError was false".into(),
    });
    journal[0].push(JournalEntry::UnmatchedPrompt {
        prompt: "...user: goodbye".into(),
    });
    let failures = check_wire(None, &extract(&journal), Path::new("/nonexistent")).join("\n");
    assert!(
        failures.contains("turn 0, step 2): isError was false"),
        "{failures}"
    );
    assert!(
        failures.contains("no scripted fake turn matches"),
        "{failures}"
    );
}

#[test]
fn no_servers_is_told_apart_from_a_bridge() {
    let mut journal = journal(REDACTED, allow());
    journal[0][2] = JournalEntry::AcpIn {
        frame: json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/x","mcpServers":[]}}),
    };
    let facts = extract(&journal);
    let expect = WireExpectations {
        mcp_servers: Some(McpServersExpectation::None),
        ..Default::default()
    };
    assert!(check_wire(Some(&expect), &facts, Path::new("/x")).is_empty());
    let expect = WireExpectations {
        mcp_servers: Some(McpServersExpectation::Bridge),
        ..Default::default()
    };
    assert_eq!(check_wire(Some(&expect), &facts, Path::new("/x")).len(), 1);
}

/// A short bound for the leak checks of this file (the runner's is seconds long).
const BRIEF: std::time::Duration = std::time::Duration::from_millis(100);

#[tokio::test]
async fn the_leak_check_sees_live_processes_open_ports_and_leftover_directories() {
    assert!(process_is_live(std::process::id()));
    assert!(!process_is_live(999_999_999));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let open_url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let scratch = tempfile::tempdir().unwrap();
    let leftover = scratch.path().join("turn-1");
    std::fs::create_dir(&leftover).unwrap();
    let mut facts = extract(&journal(REDACTED, allow()));
    facts[0].pid = Some(std::process::id());
    facts[0].cwd = Some(leftover.display().to_string());
    let leaks = find_leaks(
        &facts,
        std::slice::from_ref(&open_url),
        scratch.path(),
        BRIEF,
    )
    .await
    .join("\n");
    assert!(
        leaks.contains("is still running 0.1 s after the leak check began"),
        "{leaks}"
    );
    assert!(leaks.contains("still exists"), "{leaks}");
    assert!(leaks.contains("still accepts connections"), "{leaks}");
    assert!(leaks.contains("still holds"), "{leaks}");
    drop(listener);
    std::fs::remove_dir(&leftover).unwrap();
    facts[0].pid = Some(999_999_999);
    let leaks = find_leaks(
        &facts,
        std::slice::from_ref(&open_url),
        scratch.path(),
        BRIEF,
    )
    .await;
    assert!(leaks.is_empty(), "{leaks:?}");
    assert_eq!(bridge_urls(&facts), ["http://127.0.0.1:9/mcp"]);
    // A journal without its start record cannot pass as "its process is gone".
    facts[0].pid = None;
    let leaks = find_leaks(&facts, &[open_url], scratch.path(), BRIEF)
        .await
        .join("\n");
    assert!(leaks.contains("has no start record"), "{leaks}");
}

#[test]
fn a_bridge_token_must_be_256_bit_hex_and_fresh_per_turn() {
    let expect = WireExpectations {
        mcp_servers: Some(McpServersExpectation::Bridge),
        ..Default::default()
    };
    let check = |journal: &[Vec<JournalEntry>]| {
        check_wire(Some(&expect), &extract(journal), Path::new("/x"))
    };
    // The same token in two turns' processes is a reuse.
    let one = journal(REDACTED, allow());
    let reused: Vec<_> = [one[0].clone(), one[0].clone()].into();
    let failures = check(&reused).join("\n");
    assert!(failures.contains("same bearer token"), "{failures}");
    // Fresh tokens pass.
    let other = journal("Bearer <redacted len=64 hex fp=ffffffff>", allow());
    assert!(check(&[one[0].clone(), other[0].clone()]).is_empty());
    // A token whose shape is unknown or too short fails.
    for header in [
        "Bearer <redacted>",
        "Bearer <redacted len=32 hex fp=0a1b2c3d>",
        "Bearer <redacted len=64 text fp=0a1b2c3d>",
    ] {
        assert_eq!(check(&journal(header, allow())).len(), 1, "{header}");
    }
}

/// The journal above with the `session/new` params changed by `edit`.
fn journal_with_session_new(edit: impl Fn(&mut serde_json::Value)) -> Vec<Vec<JournalEntry>> {
    let mut journal = journal(REDACTED, allow());
    for entry in &mut journal[0] {
        if let JournalEntry::AcpIn { frame } = entry
            && frame["method"] == "session/new"
        {
            edit(&mut frame["params"]);
        }
    }
    journal
}

/// The journal above with the `session/new` `cwd` replaced.
fn journal_with_session_cwd(cwd: &str) -> Vec<Vec<JournalEntry>> {
    journal_with_session_new(|params| params["cwd"] = json!(cwd))
}

/// B06: `disabled_tools` wants exactly the named list, in order, on every session the
/// client opened, and at least one session.
#[test]
fn disabled_tools_wants_the_whole_list_on_every_session() {
    let expect = WireExpectations {
        disabled_tools: Some(vec!["view_file".into(), "run_command".into()]),
        ..WireExpectations::default()
    };
    let check = |journal: &[Vec<JournalEntry>]| {
        check_wire(Some(&expect), &extract(journal), Path::new("/nonexistent")).join("\n")
    };
    let with = |meta: serde_json::Value| {
        journal_with_session_new(move |params| params["_meta"] = meta.clone())
    };
    let good = with(json!({"agy": {"disabledTools": ["view_file", "run_command"]}}));
    assert_eq!(check(&good), "");
    for (bad, why) in [
        (journal(REDACTED, allow()), "no _meta"),
        (
            with(json!({"agy": {"disabledTools": ["run_command", "view_file"]}})),
            "order",
        ),
        (
            with(json!({"agy": {"disabledTools": ["view_file"]}})),
            "a name missing",
        ),
        (
            with(json!({"disabledTools": ["view_file", "run_command"]})),
            "not under agy",
        ),
    ] {
        let failures = check(&bad);
        assert!(
            failures.contains("session/new 1 (server process 1) carried _meta.agy.disabledTools"),
            "{why}: {failures}"
        );
    }
    let mut no_session = good.clone();
    no_session[0].retain(
        |entry| !matches!(entry, JournalEntry::AcpIn { frame } if frame["method"] == "session/new"),
    );
    assert!(check(&no_session).contains("no session was opened"));
}

/// `native_steps_withheld` lists the native steps the fake journaled as withheld.
#[test]
fn native_steps_withheld_are_read_from_the_journal() {
    let expect = |tools: &[&str]| WireExpectations {
        native_steps_withheld: Some(tools.iter().map(|t| (*t).to_owned()).collect()),
        ..WireExpectations::default()
    };
    let mut journal = journal(REDACTED, allow());
    let plain = extract(&journal);
    assert!(check_wire(Some(&expect(&[])), &plain, Path::new("/x")).is_empty());
    journal[0].push(JournalEntry::NativeStepWithheld {
        session_id: "s".into(),
        tool: "view_file".into(),
        turn: 0,
        step: 1,
    });
    let withheld = extract(&journal);
    assert!(check_wire(Some(&expect(&["view_file"])), &withheld, Path::new("/x")).is_empty());
    let failures = check_wire(Some(&expect(&[])), &withheld, Path::new("/x")).join("\n");
    assert!(
        failures.contains("native steps the fake withheld: expected [], observed [\"view_file\"]"),
        "{failures}"
    );
}

/// B08: `slash_commands` lists the slash commands the fake journaled it found and ran.
#[test]
fn slash_commands_are_read_from_the_journal() {
    let expect = |commands: &[&str]| WireExpectations {
        slash_commands: Some(commands.iter().map(|c| (*c).to_owned()).collect()),
        ..WireExpectations::default()
    };
    let mut journal = journal(REDACTED, allow());
    assert!(check_wire(Some(&expect(&[])), &extract(&journal), Path::new("/x")).is_empty());
    journal[0].push(JournalEntry::SlashCommand {
        session_id: "s".into(),
        command: "logout".into(),
    });
    let ran = extract(&journal);
    assert!(check_wire(Some(&expect(&["/logout"])), &ran, Path::new("/x")).is_empty());
    let failures = check_wire(Some(&expect(&[])), &ran, Path::new("/x")).join("\n");
    assert!(
        failures.contains("slash commands the fake found in the prompts and ran: expected [], observed [\"/logout\"]"),
        "{failures}"
    );
}

/// C08: `settings_written` lists the fake's writes of settings.json, in order.
#[test]
fn settings_writes_are_read_from_the_journal() {
    let expect = |writes: &[&str]| WireExpectations {
        settings_written: Some(writes.iter().map(|w| (*w).to_owned()).collect()),
        ..WireExpectations::default()
    };
    let mut journal = journal(REDACTED, allow());
    assert!(check_wire(Some(&expect(&[])), &extract(&journal), Path::new("/x")).is_empty());
    journal[0].push(JournalEntry::SettingsWritten {
        auth_type: Some("gemini-api-key".into()),
        by: "authenticate".into(),
    });
    journal[0].push(JournalEntry::SettingsWritten {
        auth_type: None,
        by: "logout".into(),
    });
    let written = extract(&journal);
    let both = ["gemini-api-key by authenticate", "none by logout"];
    assert!(check_wire(Some(&expect(&both)), &written, Path::new("/x")).is_empty());
    let failures = check_wire(Some(&expect(&[])), &written, Path::new("/x")).join("\n");
    assert!(
        failures.contains("writes of the server's settings.json: expected []"),
        "{failures}"
    );
}

/// C62: `private_cwd` checks the `cwd` of every `session/new` (what scopes the real
/// server's workspace), not only the process's own directory.
#[test]
fn private_cwd_checks_the_session_new_cwd() {
    let expect = WireExpectations {
        private_cwd: Some(true),
        ..WireExpectations::default()
    };
    let root = SCRATCH_ROOT;
    let inside = extract(&journal_with_session_cwd(&format!("{root}/turn-1/s1")));
    let failures = check_wire(Some(&expect), &inside, Path::new(root));
    assert!(failures.is_empty(), "{failures:#?}");
    for workspace in ["/home/dsh/project", "", "scratch/turn-1"] {
        let outside = extract(&journal_with_session_cwd(workspace));
        let failures = check_wire(Some(&expect), &outside, Path::new(root)).join("\n");
        assert!(
            failures.contains("session/new cwd")
                && failures.contains("is not under the scratch root"),
            "{workspace:?}: {failures}"
        );
    }
}

/// C05, checked in every scenario: an `initialize` asking for another ACP version than 1
/// fails the run, whatever `expect.wire` says.
#[test]
fn an_initialize_asking_for_another_version_fails_every_scenario() {
    let good = extract(&journal(REDACTED, allow()));
    assert!(check_wire(None, &good, Path::new("/nonexistent")).is_empty());
    for asked in [json!(2), json!(0), json!("1"), serde_json::Value::Null] {
        let mut bad = journal(REDACTED, allow());
        if let JournalEntry::AcpIn { frame } = &mut bad[0][1] {
            frame["params"]["protocolVersion"] = asked.clone();
        }
        let failures = check_wire(None, &extract(&bad), Path::new("/nonexistent")).join("\n");
        assert!(
            failures.contains("asked for ACP protocolVersion"),
            "{asked}: {failures}"
        );
    }
}

/// `native_actions` compares each native action's journaled outcome in order, and
/// `frames_lack` finds a text in any ACP frame, either way.
#[test]
fn native_outcomes_and_frame_texts_are_judged_on_the_journal() {
    let mut journal = journal(&format!("Bearer {TOKEN}"), allow());
    journal[0].push(JournalEntry::NativeAction {
        tool: "view_file".into(),
        action: "read".into(),
        target: "/w/secret.txt".into(),
        outcome: "denied".into(),
        error: Some("Permission denied (os error 13)".into()),
    });
    let processes = extract(&journal);
    let expect = |native: &[&str], lack: &[&str]| WireExpectations {
        native_actions: Some(native.iter().map(|s| (*s).to_owned()).collect()),
        frames_lack: lack.iter().map(|s| (*s).to_owned()).collect(),
        ..WireExpectations::default()
    };
    let root = Path::new("/nonexistent/scratch");
    assert!(
        check_wire(
            Some(&expect(&["read denied"], &["SECRET"])),
            &processes,
            root
        )
        .is_empty()
    );
    let failures = check_wire(Some(&expect(&["read done"], &[])), &processes, root);
    assert!(
        failures.iter().any(|f| f.contains("native actions")),
        "{failures:?}"
    );
    let failures = check_wire(
        Some(&expect(&["read denied"], &["user: hello"])),
        &processes,
        root,
    );
    assert!(
        failures
            .iter()
            .any(|f| f.contains("contains \"user: hello\"")),
        "{failures:?}"
    );
}
