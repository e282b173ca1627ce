//! `ToolCatalog`: the turn's DSH tools as the bridge exports them. Each tool gets a hashed
//! MCP name (so no normalisation can make two tools collide), keeps its original name as
//! the MCP `title`, and carries a validator compiled from its original JSON Schema with
//! every constraint intact and remote references refused.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::contract::ToolSchema;
use crate::error::AdapterError;

/// At most this many tools per catalog.
pub(crate) const MAX_TOOLS: usize = 256;
/// At most this many bytes per tool definition (name, description and schema as JSON).
pub(crate) const MAX_DEFINITION_BYTES: usize = 128 * 1024;
/// How much of the original name the MCP name keeps, for the model's benefit.
const NAME_PREFIX_CHARS: usize = 40;
/// Hex digits of the name hash in the MCP name.
const NAME_HASH_HEX: usize = 12;
/// At most this many validation errors are reported back to the model.
const MAX_REPORTED_ERRORS: usize = 5;

/// One exported tool.
#[derive(Debug)]
pub(crate) struct ExportedTool {
    /// DSH's original name.
    pub(crate) original: String,
    /// The hashed MCP name.
    pub(crate) mcp_name: String,
    description: String,
    schema: Arc<JsonObject>,
    validator: jsonschema::Validator,
}

impl ExportedTool {
    /// Checks arguments against the original schema; the error lists what is wrong.
    pub(crate) fn validate(&self, arguments: &Value) -> Result<(), String> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(arguments)
            .take(MAX_REPORTED_ERRORS)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("{at}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// The tool as MCP lists it.
    pub(crate) fn to_mcp(&self) -> Tool {
        Tool::new(
            self.mcp_name.clone(),
            self.description.clone(),
            self.schema.clone(),
        )
        .with_title(self.original.clone())
    }
}

/// The tools of one turn, keyed by MCP name.
#[derive(Debug)]
pub(crate) struct ToolCatalog {
    tools: Vec<ExportedTool>,
    by_mcp_name: HashMap<String, usize>,
}

impl ToolCatalog {
    /// Builds the catalog, refusing any definition that cannot be exported faithfully.
    pub(crate) fn build(definitions: &[ToolSchema]) -> Result<Self, AdapterError> {
        if definitions.len() > MAX_TOOLS {
            return Err(AdapterError::InvalidTool {
                name: format!("({} tools)", definitions.len()),
                reason: format!("a request may offer at most {MAX_TOOLS} tools"),
            });
        }
        let mut tools = Vec::with_capacity(definitions.len());
        let mut by_mcp_name = HashMap::with_capacity(definitions.len());
        let mut originals = HashMap::with_capacity(definitions.len());
        for definition in definitions {
            if originals.insert(definition.name.clone(), ()).is_some() {
                return Err(invalid(definition, "the name is offered twice"));
            }
            let tool = export(definition)?;
            if by_mcp_name
                .insert(tool.mcp_name.clone(), tools.len())
                .is_some()
            {
                return Err(invalid(definition, "its hashed MCP name collides"));
            }
            tools.push(tool);
        }
        Ok(Self { tools, by_mcp_name })
    }

    /// The tool exported under `mcp_name`.
    pub(crate) fn get(&self, mcp_name: &str) -> Option<&ExportedTool> {
        self.by_mcp_name
            .get(mcp_name)
            .and_then(|&index| self.tools.get(index))
    }

    /// The tools as MCP `tools/list` returns them.
    pub(crate) fn mcp_tools(&self) -> Vec<Tool> {
        self.tools.iter().map(ExportedTool::to_mcp).collect()
    }

    /// Every exported tool.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &ExportedTool> {
        self.tools.iter()
    }

