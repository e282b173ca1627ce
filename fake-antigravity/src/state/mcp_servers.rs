//! The `mcpServers` list of `session/new` / `session/load` / `session/resume`: validated
//! like the real server does (http/sse `{type,name,url,headers[]}`, stdio
//! `{name,command,args,env[]}`), and kept per session. Nothing connects here: 1.3.0
//! connects lazily, so a dead URL is accepted.

use serde_json::{Value, json};

use crate::acp::rpc_errors::ParamProblem;

/// One `{name, value}` pair of an http header or a stdio env variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameValue {
    /// The header or variable name.
    pub name: String,
    /// Its value, verbatim.
    pub value: String,
}

/// An MCP server reachable over HTTP (Streamable HTTP, or legacy SSE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpMcpServer {
    /// The server's name (the `<server>` of `<server>_<tool>` titles).
    pub name: String,
    /// Its URL.
    pub url: String,
    /// The headers to send with every request, verbatim and in order.
    pub headers: Vec<NameValue>,
}

/// An MCP server the agent would spawn itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioMcpServer {
    /// The server's name.
    pub name: String,
    /// The command.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment.
    pub env: Vec<NameValue>,
}

/// One accepted `mcpServers` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerEntry {
    /// `type: "http"`: the fake's MCP client uses these.
    Http(HttpMcpServer),
    /// `type: "sse"`: accepted and remembered, never connected by the fake.
    Sse(HttpMcpServer),
    /// No `type` (or `stdio`): accepted and remembered, never spawned by the fake.
    Stdio(StdioMcpServer),
}

impl McpServerEntry {
    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Http(s) | Self::Sse(s) => &s.name,
            Self::Stdio(s) => &s.name,
        }
    }
}

/// Validates an `mcpServers` list; `field` is the params key it came from.
pub fn parse_mcp_servers(
    field: &str,
    items: &[Value],
) -> Result<Vec<McpServerEntry>, Vec<ParamProblem>> {
    let mut problems = Vec::new();
    let mut servers = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let mut entry = EntryReader {
            base: vec![json!(field), json!(index)],
            item,
            problems: &mut problems,
        };
        if let Some(server) = entry.read() {
            servers.push(server);
        }
    }
    if problems.is_empty() {
        Ok(servers)
    } else {
        Err(problems)
    }
}

struct EntryReader<'a, 'p> {
    base: Vec<Value>,
    item: &'a Value,
    problems: &'p mut Vec<ParamProblem>,
}

impl EntryReader<'_, '_> {
    fn loc(&self, key: &str) -> Vec<Value> {
        let mut loc = self.base.clone();
        loc.push(json!(key));
        loc
    }

    fn read(&mut self) -> Option<McpServerEntry> {
        if !self.item.is_object() {
            self.problems
                .push(ParamProblem::wrong_type(self.base.clone(), "dict"));
            return None;
        }
        match self.item.get("type").and_then(Value::as_str) {
            Some("http") => self.http().map(McpServerEntry::Http),
            Some("sse") => self.http().map(McpServerEntry::Sse),
            None | Some("stdio") => self.stdio().map(McpServerEntry::Stdio),
            Some(other) => {
                let message = format!("unsupported MCP server type `{other}`");
                self.problems
                    .push(ParamProblem::bad_value(self.loc("type"), message));
                None
            }
        }
    }

    fn http(&mut self) -> Option<HttpMcpServer> {
        let name = self.string("name");
        let url = self.string("url");
        let headers = self.pairs("headers");
        Some(HttpMcpServer {
            name: name?,
            url: url?,
            headers: headers?,
        })
    }

    fn stdio(&mut self) -> Option<StdioMcpServer> {
        let name = self.string("name");
        let command = self.string("command");
        let args = self.strings("args");
        let env = self.pairs("env");
        Some(StdioMcpServer {
            name: name?,
            command: command?,
            args: args?,
            env: env?,
        })
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.item.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            None | Some(Value::Null) => {
                self.problems.push(ParamProblem::missing(self.loc(key)));
                None
            }
            Some(_) => {
                self.problems
                    .push(ParamProblem::wrong_type(self.loc(key), "str"));
                None
            }
        }
    }

    fn list(&mut self, key: &str) -> Option<&Vec<Value>> {
        match self.item.get(key) {
            Some(Value::Array(items)) => Some(items),
            None | Some(Value::Null) => {
                self.problems.push(ParamProblem::missing(self.loc(key)));
                None
            }
            Some(_) => {
                self.problems
                    .push(ParamProblem::wrong_type(self.loc(key), "list"));
                None
            }
        }
    }

    fn strings(&mut self, key: &str) -> Option<Vec<String>> {
        let loc = self.loc(key);
        let items = self.list(key)?.clone();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(s) => out.push(s.to_string()),
                None => {
                    let mut at = loc.clone();
                    at.push(json!(i));
                    self.problems.push(ParamProblem::wrong_type(at, "str"));
                }
            }
        }
        (out.len() == items.len()).then_some(out)
    }

    fn pairs(&mut self, key: &str) -> Option<Vec<NameValue>> {
        let loc = self.loc(key);
        let items = self.list(key)?.clone();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let mut at = loc.clone();
            at.push(json!(i));
            let name = item.get("name").and_then(Value::as_str);
            let value = item.get("value").and_then(Value::as_str);
            for (field, found) in [("name", name), ("value", value)] {
                if found.is_none() {
                    let mut field_loc = at.clone();
                    field_loc.push(json!(field));
                    self.problems.push(ParamProblem::missing(field_loc));
                }
            }
            if let (Some(name), Some(value)) = (name, value) {
                out.push(NameValue {
                    name: name.to_string(),
                    value: value.to_string(),
                });
            }
        }
        (out.len() == items.len()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_three_transports() {
        let items = vec![
            json!({"type":"http","name":"bridge","url":"http://127.0.0.1:1/mcp",
                   "headers":[{"name":"Authorization","value":"Bearer t"}]}),
            json!({"type":"sse","name":"s","url":"http://x","headers":[]}),
            json!({"name":"local","command":"/bin/true","args":[],"env":[]}),
        ];
        let servers = parse_mcp_servers("mcpServers", &items).unwrap_or_default();
        assert_eq!(servers.len(), 3);
        assert_eq!(servers[0].name(), "bridge");
    }

    #[test]
    fn reports_missing_fields_with_their_location() {
        let items = vec![json!({"type":"http","name":"bridge","headers":[]})];
        let Err(problems) = parse_mcp_servers("mcpServers", &items) else {
            panic!("expected problems");
        };
        assert_eq!(
            problems[0].loc,
            vec![json!("mcpServers"), json!(0), json!("url")]
        );
    }
}
