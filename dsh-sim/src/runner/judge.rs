//! The judges, together in one room: everything that decides whether a run passed, read
//! from outside the adapter (the transcript DSH kept, the journals that crossed the wire,
//! the processes and files left behind). The generator (`crate::chaos`) and the runner
//! call them; none of them calls back.
//! - [`expect`]: the DSH-side expectations on the transcript;
//! - [`wire`] (with [`wire::facts`]): `expect.wire`, judged on the journal;
//! - [`between_runs`]: what must hold before and after each run, and [`after_run`], the
//!   leak check after every run (processes gone, bridges closed);
//! - [`leak`]: the leak check after disposal;
//! - [`conversations`] and [`server_home`]: B08 after disposal, against the fake and
//!   against a server the runner did not script;
//! - [`fake_faults`]: whether the fake's scripted faults (`fake.faults`,
//!   `fake.mcp_client.fault`) acted, by its journal;
//! - [`install`]: an install scenario, judged from outside the adapter;
//! - [`model_api`]: under a real agent, what the scripted model API was sent;
//! - [`chaos`]: the chaos invariants every `dsh-sim chaos` run is judged by, what watches
//!   them, and the verdict.

pub mod after_run;
pub mod between_runs;
pub mod chaos;
pub mod conversations;
pub mod expect;
pub mod fake_faults;
pub mod install;
pub mod leak;
pub mod model_api;
pub mod server_home;
pub mod wire;
