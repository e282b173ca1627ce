//! The `antigravity-acp-dsh` binary's commands (`bin/antigravity-acp-dsh.js`), converted and
//! nothing else: the config row's JSON through the plugin's own path
//! (`provider::read_config`), the Node side's facts and the command's options from
//! JSON, and the adapter's [`CommandOutput`] (`{exitCode, text, report}`) back as JSON. The
//! commands themselves are `antigravity_acp::user_commands`.
//!
//! - `runUserCommand(command, configJson, hostJson, optionsJson)`: `doctor`, `status`,
//!   `logout` or `models`, resolving to the envelope of its output.
//! - `startLogin(configJson, optionsJson)`: a [`LoginHandle`] whose `nextEvent()` yields
//!   the sign-in URL once the server prints it (`{kind: "url", url, port, forward,
//!   text}`), then the output (`{kind: "done", output}`), then `null`.
//! - `startDoctor(configJson, hostJson, optionsJson)`: `doctor`, as a [`DoctorHandle`]
//!   whose `nextEvent()` yields the install's progress as the adapter renders it for
//!   stderr (`{kind: "progress", text}`; options `progress: "terminal" | "lines"`), then
//!   the output (`{kind: "done", output}`), then `null`.

use std::sync::Arc;
use std::time::Duration;

use antigravity_acp::contract::LlmErrorCode;
use antigravity_acp::user_commands::{
    self, CommandOutput, DoctorOptions, HostFacts, LoginOptions, ProgressMode, SignInUrl,
    install_progress,
};
use napi_derive::napi;
use serde::Deserialize;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::failure::{Result, envelope, from_json, guard, thrown, to_json};
use crate::provider::read_config;

/// What the binary's flags ask of a command (each only where it applies).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Options {
    #[serde(default)]
    quick: bool,
    #[serde(default)]
    install: bool,
    #[serde(default)]
    clean: bool,
    method: Option<String>,
    wait_secs: Option<u64>,
    /// How `doctor --install` draws its progress (the binary's stderr a terminal or not).
    progress: Option<ProgressMode>,
}

/// Runs `doctor`, `status`, `logout` or `models`; resolves to the envelope of its
/// `CommandOutput`. A refused config is `ACP_INVALID_CONFIG`; an unknown command or
/// options that are not the binary's `ACP_INVALID_REQUEST`.
#[napi]
pub async fn run_user_command(
    command: String,
    config_json: String,
    host_json: String,
    options_json: String,
) -> napi::Result<String> {
    envelope(async move {
        let config = read_config(&config_json)?;
        let options: Options = from_json("the command's options", &options_json)?;
        let output = match command.as_str() {
            "doctor" => {
                let host: HostFacts = from_json("the host facts", &host_json)?;
                let asked = DoctorOptions {
                    quick: options.quick,
                    install: options.install,
                    clean: options.clean,
                    progress: None,
                };
                user_commands::doctor(config, &host, asked).await
            }
            "status" => user_commands::status(config).await,
            "logout" => user_commands::logout(config).await,
            "models" => user_commands::models(config).await,
            _ => {
                return Err(thrown(
                    LlmErrorCode::AcpInvalidRequest,
                    "not a command of antigravity-acp-dsh (doctor, status, logout, models; login \
                     has startLogin)",
                ));
            }
        };
        to_json(&output)
    })
    .await
}

/// One event of a login, as JS reads it.
#[derive(Debug, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum LoginEvent {
    /// The sign-in URL, for the user's terminal only.
    Url(SignInUrl),
    /// The login's output.
    Done {
        /// What to print and the exit code.
        output: CommandOutput,
    },
}

/// A running login (the JS class `LoginHandle`): its events, then `null`.
#[napi]
pub struct LoginHandle {
    events: Arc<Mutex<mpsc::Receiver<String>>>,
    /// Ends the wait for the sign-in (`cancel`): the login disposes of its server and ends.
    cancel: CancellationToken,
    /// Aborted (the server process killed) if the handle goes first.
    _task: AbortOnDropHandle<()>,
}

