//! The `expect.error` field's schema: the adapter's failure codes as scenarios spell them
//! (DSH's strings), so an editor completes them. The format's types name it in their
//! `schema_with`; the schema of the whole file is `schema.rs`'s.

use antigravity_acp::contract::LlmErrorCode;
use schemars::{Schema, SchemaGenerator, json_schema};

/// The adapter's failure codes, as scenarios spell them (`expect.error`): DSH's strings.
pub(super) fn llm_error_code(_: &mut SchemaGenerator) -> Schema {
    string_enum(
        "The code of the failure the last run's finish carries (a DSH string).",
        LlmErrorCode::ALL.iter().map(|code| code.as_str().into()),
    )
}

fn string_enum(description: &str, values: impl Iterator<Item = serde_json::Value>) -> Schema {
    json_schema!({
        "description": description,
        "type": "string",
        "enum": values.collect::<Vec<_>>(),
    })
}
