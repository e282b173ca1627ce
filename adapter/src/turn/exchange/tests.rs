//! The continuation rules: what continues a parked exchange, what fails explicitly, and
//! what closes it so the turn restarts from DSH's history.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use std::sync::Arc;

use super::*;
use crate::contract::{ContentBlock, Purpose, Role, ToolCallBlock, ToolSchema};

fn user(text: &str) -> Message {
    Message::user(text)
}

fn calls(ids: &[&str]) -> Message {
    Message::new(
        Role::Assistant,
        ids.iter()
            .map(|id| {
                ContentBlock::ToolCall(ToolCallBlock {
                    id: (*id).into(),
                    name: "t".into(),
                    arguments: "{}".into(),
                })
            })
            .collect(),
    )
}

/// The results for `ids` in one user message of `tool-result` blocks (the contract reads
/// them as it reads DSH's one-result-per-message shape; `both_result_shapes_continue`
/// covers that one).
fn results(ids: &[&str]) -> Message {
    let blocks = ids
        .iter()
        .flat_map(|id| {
            Message::tool_result(id, vec![ContentBlock::text(format!("out {id}"))], false).content
        })
        .collect();
    Message::new(Role::User, blocks)
}

fn request(history: Vec<Message>) -> GenerateOptions {
    let mut request = GenerateOptions::new("antigravity-acp", "server-default", history);
    request.system = Some("sys".into());
    request.tools = Some(vec![ToolSchema {
        name: "t".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
    }]);
    request
}

/// A registry holding one exchange that issued `issued` after `history`.
fn parked(
    history: &[Message],
    issued: &[&str],
) -> (
    Arc<ExchangeRegistry>,
    CancellationToken,
    mpsc::Receiver<Continuation>,
) {
    let registry = Arc::new(ExchangeRegistry::default());
    let (control, receiver) = mpsc::channel(1);
    let close = CancellationToken::new();
    registry.park(PendingExchange {
        id: 7,
        issued: issued.iter().map(|s| (*s).to_owned()).collect(),
        fingerprint: fingerprint_of(&request(history.to_vec())),
        history: SegmentHistory::new(history.to_vec()),
        control,
        close: close.clone(),
    });
    (registry, close, receiver)
}

/// `registry.claim(request)`, run on a thread and waited on with a bound, so a search that
/// never ends fails the test (the outer error) instead of hanging it.
fn claim(
    registry: &Arc<ExchangeRegistry>,
    request: &GenerateOptions,
) -> Result<Result<Claim, AdapterError>, test_support::Failure> {
    let (done, claimed) = std::sync::mpsc::channel();
    let (registry, request) = (registry.clone(), request.clone());
    std::thread::spawn(move || {
        done.send(registry.claim(&request, &fingerprint_of(&request)))
            .ok();
    });
    claimed
        .recv_timeout(std::time::Duration::from_secs(10))
        .map_err(|_| "the claim did not end within 10 s".into())
}

#[test]
fn matching_calls_and_results_continue_in_issue_order() -> crate::TestResult {
    let base = vec![user("go")];
    let (registry, close, _rx) = parked(&base, &["a", "b"]);
    let mut history = base.clone();
    history.push(calls(&["b", "a"]));
    history.push(results(&["b", "a"]));
    match claim(&registry, &request(history))?? {
        Claim::Continue(exchange, results) => {
            assert_eq!(exchange.id, 7);
            let order: Vec<_> = results.iter().map(|r| r.call_id.as_str()).collect();
            assert_eq!(order, ["a", "b"]);
        }
        Claim::Fresh => panic!("should continue"),
    }
    assert!(!close.is_cancelled());
    assert!(
        !registry.withdraw(7),
        "a claimed exchange leaves the registry"
    );
    Ok(())
}

#[test]
fn missing_duplicate_and_foreign_results_fail_explicitly() -> crate::TestResult {
    let base = vec![user("go")];
    for (answers, needle, code) in [
        (vec!["a"], "missing", "ACP_TOOL_RESULTS_MISSING"),
        (vec!["a", "b", "b"], "more than one", "ACP_INVALID_HISTORY"),
        (vec!["a", "b", "zzz"], "never issued", "ACP_INVALID_HISTORY"),
    ] {
        let (registry, _close, _rx) = parked(&base, &["a", "b"]);
        let mut history = base.clone();
        history.push(calls(&["a", "b"]));
        history.push(results(&answers));
        let Err(error) = claim(&registry, &request(history))? else {
            return Err(format!("results {answers:?} were accepted").into());
        };
        assert!(error.to_string().contains(needle), "{error}");
        assert_eq!(error.to_llm_error().code.as_str(), code, "{error}");
        assert!(
            registry.withdraw(7),
            "a failed claim keeps the exchange parked"
        );
    }
    Ok(())
}

