//! Reading request params the way the real (pydantic-validated) server does: collect
//! every missing or mistyped field, then answer one -32602 listing them all.

use agent_client_protocol::Error;
use serde_json::{Value, json};

use crate::acp::rpc_errors::{ParamProblem, invalid_params};

/// A params object being read; problems accumulate until [`ParamReader::finish`].
pub struct ParamReader<'a> {
    params: &'a Value,
    problems: Vec<ParamProblem>,
}

impl<'a> ParamReader<'a> {
    /// Starts reading `params` (anything that is not an object has no fields).
    pub fn new(params: &'a Value) -> Self {
        Self {
            params,
            problems: Vec::new(),
        }
    }

    fn field(&self, key: &str) -> Option<&'a Value> {
        self.params.get(key).filter(|v| !v.is_null())
    }

    /// A required string field.
    pub fn required_str(&mut self, key: &str) -> Option<&'a str> {
        match self.field(key) {
            None => {
                self.problems.push(ParamProblem::missing(vec![json!(key)]));
                None
            }
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => {
                self.problems
                    .push(ParamProblem::wrong_type(vec![json!(key)], "str"));
                None
            }
        }
    }

    /// An optional string field (absent or null is `None`).
    pub fn optional_str(&mut self, key: &str) -> Option<&'a str> {
        match self.field(key) {
            None => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => {
                self.problems
                    .push(ParamProblem::wrong_type(vec![json!(key)], "str"));
                None
            }
        }
    }

    /// A required array field.
    pub fn required_array(&mut self, key: &str) -> Option<&'a Vec<Value>> {
        match self.field(key) {
            None => {
                self.problems.push(ParamProblem::missing(vec![json!(key)]));
                None
            }
            Some(Value::Array(items)) => Some(items),
            Some(_) => {
                self.problems
                    .push(ParamProblem::wrong_type(vec![json!(key)], "list"));
                None
            }
        }
    }

    /// An optional array field.
    pub fn optional_array(&mut self, key: &str) -> Option<&'a Vec<Value>> {
        match self.field(key) {
            None => None,
            Some(Value::Array(items)) => Some(items),
            Some(_) => {
                self.problems
                    .push(ParamProblem::wrong_type(vec![json!(key)], "list"));
                None
            }
        }
    }

    /// A required field of any JSON type.
    pub fn required_any(&mut self, key: &str) -> Option<&'a Value> {
        let value = self.field(key);
        if value.is_none() {
            self.problems.push(ParamProblem::missing(vec![json!(key)]));
        }
        value
    }

    /// Records a problem found by the caller.
    pub fn problem(&mut self, problem: ParamProblem) {
        self.problems.push(problem);
    }

    /// Records several problems found by the caller.
    pub fn problems(&mut self, problems: impl IntoIterator<Item = ParamProblem>) {
        self.problems.extend(problems);
    }

    /// `Ok` when every field read was fine, otherwise the -32602 to answer.
    pub fn finish(self) -> Result<(), Error> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(invalid_params(&self.problems))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_every_problem() {
        let params = json!({"cwd": 3});
        let mut reader = ParamReader::new(&params);
        assert_eq!(reader.required_str("cwd"), None);
        assert_eq!(reader.required_array("mcpServers"), None);
        let Err(error) = reader.finish() else {
            panic!("expected an error");
        };
        assert_eq!(
            error.data,
            Some(json!({"errors": [
                {"loc": ["cwd"], "msg": "str type expected", "type": "type_error.str"},
                {"loc": ["mcpServers"], "msg": "field required", "type": "value_error.missing"}
            ]}))
        );
    }
}
