#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The scenario parser is strict: every mistake names the file, line and column (and the
//! field, where there is one).

use std::path::Path;

use dsh_sim::scenario::{ScenarioError, parse};
use rstest::rstest;

const CHAT: &str = "dsh:\n  chat:\n    - user: hi\n";

#[rstest]
#[case::unknown_top_level_key(
    "name: x\ncovers: [C01]\nexpected: {}\ndsh:\n  chat:\n    - user: hi\n",
    3,
    1,
    "unknown field `expected`"
)]
#[case::unknown_tool_key(
    "name: x\ncovers: [C01]\ndsh:\n  tools:\n    - { name: t, permision: deny }\n  chat:\n    - user: hi\n",
    5,
    18,
    "unknown field `permision`"
)]
#[case::unknown_fake_step(
    "name: x\ncovers: [C01]\nfake:\n  turns:\n    - steps:\n        - thougt: hm\ndsh:\n  chat:\n    - user: hi\n",
    6,
    11,
    "unknown variant `thougt`"
)]
#[case::unknown_wire_check(
    "name: x\ncovers: [C01]\ndsh:\n  chat:\n    - user: hi\nexpect:\n  wire:\n    prompt: 1\n",
    8,
    5,
    "unknown field `prompt`"
)]
#[case::wrong_type(
    "name: x\ncovers: [C01]\ndsh:\n  chat:\n    - user: hi\nexpect:\n  generations: many\n",
    7,
    16,
    "field `generations`"
)]
#[case::wrong_enum_value(
    "name: x\ncovers: [C01]\ndsh:\n  tools:\n    - { name: t, permission: maybe }\n  chat:\n    - user: hi\n",
    5,
    30,
    "unknown variant `maybe`"
)]
#[case::missing_required_field("name: x\ncovers: [C01]\n", 2, 1, "missing field `dsh`")]
#[case::missing_chat(
    "name: x\ncovers: [C01]\ndsh:\n  tools: []\n",
    4,
    3,
    "missing field `chat`"
)]
#[case::bad_claim_id(
    "name: x\ncovers: [C01, C99]\ndsh:\n  chat:\n    - user: hi\n",
    2,
    15,
    "unknown claim ID `C99`"
)]
#[case::malformed_claim_id(
    "name: x\ncovers:\n  - B1\ndsh:\n  chat:\n    - user: hi\n",
    3,
    5,
    "unknown claim ID `B1`"
)]
#[case::result_and_error(
    "name: x\ncovers: []\ndsh:\n  tools:\n    - { name: t, result: 1, error: no }\n  chat:\n    - user: hi\n",
    5,
    7,
    "both `result` and `error`"
)]
#[case::empty_chat(
    "name: x\ncovers: []\ndsh:\n  chat: []\n",
    4,
    3,
    "at least one `user` message"
)]
#[case::finish_and_error(
    "name: x\ncovers: []\ndsh:\n  chat:\n    - user: hi\nexpect:\n  finish: stop\n  error: ACP_TIMEOUT\n",
    7,
    3,
    "`finish: stop` carries none"
)]
#[case::executions_of_an_undeclared_tool(
    "name: x\ncovers: []\ndsh:\n  chat:\n    - user: hi\nexpect:\n  executions: { rm: 0 }\n",
    7,
    17,
    "`rm`"
)]
#[case::zero_time_bound(
    "name: x\ncovers: []\ntime_bound_secs: 0\ndsh:\n  chat:\n    - user: hi\n",
    3,
    18,
    "`time_bound_secs` must be between 1 and 3600"
)]
#[case::leftover_owner_misspelt(
    "name: x\ncovers: []\ndsh:\n  leftovers:\n    - { owner: dying, sessions: 1 }\n  chat:\n    - user: hi\n",
    5,
    16,
    "unknown variant `dying`"
)]
#[case::leftover_without_sessions(
    "name: x\ncovers: []\ndsh:\n  leftovers:\n    - { owner: dead }\n  chat:\n    - user: hi\n",
    5,
    9,
    "missing field `sessions`"
)]
#[case::leftover_with_too_many_sessions(
    "name: x\ncovers: []\ndsh:\n  leftovers:\n    - { owner: live, sessions: 17 }\n  chat:\n    - user: hi\n",
    5,
    7,
    "at most 16 sessions, not 17 (field `sessions`)"
)]
#[case::leaves_conversations_without_a_reason(
    "name: x\ncovers: []\nleaves_conversations: \" \"\ndsh:\n  chat:\n    - user: hi\n",
    3,
    23,
    "`leaves_conversations` needs a reason"
)]
#[case::bad_yaml("name: [x\n", 1, 7, "")]
fn a_mistake_names_file_line_and_column(
    #[case] text: &str,
    #[case] line: u64,
    #[case] column: u64,
    #[case] mentions: &str,
) {
    let error = parse(text, Path::new("scenarios/x.yaml")).unwrap_err();
    let rendered = error.to_string();
    assert!(
        rendered.starts_with(&format!("scenarios/x.yaml:{line}:{column}: ")),
        "{rendered}"
    );
    assert!(rendered.contains(mentions), "{rendered}");
    assert!(matches!(error, ScenarioError::Invalid { .. }));
}

#[test]
fn a_minimal_scenario_parses_with_defaults() {
    let scenario = parse(
        &format!("name: x\ncovers: [C01, B05]\n{CHAT}"),
        Path::new("x.yaml"),
    )
    .unwrap();
    assert!(scenario.fake_only.is_none());
    assert!(scenario.dsh.model.is_none());
    assert_eq!(scenario.covers.len(), 2);
    assert!(scenario.expect.wire.is_none());
}

#[test]
fn an_unreadable_file_names_the_path() {
    let error = dsh_sim::scenario::load(Path::new("no/such/scenario.yaml")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("no/such/scenario.yaml: cannot read"),
        "{error}"
    );
}
