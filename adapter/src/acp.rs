//! The ACP client side of a turn: the connection over the server's stdio, the handshake
//! (initialize, session/new with the bridge and the server's built-in tools disabled, one
//! bounded authenticate retry, model choice), the sign-in policy, the permission policy,
//! and the mapping of session updates into turn events.

mod agent_profile;
mod connection;
mod events;
mod handshake;
mod native_tools;
mod permission;
mod sign_in;

pub(crate) use agent_profile::AgentProfile;
pub(crate) use connection::AcpConnection;
pub(crate) use events::ServerEvent;
pub(crate) use handshake::{
    CatalogueModel, OfferedMethods, ServerInfo, catalogue, choose_model, close_session, initialize,
    initialize_answer, new_session,
};
pub use native_tools::NATIVE_TOOLS;
pub(crate) use sign_in::{SignIn, SignInProblem};
