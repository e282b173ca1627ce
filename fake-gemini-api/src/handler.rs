//! The one HTTP handler: routes by path (`/v1beta|/v1|/v1alpha/models/{model}:{method}`),
//! journals the request and answers it (scripted, utility, countTokens, or an error).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::dispatch::decide;
use crate::journal::{ApiMethod, Journal, JournalEntry};
use crate::plan::PlanItem;
use crate::playback::Playback;
use crate::record::{Received, request_entry};
use crate::request::GenerateContentRequest;
use crate::script::ModelScript;
use crate::utility::minimal_instance;
use crate::wire::{Ending, Usage, error_response, estimate_tokens, json_response, text_part};

/// What every request shares.
#[derive(Debug)]
pub struct Shared {
    /// The script.
    pub script: ModelScript,
    /// The journal.
    pub journal: Arc<Journal>,
    /// The last sequence number handed out.
    pub seq: AtomicU64,
    /// Owns the response-sending tasks.
    pub tracker: TaskTracker,
    /// Fires on shutdown.
    pub shutdown: CancellationToken,
}

/// Splits `/v1beta/models/gemini-2.5-pro:streamGenerateContent` into model and method.
pub fn parse_path(path: &str) -> Option<(&str, ApiMethod)> {
    let rest = ["/v1beta/", "/v1/", "/v1alpha/"]
        .iter()
        .find_map(|prefix| path.strip_prefix(prefix))?;
    let (model, method) = rest.strip_prefix("models/")?.rsplit_once(':')?;
    if model.is_empty() || model.contains('/') {
        return None;
    }
    let method = match method {
        "streamGenerateContent" => ApiMethod::Stream,
        "generateContent" => ApiMethod::Generate,
        "countTokens" => ApiMethod::CountTokens,
        _ => return None,
    };
    Some((model, method))
}

/// Answers one request.
pub async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let seq = shared.seq.fetch_add(1, Ordering::Relaxed) + 1;
    let path = uri.path();
    let Some((model, api_method)) = (method == Method::POST).then(|| parse_path(path)).flatten()
    else {
        shared.journal.append(JournalEntry::NotFound {
            seq,
            method: method.to_string(),
            path: path.to_owned(),
        });
        let message = format!("fake-gemini-api: no such method: {method} {path}");
        return error_response(StatusCode::NOT_FOUND, "NOT_FOUND", &message);
    };
    let request: GenerateContentRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            let reason =
                format!("fake-gemini-api: the body of request {seq} is not a request: {error}");
            shared.journal.append(JournalEntry::Unscripted {
                seq,
                reason: reason.clone(),
            });
            return error_response(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &reason);
        }
    };
    let received = Received {
        seq,
        method: api_method,
        model,
        path,
        query: uri.query(),
        headers: &headers,
    };
    shared
        .journal
        .append(JournalEntry::Request(request_entry(received, &request)));
    let streaming = api_method == ApiMethod::Stream;
    match api_method {
        ApiMethod::CountTokens => json_response(&json!({
            "totalTokens": estimate_tokens(request.text_chars())
        })),
        _ if request.asks_for_json() => answer_utility(&shared, seq, model, &request, streaming),
        _ => answer_turn(&shared, seq, model, &request, streaming),
    }
}

fn answer_utility(
    shared: &Shared,
    seq: u64,
    model: &str,
    request: &GenerateContentRequest,
    streaming: bool,
) -> Response {
    shared.journal.append(JournalEntry::Utility {
        seq,
        model: model.to_owned(),
    });
    let instance = request
        .response_schema()
        .map_or_else(|| json!({}), minimal_instance)
        .to_string();
    let usage = Usage {
        prompt_tokens: estimate_tokens(request.text_chars()),
        candidates_tokens: estimate_tokens(instance.chars().count()),
    };
    let ending = Ending {
        finish_reason: "STOP",
        usage,
    };
    let items = vec![PlanItem::Parts(vec![text_part(&instance)])];
    let target = Target {
        seq,
        model,
        streaming,
        turn: None,
    };
    playback(shared, target, items, ending).start(&shared.tracker)
}

fn answer_turn(
    shared: &Shared,
    seq: u64,
    model: &str,
    request: &GenerateContentRequest,
    streaming: bool,
) -> Response {
    let play = match decide(&shared.script, request, streaming) {
        Ok(play) => play,
        Err(why) => {
            let reason = format!("fake-gemini-api: {why}");
            shared.journal.append(JournalEntry::Unscripted {
                seq,
                reason: reason.clone(),
            });
            return error_response(StatusCode::BAD_REQUEST, "FAILED_PRECONDITION", &reason);
        }
    };
    for (step, reason) in &play.failed_checks {
        shared.journal.append(JournalEntry::ExpectationFailed {
            seq,
            turn: play.turn.unwrap_or_default(),
            step: *step,
            reason: reason.clone(),
        });
    }
    for name in &play.plan.withheld {
        shared.journal.append(JournalEntry::NativeWithheld {
            seq,
            name: name.clone(),
        });
    }
    shared.journal.append(JournalEntry::Response {
        seq,
        turn: play.turn,
        segment: play.segment,
        steps: play.plan.steps.clone(),
        function_calls: play.plan.function_calls.clone(),
    });
    let usage = play.plan.usage.unwrap_or(Usage {
        prompt_tokens: estimate_tokens(request.text_chars()),
        candidates_tokens: estimate_tokens(play.plan.output_chars),
    });
    let ending = Ending {
        finish_reason: play.finish.wire_name(),
        usage,
    };
    let target = Target {
        seq,
        model,
        streaming,
        turn: play.turn,
    };
    playback(shared, target, play.plan.items, ending).start(&shared.tracker)
}

/// Which request a playback answers.
struct Target<'a> {
    seq: u64,
    model: &'a str,
    streaming: bool,
    turn: Option<usize>,
}

fn playback(shared: &Shared, target: Target<'_>, items: Vec<PlanItem>, ending: Ending) -> Playback {
    Playback {
        items,
        streaming: target.streaming,
        model: target.model.to_owned(),
        ending,
        seq: target.seq,
        turn: target.turn,
        journal: Arc::clone(&shared.journal),
        shutdown: shared.shutdown.clone(),
    }
}