    /// Whether the catalog has no tools.
    pub(crate) fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The MCP name of a DSH tool: a readable prefix of `[A-Za-z0-9_]` and a hash of the exact
/// original name.
pub(crate) fn mcp_name(original: &str) -> String {
    let readable: String = original
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(NAME_PREFIX_CHARS)
        .collect();
    let hash = hex::encode(Sha256::digest(original.as_bytes()));
    let short = hash.get(..NAME_HASH_HEX).unwrap_or(&hash);
    format!("{readable}_{short}")
}

fn invalid(definition: &ToolSchema, reason: &str) -> AdapterError {
    AdapterError::InvalidTool {
        name: definition.name.clone(),
        reason: reason.to_owned(),
    }
}

fn export(definition: &ToolSchema) -> Result<ExportedTool, AdapterError> {
    if definition.name.is_empty() {
        return Err(invalid(definition, "the name is empty"));
    }
    let size = definition.name.len()
        + definition.description.len()
        + serde_json::to_vec(&definition.parameters).map_or(usize::MAX, |v| v.len());
    if size > MAX_DEFINITION_BYTES {
        return Err(invalid(
            definition,
            &format!("the definition is {size} bytes; at most {MAX_DEFINITION_BYTES} are allowed"),
        ));
    }
    let Value::Object(schema) = &definition.parameters else {
        return Err(invalid(definition, "the input schema is not a JSON object"));
    };
    if schema.get("type") != Some(&Value::String("object".to_owned())) {
        return Err(invalid(
            definition,
            "the input schema must have \"type\": \"object\" (MCP requires object arguments)",
        ));
    }
    let validator = jsonschema::options()
        .with_retriever(RefuseRemoteReferences)
        .build(&definition.parameters)
        .map_err(|e| invalid(definition, &format!("the input schema is invalid: {e}")))?;
    Ok(ExportedTool {
        original: definition.name.clone(),
        mcp_name: mcp_name(&definition.name),
        description: definition.description.clone(),
        schema: Arc::new(schema.clone()),
        validator,
    })
}

/// A retriever that fetches nothing: remote `$ref`s make the schema invalid.
struct RefuseRemoteReferences;

impl jsonschema::Retrieve for RefuseRemoteReferences {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("remote references are not fetched ({uri})").into())
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn tool(name: &str, schema: Value) -> ToolSchema {
        ToolSchema {
            name: name.to_owned(),
            description: format!("{name} does things"),
            parameters: schema,
        }
    }

    fn object() -> Value {
        json!({"type": "object", "properties": {"path": {"type": "string", "minLength": 2}}, "required": ["path"]})
    }

    #[test]
    fn names_that_normalise_alike_stay_distinct() -> crate::TestResult {
        let catalog =
            ToolCatalog::build(&[tool("read.file", object()), tool("read_file", object())])?;
        let names: Vec<_> = catalog.tools().map(|t| t.mcp_name.clone()).collect();
        assert_ne!(names[0], names[1]);
        assert!(names.iter().all(|n| n.starts_with("read_file_")));
        let mcp = catalog.mcp_tools();
        assert_eq!(mcp[0].title.as_deref(), Some("read.file"));
        Ok(())
    }

    #[test]
    fn arguments_are_checked_with_every_constraint() -> crate::TestResult {
        let catalog = ToolCatalog::build(&[tool("read_file", object())])?;
        let exported = catalog
            .get(&mcp_name("read_file"))
            .ok_or("the tool is not exported")?;
        assert!(exported.validate(&json!({"path": "ok"})).is_ok());
        let error = exported
            .validate(&json!({"path": "x"}))
            .err()
            .ok_or("a too short path was accepted")?;
        assert!(error.contains("/path"), "{error}");
        assert!(exported.validate(&json!({})).is_err());
        Ok(())
    }

    #[rstest]
    #[case::remote_ref(json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}))]
    #[case::not_object(json!({"type": "string"}))]
    #[case::bad_keyword_value(json!({"type": "object", "properties": {"a": {"type": "strin"}}}))]
    #[case::not_a_map(json!(["type"]))]
    fn invalid_definitions_fail_explicitly(#[case] schema: Value) -> crate::TestResult {
        let error = ToolCatalog::build(&[tool("t", schema)])
            .err()
            .ok_or("an invalid definition was accepted")?;
        assert!(matches!(error, AdapterError::InvalidTool { .. }), "{error}");
        Ok(())
    }

    /// A definition of exactly `size` bytes (name, description and schema as JSON), with
    /// `name_bytes` of name and `description_bytes` of description; the rest is schema.
    fn definition_of(
        size: usize,
        name_bytes: usize,
        description_bytes: usize,
    ) -> Result<ToolSchema, String> {
        let name = "n".repeat(name_bytes);
        let description = "d".repeat(description_bytes);
        let empty = serde_json::to_vec(&json!({"type": "object", "description": ""}))
            .map_err(|e| e.to_string())?
            .len();
        let padding = size
            .checked_sub(name_bytes + description_bytes + empty)
            .ok_or("the definition cannot be that small")?;
        let definition = ToolSchema {
            name,
            description,
            parameters: json!({"type": "object", "description": "s".repeat(padding)}),
        };
        let schema = serde_json::to_vec(&definition.parameters)
            .map_err(|e| e.to_string())?
            .len();
        assert_eq!(name_bytes + description_bytes + schema, size);
        Ok(definition)
    }

