//! The ACP client side of a turn: the connection over the server's stdio, the handshake
//! (initialize, session/new with the bridge, one authenticate retry, model choice), the
//! permission policy, and the mapping of session updates into turn events.

mod connection;
mod events;
mod handshake;
mod permission;

pub(crate) use connection::AcpConnection;
pub(crate) use events::ServerEvent;
pub(crate) use handshake::{
    ServerInfo, catalogue, choose_model, close_session, initialize, new_session,
};