/// Starts `login` (options: `method`, `waitSecs`). A refused config throws
/// `ACP_INVALID_CONFIG`.
#[napi]
pub fn start_login(config_json: String, options_json: String) -> Result<LoginHandle> {
    guard(|| {
        let config = read_config(&config_json)?;
        let options: Options = from_json("the command's options", &options_json)?;
        let cancel = CancellationToken::new();
        let asked = LoginOptions {
            method: options.method,
            wait: options
                .wait_secs
                .map_or(user_commands::DEFAULT_WAIT, Duration::from_secs),
            cancel: cancel.clone(),
        };
        let (sender, events) = mpsc::channel(4);
        let on_url = {
            let sender = sender.clone();
            move |url: SignInUrl| {
                // The one URL event; a full channel (JS not reading) drops nothing the
                // login needs: the output follows regardless.
                if let Ok(json) = serde_json::to_string(&LoginEvent::Url(url)) {
                    let _sent = sender.try_send(json);
                }
            }
        };
        let task = napi::bindgen_prelude::within_runtime_if_available(|| {
            tokio::spawn(async move {
                let output = user_commands::login(config, asked, on_url).await;
                if let Ok(json) = serde_json::to_string(&LoginEvent::Done { output }) {
                    // JS gone: nobody reads the output.
                    let _sent = sender.send(json).await;
                }
            })
        });
        Ok(LoginHandle {
            events: Arc::new(Mutex::new(events)),
            cancel,
            _task: AbortOnDropHandle::new(task),
        })
    })
}

#[napi]
impl LoginHandle {
    /// The next event as JSON in the envelope, or `null` once the login has ended.
    #[napi]
    pub async fn next_event(&self) -> napi::Result<String> {
        next_event(self.events.clone()).await
    }

    /// Abandons the sign-in: the login stops waiting, disposes of its server, and its
    /// output (not signed in) follows.
    #[napi]
    pub fn cancel(&self) -> Result<()> {
        guard(|| {
            self.cancel.cancel();
            Ok(())
        })
    }
}

/// One event of `doctor`, as JS reads it.
#[derive(Debug, serde::Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum DoctorEvent {
    /// The install's progress, rendered for stderr.
    Progress {
        /// What to write, as it is.
        text: String,
    },
    /// The doctor's output.
    Done {
        /// What to print and the exit code.
        output: CommandOutput,
    },
}

/// A running `doctor` (the JS class `DoctorHandle`): its progress, its output, then `null`.
#[napi]
pub struct DoctorHandle {
    events: Arc<Mutex<mpsc::Receiver<String>>>,
    /// Aborted (the install and any server stopped) if the handle goes first.
    _task: AbortOnDropHandle<()>,
}

/// Starts `doctor` (options: `quick`, `install`, `clean`, `progress`). A refused config
/// throws `ACP_INVALID_CONFIG`; host facts or options that are not the binary's,
/// `ACP_INVALID_REQUEST`.
#[napi]
pub fn start_doctor(
    config_json: String,
    host_json: String,
    options_json: String,
) -> Result<DoctorHandle> {
    guard(|| {
        let config = read_config(&config_json)?;
        let options: Options = from_json("the command's options", &options_json)?;
        let host: HostFacts = from_json("the host facts", &host_json)?;
        // The progress is throttled by its renderer; a full channel (JS not reading)
        // drops a progress text, never the output.
        let (sender, events) = mpsc::channel(64);
        let progress = options.progress.map(|mode| {
            let sender = sender.clone();
            install_progress::progress_sink(mode, move |text| {
                if let Ok(json) = serde_json::to_string(&DoctorEvent::Progress { text }) {
                    let _sent = sender.try_send(json);
                }
            })
        });
        let asked = DoctorOptions {
            quick: options.quick,
            install: options.install,
            clean: options.clean,
            progress,
        };
        let task = napi::bindgen_prelude::within_runtime_if_available(|| {
            tokio::spawn(async move {
                let output = user_commands::doctor(config, &host, asked).await;
                if let Ok(json) = serde_json::to_string(&DoctorEvent::Done { output }) {
                    // JS gone: nobody reads the output.
                    let _sent = sender.send(json).await;
                }
            })
        });
        Ok(DoctorHandle {
            events: Arc::new(Mutex::new(events)),
            _task: AbortOnDropHandle::new(task),
        })
    })
}

#[napi]
impl DoctorHandle {
    /// The next event as JSON in the envelope, or `null` once the doctor has ended.
    #[napi]
    pub async fn next_event(&self) -> napi::Result<String> {
        next_event(self.events.clone()).await
    }
}

/// The next event a command's channel holds, as JSON in the envelope, or `null` once the
/// command has ended and its channel closed (a login's and a doctor's `nextEvent()`).
async fn next_event(events: Arc<Mutex<mpsc::Receiver<String>>>) -> napi::Result<String> {
    envelope(async move {
        Ok(events
            .lock()
            .await
            .recv()
            .await
            .unwrap_or_else(|| "null".to_owned()))
    })
    .await
}