    /// C56 with the design's literal bounds: 256 tools pass, 257 are refused.
    #[test]
    fn at_most_256_tools_literally() {
        let tools: Vec<_> = (0..257).map(|i| tool(&format!("t{i}"), object())).collect();
        assert!(
            ToolCatalog::build(&tools[..256]).is_ok(),
            "256 tools refused"
        );
        let refused = ToolCatalog::build(&tools).err();
        assert!(
            matches!(refused, Some(AdapterError::InvalidTool { .. })),
            "257 tools accepted"
        );
    }

    /// C56 with the design's literal bound: a definition of exactly 128 KiB (131 072
    /// bytes) passes and one byte more is refused, whichever part carries the bytes (the
    /// name, the description or the schema all count).
    #[rstest]
    #[case::schema(1, 0)]
    #[case::name(100_000, 0)]
    #[case::description(1, 100_000)]
    #[case::all_three(40_000, 40_000)]
    fn a_definition_may_be_131_072_bytes_and_no_more(
        #[case] name_bytes: usize,
        #[case] description_bytes: usize,
    ) -> crate::TestResult {
        let at_limit = definition_of(131_072, name_bytes, description_bytes)?;
        if let Err(error) = ToolCatalog::build(&[at_limit]) {
            return Err(
                format!("a definition of exactly 131 072 bytes was refused: {error}").into(),
            );
        }
        let over = definition_of(131_073, name_bytes, description_bytes)?;
        assert!(
            matches!(
                ToolCatalog::build(&[over]),
                Err(AdapterError::InvalidTool { .. })
            ),
            "a definition of 131 073 bytes was accepted"
        );
        Ok(())
    }

    /// A retriever that counts what it is asked for and answers with a permissive schema,
    /// so a test can tell "never asked" from "asked and failed".
    #[derive(Default, Clone)]
    struct CountingRetriever {
        asked: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl jsonschema::Retrieve for CountingRetriever {
        fn retrieve(
            &self,
            _uri: &jsonschema::Uri<String>,
        ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
            self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(json!({"type": "string"}))
        }
    }

    /// C58: the adapter's retriever refuses every remote document outright: asked for one,
    /// it returns an error without fetching or inventing a document. (The counting
    /// retriever shows a remote `$ref` does reach the retriever, so the refusal is the
    /// adapter's, not the validator skipping the reference.)
    #[test]
    fn a_remote_reference_is_refused_not_fetched() -> crate::TestResult {
        let schema =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}});
        let counting = CountingRetriever::default();
        let built = jsonschema::options()
            .with_retriever(counting.clone())
            .build(&schema);
        assert!(
            built.is_ok(),
            "a retriever that answers makes the schema valid"
        );
        assert_eq!(
            counting.asked.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "the remote reference reached the retriever"
        );
        let uri = jsonschema::uri::from_str("https://example.com/s.json")?;
        let answer = jsonschema::Retrieve::retrieve(&RefuseRemoteReferences, &uri);
        let refusal = answer
            .err()
            .ok_or("the adapter's retriever returned a document")?;
        assert!(refusal.to_string().contains("not fetched"), "{refusal}");
        let error = ToolCatalog::build(&[tool("t", schema)])
            .err()
            .ok_or("a remote reference was accepted")?;
        assert!(error.to_string().contains("not fetched"), "{error}");
        Ok(())
    }

    #[test]
    fn an_empty_catalog_is_empty_and_one_tool_is_not() -> crate::TestResult {
        assert!(ToolCatalog::build(&[])?.is_empty());
        assert!(!ToolCatalog::build(&[tool("t", object())])?.is_empty());
        Ok(())
    }

    #[test]
    fn catalog_bounds_are_enforced() {
        let many: Vec<_> = (0..=MAX_TOOLS)
            .map(|i| tool(&format!("t{i}"), object()))
            .collect();
        assert!(ToolCatalog::build(&many).is_err());
        assert!(ToolCatalog::build(&many[..MAX_TOOLS]).is_ok());
        let huge = tool(
            "big",
            json!({"type": "object", "description": "x".repeat(MAX_DEFINITION_BYTES)}),
        );
        assert!(ToolCatalog::build(&[huge]).is_err());
        assert!(ToolCatalog::build(&[tool("dup", object()), tool("dup", object())]).is_err());
    }
}