#[test]
fn a_new_user_message_or_changed_tools_close_the_exchange() -> crate::TestResult {
    let base = vec![user("go")];
    let (registry, close, _rx) = parked(&base, &["a"]);
    let history = vec![
        user("go"),
        calls(&["a"]),
        results(&["a"]),
        user("actually, stop"),
    ];
    assert!(matches!(
        claim(&registry, &request(history))??,
        Claim::Fresh
    ));
    assert!(close.is_cancelled());

    let (registry, close, _rx) = parked(&base, &["a"]);
    let mut changed = request(vec![user("go"), calls(&["a"]), results(&["a"])]);
    for tool in changed.tools.iter_mut().flatten() {
        tool.description = "new description".into();
    }
    assert!(matches!(claim(&registry, &changed)??, Claim::Fresh));
    assert!(close.is_cancelled());
    Ok(())
}

#[test]
fn an_edited_earlier_message_closes_the_exchange_it_references() -> crate::TestResult {
    let base = vec![user("go")];
    let (registry, close, _rx) = parked(&base, &["a"]);
    let history = vec![user("go, but edited"), calls(&["a"]), results(&["a"])];
    assert!(matches!(
        claim(&registry, &request(history))??,
        Claim::Fresh
    ));
    assert!(close.is_cancelled());
    Ok(())
}

/// C30: neither a title nor a compaction request borrows a parked exchange, even when it
/// carries the exchange's calls and results.
#[test]
fn title_and_compaction_requests_never_borrow_the_exchange() -> crate::TestResult {
    for purpose in [Purpose::SessionTitle, Purpose::Compaction] {
        let base = vec![user("go")];
        let (registry, close, _rx) = parked(&base, &["a"]);
        let mut side = request(vec![user("go"), calls(&["a"]), results(&["a"])]);
        side.purpose = Some(purpose);
        assert!(
            matches!(claim(&registry, &side)??, Claim::Fresh),
            "{purpose:?} borrowed the exchange"
        );
        assert!(!close.is_cancelled(), "{purpose:?} closed the exchange");
        assert!(registry.withdraw(7), "the exchange is still parked");
    }
    Ok(())
}

#[test]
fn another_conversation_never_borrows_the_exchange() -> crate::TestResult {
    let base = vec![user("go")];
    let (registry, close, _rx) = parked(&base, &["a"]);
    let subagent = request(vec![user("a subagent's own task")]);
    assert!(matches!(claim(&registry, &subagent)??, Claim::Fresh));
    assert!(!close.is_cancelled());
    assert!(
        registry.withdraw(7),
        "the parent's exchange is still parked"
    );
    Ok(())
}

/// C27: a generate that carries the exchange's calls and results but changed the model or
/// the system prompt is no continuation: it starts a fresh turn, and the exchange it
/// references is closed.
#[test]
fn a_changed_model_or_system_prompt_starts_a_fresh_turn() -> crate::TestResult {
    type Change = fn(&mut GenerateOptions);
    let changes: [(&str, Change); 2] = [
        ("model", |r| r.model = "gemini-3.8-flash-low".into()),
        ("system prompt", |r| {
            r.system = Some("another system prompt".into())
        }),
    ];
    let base = vec![user("go")];
    for (what, change) in changes {
        let (registry, close, _rx) = parked(&base, &["a"]);
        let mut changed = request(vec![user("go"), calls(&["a"]), results(&["a"])]);
        change(&mut changed);
        assert!(
            matches!(claim(&registry, &changed)??, Claim::Fresh),
            "{what}"
        );
        assert!(close.is_cancelled(), "{what}: the old exchange stays open");
        assert!(
            !registry.withdraw(7),
            "{what}: the old exchange stays parked"
        );
    }
    Ok(())
}

