//! A prompt turn and its scripted steps: the turn's shared context ([`context`]), the
//! prompt handler that picks and runs a turn ([`prompt_turn`], [`turn_select`]), and
//! one file per kind of step (host calls, parallel groups, server-owned tools and
//! questions, native actions, permission requests, result expectations) and the
//! end-of-turn `usage_update` ([`turn_usage`]), and the slash commands intercepted before
//! a turn ([`slash_commands`]). Steps import the context, never the prompt handler.

pub mod client_request_step;
pub mod context;
pub mod expectations;
pub mod native_action;
pub mod parallel_step;
pub mod permission_request;
pub mod prompt_turn;
pub mod server_owned_steps;
pub mod slash_commands;
pub mod stream_step;
pub mod tool_call_step;
pub mod turn_select;
pub mod turn_usage;
