#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `scenarios/scenario.schema.json` is generated from the scenario types and kept current,
//! and it agrees with the strict parser: every scenario validates, a misspelt key does not.

use std::path::{Path, PathBuf};

use dsh_sim::scenario::{SCHEMA_FILE_NAME, scenario_schema_json};
use serde_json::Value;

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

fn committed_schema() -> String {
    std::fs::read_to_string(scenarios_dir().join(SCHEMA_FILE_NAME)).unwrap_or_default()
}

#[test]
fn the_committed_schema_is_current() {
    assert!(
        committed_schema() == scenario_schema_json(),
        "scenarios/{SCHEMA_FILE_NAME} is stale (or missing); regenerate it from the \
         repository root with\n    cargo run -p dsh-sim -- schema > scenarios/{SCHEMA_FILE_NAME}"
    );
}

fn validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&scenario_schema_json()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn as_json(yaml: &str) -> Value {
    serde_saphyr::from_str::<Value>(yaml).unwrap()
}

#[test]
fn every_scenario_validates_against_the_schema() {
    let validator = validator();
    let files = dsh_sim::runner::discover::scenario_files(&[scenarios_dir()]).unwrap();
    assert!(!files.is_empty());
    for file in files {
        let instance = as_json(&std::fs::read_to_string(&file).unwrap());
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
}

#[test]
fn the_schema_refuses_what_the_parser_refuses() {
    let validator = validator();
    let good = "name: x\ncovers: [C01]\ndsh:\n  tools:\n    - { name: t, permission: deny }\n  chat:\n    - user: hi\nexpect:\n  finish: stop\n";
    assert!(validator.is_valid(&as_json(good)));
    for bad in [
        good.replace("permission:", "permision:"),
        good.replace("deny", "maybe"),
        good.replace("C01", "C99"),
        good.replace("finish: stop", "finish: stopped"),
        good.replace("covers: [C01]\n", ""),
        good.replace("name: x\n", "name: x\nknown_failure: 3\n"),
    ] {
        assert!(!validator.is_valid(&as_json(&bad)), "{bad}");
    }
}
