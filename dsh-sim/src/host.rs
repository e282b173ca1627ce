//! The DSH miniature: the host the adapter is mounted in, as far as a scenario needs it.
//! It owns the adapter registry and DSH's model precedence ([`registry`]), the agent
//! loop that drives a chat ([`agent_loop`]) and assembles its streams as DSH does
//! ([`assemble`]), the stream rules DSH enforces on every
//! generation ([`stream_rules`]), DSH's tools and their permission policy ([`tools`]),
//! the requests DSH makes beside a chat's runs ([`side_requests`]), the image a user's
//! message may carry ([`attachments`]), DSH's own faults
//! ([`dsh_fault`], the behaviour of the type `scenario::DshFault`), and the DSH-side
//! record of a chat ([`transcript`]). It knows nothing of scenario files on disk, the
//! fake's journal or how a run is judged: that is the runner's.

pub mod agent_loop;
pub mod assemble;
pub mod attachments;
pub mod dsh_fault;
pub mod registry;
pub mod side_requests;
pub mod stream_rules;
pub mod tools;
pub mod transcript;
