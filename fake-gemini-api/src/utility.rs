//! Side requests (a JSON answer wanted): the smallest instance of the requested schema.
//!
//! Gemini CLI's model router, next-speaker check and the like ask for JSON output with a
//! `responseSchema` (OpenAPI subset, types may be upper-case) or a `responseJsonSchema`.
//! The answer: an object with every `required` property (all properties if none are
//! listed), `""` for strings, an enum's first value, `0`, `false`, `[]`.

use serde_json::{Map, Value};

/// Past this depth the instance is `null` (recursive schemas end).
const MAX_DEPTH: usize = 16;

/// The smallest JSON instance of `schema`.
pub fn minimal_instance(schema: &Value) -> Value {
    instance_at(schema, 0)
}

fn instance_at(schema: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    for alternatives in ["anyOf", "oneOf", "any_of"] {
        if let Some(first) = schema
            .get(alternatives)
            .and_then(Value::as_array)
            .and_then(|values| values.first())
        {
            return instance_at(first, depth + 1);
        }
    }
    match type_name(schema).as_deref() {
        Some("object") => object_instance(schema, depth),
        Some("string") => Value::String(String::new()),
        Some("integer" | "number") => Value::from(0),
        Some("boolean") => Value::Bool(false),
        Some("array") => Value::Array(Vec::new()),
        None if schema.get("properties").is_some() => object_instance(schema, depth),
        _ => Value::Null,
    }
}

/// The lower-cased type; the first non-null one of a type list.
fn type_name(schema: &Value) -> Option<String> {
    match schema.get("type")? {
        Value::String(name) => Some(name.to_ascii_lowercase()),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_ascii_lowercase)
            .find(|name| name != "null"),
        _ => None,
    }
}

fn object_instance(schema: &Value, depth: usize) -> Value {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut object = Map::new();
    for (name, property) in properties {
        if required.is_empty() || required.contains(&name.as_str()) {
            object.insert(name.clone(), instance_at(property, depth + 1));
        }
    }
    for name in required {
        if !object.contains_key(name) {
            object.insert(name.to_owned(), Value::Null);
        }
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn upper_case_types_enums_and_required() {
        let schema = json!({
            "type": "OBJECT",
            "properties": {
                "reasoning": {"type": "STRING"},
                "next_speaker": {"type": "STRING", "enum": ["user", "model"]},
                "score": {"type": "NUMBER"},
                "optional": {"type": "BOOLEAN"}
            },
            "required": ["reasoning", "next_speaker", "score"]
        });
        assert_eq!(
            minimal_instance(&schema),
            json!({"reasoning": "", "next_speaker": "user", "score": 0})
        );
    }

    #[test]
    fn all_properties_when_none_required() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": ["null", "boolean"]}, "b": {"type": "array"}, "c": {"type": "integer"}}});
        assert_eq!(
            minimal_instance(&schema),
            json!({"a": false, "b": [], "c": 0})
        );
    }
}