/// C27: the set of call ids must be exactly the issued one. One call replaced by another
/// (the issued one still referenced) closes the exchange and starts afresh; an extra call
/// beside the issued ones does too; calls that share none of the issued ids continue
/// nothing (another conversation), and leave the exchange parked.
#[test]
fn a_changed_set_of_call_ids_starts_a_fresh_turn() -> crate::TestResult {
    let base = vec![user("go")];
    for ids in [&["a", "c"][..], &["a", "b", "c"][..]] {
        let (registry, close, _rx) = parked(&base, &["a", "b"]);
        let changed = request(vec![user("go"), calls(ids), results(ids)]);
        assert!(
            matches!(claim(&registry, &changed)??, Claim::Fresh),
            "{ids:?}"
        );
        assert!(close.is_cancelled(), "{ids:?}: the old exchange stays open");
        assert!(!registry.withdraw(7), "{ids:?}");
    }
    let (registry, close, _rx) = parked(&base, &["a", "b"]);
    let other = request(vec![user("go"), calls(&["x", "y"]), results(&["x", "y"])]);
    assert!(matches!(claim(&registry, &other)??, Claim::Fresh));
    assert!(!close.is_cancelled());
    assert!(registry.withdraw(7), "the exchange is still parked");
    Ok(())
}

/// Parks exchange `id` that issued `issued` after `history`; its close token.
fn park_more(
    registry: &ExchangeRegistry,
    id: u64,
    history: &[Message],
    issued: &[&str],
) -> CancellationToken {
    let (control, _receiver) = mpsc::channel(1);
    let close = CancellationToken::new();
    registry.park(PendingExchange {
        id,
        issued: issued.iter().map(|s| (*s).to_owned()).collect(),
        fingerprint: fingerprint_of(&request(history.to_vec())),
        history: SegmentHistory::new(history.to_vec()),
        control,
        close: close.clone(),
    });
    close
}

/// Exchanges that do not match are skipped, not the end of the search (neither one of
/// another conversation nor one with the same history but other calls): the parked
/// exchange the request does continue is found behind them.
#[test]
fn a_continuation_finds_its_exchange_behind_others() -> crate::TestResult {
    let base = vec![user("go")];
    let registry = Arc::new(ExchangeRegistry::default());
    let other_chat = park_more(&registry, 6, &[user("another chat")], &["x"]);
    let other_calls = park_more(&registry, 7, &base, &["y"]);
    park_more(&registry, 8, &base, &["a"]);
    let continuation = request(vec![user("go"), calls(&["a"]), results(&["a"])]);
    match claim(&registry, &continuation)?? {
        Claim::Continue(exchange, _) => assert_eq!(exchange.id, 8),
        Claim::Fresh => panic!("the third exchange should continue"),
    }
    assert!(!other_chat.is_cancelled() && !other_calls.is_cancelled());
    assert!(
        registry.withdraw(6) && registry.withdraw(7),
        "the others are still parked"
    );
    Ok(())
}

/// A continuation in either of DSH's tool-result shapes, one message per result: 0.1.x
/// (a user message with a `tool-result` block) and 0.2.x (`role: 'tool'` with
/// `toolCallId`), continues the exchange with the results in issue order.
#[test]
fn both_result_shapes_continue() -> crate::TestResult {
    let history = vec![user("go")];
    let v02 = |id: &str| -> Result<Message, serde_json::Error> {
        serde_json::from_value(json!({
            "id": format!("r-{id}"), "role": "tool", "toolCallId": id, "isError": id == "b",
            "content": [{"type": "text", "text": format!("out {id}")}]
        }))
    };
    let shapes = [
        vec![
            Message::tool_result("b", vec![ContentBlock::text("out b")], true),
            Message::tool_result("a", vec![ContentBlock::text("out a")], false),
        ],
        vec![v02("b")?, v02("a")?],
    ];
    for tail in shapes {
        let (registry, _close, _rx) = parked(&history, &["a", "b"]);
        let mut messages = history.clone();
        messages.push(calls(&["a", "b"]));
        messages.extend(tail);
        let Claim::Continue(_, results) = claim(&registry, &request(messages))?? else {
            return Err("did not continue".into());
        };
        let seen: Vec<_> = results
            .iter()
            .map(|r| (r.call_id.as_str(), r.text.as_str(), r.is_error))
            .collect();
        assert_eq!(seen, [("a", "out a", false), ("b", "out b", true)]);
    }
    Ok(())
}

/// A continuation that finds its turn already ended starts afresh from the complete
/// history it carried (`provider.rs`): that history comes back whole, whether it is still
/// shared with the parked exchange or not.
#[test]
fn a_segment_history_gives_its_messages_back_whole() {
    let messages = vec![user("read my notes"), calls(&["a"]), results(&["a"])];
    let alone = SegmentHistory::new(messages.clone());
    assert_eq!(alone.into_messages(), messages);
    let shared = SegmentHistory::new(messages.clone());
    let _kept = shared.clone();
    assert_eq!(shared.into_messages(), messages);
}
