//! The continuation rules: what continues a parked exchange, what fails explicitly, and
//! what closes it so the turn restarts from DSH's history.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use std::sync::Arc;

use super::*;
use crate::contract::{ToolCallPart, ToolDefinition, UserPart};

fn user(text: &str) -> Message {
    Message::User(vec![UserPart::Text(text.into())])
}

fn calls(ids: &[&str]) -> Message {
    Message::Assistant(
        ids.iter()
            .map(|id| {
                AssistantPart::ToolCall(ToolCallPart {
                    call_id: (*id).into(),
                    tool_name: "t".into(),
                    arguments: json!({}),
                })
            })
            .collect(),
    )
}

fn results(ids: &[&str]) -> Message {
    Message::Tool(
        ids.iter()
            .map(|id| ToolResult {
                call_id: (*id).into(),
                tool_name: "t".into(),
                output: json!(format!("out {id}")),
                is_error: false,
            })
            .collect(),
    )
}

fn request(history: Vec<Message>) -> GenerateRequest {
    let mut request = GenerateRequest::chat("antigravity-acp/server-default", "sys", history);
    request.tools = vec![ToolDefinition {
        name: "t".into(),
        description: "d".into(),
        input_schema: json!({"type": "object"}),
    }];
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
        fingerprint: fingerprint(&request(history.to_vec())),
        history: HistoryDigest::of(history),
        control,
        close: close.clone(),
    });
    (registry, close, receiver)
}

/// `registry.claim(request)`, run on a thread and waited on with a bound, so a search that
/// never ends fails the test (the outer error) instead of hanging it.
fn claim(
    registry: &Arc<ExchangeRegistry>,
    request: &GenerateRequest,
) -> Result<Result<Claim, AdapterError>, test_support::Failure> {
    let (done, claimed) = std::sync::mpsc::channel();
    let (registry, request) = (registry.clone(), request.clone());
    std::thread::spawn(move || {
        done.send(registry.claim(&request, &fingerprint(&request)))
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
    for (answers, needle) in [
        (vec!["a"], "missing"),
        (vec!["a", "b", "b"], "more than one"),
        (vec!["a", "b", "zzz"], "never issued"),
    ] {
        let (registry, _close, _rx) = parked(&base, &["a", "b"]);
        let mut history = base.clone();
        history.push(calls(&["a", "b"]));
        history.push(results(&answers));
        let Err(error) = claim(&registry, &request(history))? else {
            return Err(format!("results {answers:?} were accepted").into());
        };
        assert!(
            matches!(&error, AdapterError::InvalidHistory(m) if m.contains(needle)),
            "{error}"
        );
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
    changed.tools[0].description = "new description".into();
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
    for purpose in [Purpose::Title, Purpose::Compaction] {
        let base = vec![user("go")];
        let (registry, close, _rx) = parked(&base, &["a"]);
        let mut side = request(vec![user("go"), calls(&["a"]), results(&["a"])]);
        side.purpose = purpose;
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
    type Change = fn(&mut GenerateRequest);
    let changes: [(&str, Change); 2] = [
        ("model", |r| {
            r.model = "antigravity-acp/gemini-3.8-flash-low".into()
        }),
        ("system prompt", |r| {
            r.system = "another system prompt".into()
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
        fingerprint: fingerprint(&request(history.to_vec())),
        history: HistoryDigest::of(history),
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
