//! The scenario format's JSON Schema, generated from the Rust types (schemars) and
//! committed as `scenarios/scenario.schema.json`, so editors complete and check keys. The
//! strict parser stays the judge; the schema is its editor-side mirror (a test keeps the
//! committed file current, and every scenario names it in its first line).

use schemars::generate::SchemaSettings;

use super::Scenario;

/// The committed schema's file name, in the `scenarios/` folder.
pub const SCHEMA_FILE_NAME: &str = "scenario.schema.json";

/// How every scenario file's first line starts; the schema's path relative to the
/// scenario's folder follows (`../scenario.schema.json` for `scenarios/AREA/NAME.yaml`).
pub const SCHEMA_LINE_PREFIX: &str = "# yaml-language-server: $schema=";

/// The schema of a scenario file, pretty JSON ending with a newline (draft-07, which
/// every YAML language server reads).
pub fn scenario_schema_json() -> String {
    let mut schema = SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<Scenario>();
    schema.insert(
        "title".to_owned(),
        "antigravity-acp dsh-sim scenario".into(),
    );
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
