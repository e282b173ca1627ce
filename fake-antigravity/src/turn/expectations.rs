//! Checking an `expect_result` step against the most recent call (or `parallel` group) of
//! the turn, and the messages journaled when it does not hold.

use crate::script::ResultExpectation;
use crate::turn::tool_call_step::{CallOutcome, is_error, result_text};

/// How much of a result's text a failure message quotes.
const QUOTE_LIMIT: usize = 2_000;

/// The most recent host tool call(s) of a turn, for a later `expect_result`.
#[derive(Debug, Clone, PartialEq)]
pub enum RecentCalls {
    /// A `call` step: its index and outcome.
    One(usize, CallOutcome),
    /// A `parallel` step: its index and every outcome, in script order.
    Group(usize, Vec<CallOutcome>),
}

/// `Ok` when `expectation` holds for the recent call, or for *every* call of a recent
/// `parallel` group; otherwise what was expected and what came (each failing call of a
/// group named by its position).
pub fn check_recent(
    expectation: &ResultExpectation,
    recent: Option<&RecentCalls>,
) -> Result<(), String> {
    match recent {
        None => check_result(expectation, None),
        Some(RecentCalls::One(step, outcome)) => {
            check_result(expectation, Some(&(*step, outcome.clone())))
        }
        Some(RecentCalls::Group(step, outcomes)) => {
            let problems: Vec<String> = outcomes
                .iter()
                .enumerate()
                .filter_map(|(i, outcome)| {
                    check_result(expectation, Some(&(*step, outcome.clone())))
                        .err()
                        .map(|message| format!("parallel call {i} of the group: {message}"))
                })
                .collect();
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join(" | "))
            }
        }
    }
}

/// `Ok` when `expectation` holds for `last_call` (`(step index, outcome)`), otherwise what
/// was expected and what came.
pub fn check_result(
    expectation: &ResultExpectation,
    last_call: Option<&(usize, CallOutcome)>,
) -> Result<(), String> {
    let Some((call_step, outcome)) = last_call else {
        return Err("expect_result has no call before it in this turn".into());
    };
    if let Some(needle) = &expectation.failed_with {
        return match outcome {
            CallOutcome::Errored(error) if error.contains(needle.as_str()) => Ok(()),
            other => Err(format!(
                "expected the call at step {call_step} to fail with {needle:?}, it came to {other:?}"
            )),
        };
    }
    let result = match outcome {
        CallOutcome::Result(result) => result,
        CallOutcome::Errored(error) => {
            return Err(format!(
                "the call at step {call_step} failed without an MCP result: {error}"
            ));
        }
        CallOutcome::NotRun(reason) => {
            return Err(format!(
                "the call at step {call_step} did not run, so there is no result: {reason}"
            ));
        }
    };
    let mut problems = Vec::new();
    let actual_is_error = is_error(result);
    if let Some(expected) = expectation.is_error
        && expected != actual_is_error
    {
        problems.push(format!(
            "expected isError {expected}, the result has isError {actual_is_error}"
        ));
    }
    if let Some(needle) = &expectation.contains {
        let text = result_text(result);
        if !text.contains(needle.as_str()) {
            problems.push(format!(
                "expected text containing {needle:?}, the result's text is {:?}",
                quote(&text)
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "result of the call at step {call_step}: {}",
            problems.join("; ")
        ))
    }
}

/// The message for an `expect_result` skipped because the client denied the call.
pub fn denied_message(call_step: usize, answer: &str) -> String {
    format!(
        "the permission for the call at step {call_step} was answered {answer}, so the turn \
         ended there (as 1.3.0 does) and this expect_result never ran"
    )
}

fn quote(text: &str) -> String {
    if text.len() <= QUOTE_LIMIT {
        return text.to_string();
    }
    let mut end = QUOTE_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn compares_is_error_and_text() {
        let ok = (
            0,
            CallOutcome::Result(json!({"content":[{"type":"text","text":"hello world"}]})),
        );
        let expect = ResultExpectation {
            is_error: Some(false),
            contains: Some("world".into()),
            failed_with: None,
        };
        assert_eq!(check_result(&expect, Some(&ok)), Ok(()));
        let expect = ResultExpectation {
            is_error: Some(true),
            contains: Some("moon".into()),
            failed_with: None,
        };
        let Err(message) = check_result(&expect, Some(&ok)) else {
            panic!("expected a mismatch");
        };
        assert!(message.contains("isError true"), "{message}");
        assert!(message.contains("\"moon\""), "{message}");
        assert!(check_result(&expect, None).is_err());
        let refused = ResultExpectation {
            failed_with: Some("HTTP 401".into()),
            ..ResultExpectation::default()
        };
        let unauthorised = (
            1,
            CallOutcome::Errored("tools/call failed: HTTP 401".into()),
        );
        assert_eq!(check_result(&refused, Some(&unauthorised)), Ok(()));
        assert!(check_result(&refused, Some(&ok)).is_err());
        let other = (
            1,
            CallOutcome::Errored("tools/call failed: HTTP 400".into()),
        );
        assert!(check_result(&refused, Some(&other)).is_err());
    }

    #[test]
    fn a_group_must_satisfy_the_expectation_in_every_call() {
        let ok = |text: &str| CallOutcome::Result(json!({"content":[{"type":"text","text":text}]}));
        let expect = ResultExpectation {
            is_error: Some(false),
            contains: Some("echo".into()),
            failed_with: None,
        };
        let group = RecentCalls::Group(3, vec![ok("echo: a"), ok("echo: b")]);
        assert_eq!(check_recent(&expect, Some(&group)), Ok(()));
        let group = RecentCalls::Group(3, vec![ok("echo: a"), ok("nope")]);
        let Err(message) = check_recent(&expect, Some(&group)) else {
            panic!("expected a mismatch");
        };
        assert!(
            message.starts_with("parallel call 1 of the group"),
            "{message}"
        );
        assert!(!message.contains("parallel call 0"), "{message}");
    }
}
