//! Resolving a script's host tool name (`read_file`) to the function the agent declared
//! for it (`read_file_c9f8123bd272`, `mcp_dsh_read_file_c9f8123bd272`).
//!
//! Rule: the declaration named `<tool>_<hex12>` or ending with `_<tool>_<hex12>` (12
//! lowercase hex digits, the MCP bridge's hash), where `tool` is first sanitized as the
//! bridge names a tool (every character but `[A-Za-z0-9_-]` becomes `_`). Never the
//! bare name: an agent's own tool may be called `read_file` too, and a host tool is
//! always declared under its hash. Never a looser match. None or several is a failure.

/// Why a tool name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No declaration fits.
    #[error("no declared function ends with `{tool}_<12 hex>` (declared: {declared})")]
    NotDeclared {
        /// The script's tool name.
        tool: String,
        /// The declared names, comma-separated.
        declared: String,
    },
    /// Several declarations fit.
    #[error("several declared functions fit `{tool}`: {candidates}")]
    Ambiguous {
        /// The script's tool name.
        tool: String,
        /// The fitting names, comma-separated.
        candidates: String,
    },
}

/// Resolves `tool` against the declared function names.
pub fn resolve_tool<'a>(tool: &str, declared: &[&'a str]) -> Result<&'a str, ResolveError> {
    let sanitized: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let candidates: Vec<&'a str> = declared
        .iter()
        .copied()
        .filter(|name| is_hashed_name_of(name, &sanitized))
        .collect();
    match candidates.as_slice() {
        [only] => Ok(only),
        [] => Err(ResolveError::NotDeclared {
            tool: tool.to_owned(),
            declared: declared.join(", "),
        }),
        several => Err(ResolveError::Ambiguous {
            tool: tool.to_owned(),
            candidates: several.join(", "),
        }),
    }
}

/// `<tool>_<hex12>` or `..._<tool>_<hex12>`.
fn is_hashed_name_of(name: &str, tool: &str) -> bool {
    let Some((stem, hash)) = name.rsplit_once('_') else {
        return false;
    };
    let is_hash = hash.len() == 12
        && hash
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    if !is_hash {
        return false;
    }
    stem == tool
        || stem
            .strip_suffix(tool)
            .is_some_and(|prefix| prefix.ends_with('_'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hashed_names_fit_only_on_a_whole_underscore_boundary() {
        assert!(is_hashed_name_of("read_file_c9f8123bd272", "read_file"));
        assert!(is_hashed_name_of(
            "mcp_dsh_read_file_c9f8123bd272",
            "read_file"
        ));
        assert!(!is_hashed_name_of(
            "mcp_dsh_xread_file_c9f8123bd272",
            "read_file"
        ));
        assert!(!is_hashed_name_of("read_file_C9F8123BD272", "read_file"));
        assert!(!is_hashed_name_of("read_file_c9f8123bd27", "read_file"));
        assert!(!is_hashed_name_of(
            "read_file_extra_c9f8123bd272",
            "read_file"
        ));
    }

    #[test]
    fn an_agents_own_tool_of_the_same_name_is_never_taken() {
        let declared = ["read_file", "mcp_dsh_read_file_c9f8123bd272"];
        assert_eq!(
            resolve_tool("read_file", &declared).unwrap(),
            "mcp_dsh_read_file_c9f8123bd272"
        );
        assert!(resolve_tool("read_file", &["read_file"]).is_err());
    }

    #[test]
    fn a_name_the_bridge_sanitizes_resolves_and_two_alike_are_ambiguous() {
        let one = ["mcp_dsh_fs_read_4074bc025755"];
        assert_eq!(resolve_tool("fs.read", &one).unwrap(), one[0]);
        let kept = ["mcp_dsh_fs-read_4074bc025755"];
        assert_eq!(resolve_tool("fs-read", &kept).unwrap(), kept[0]);
        let two = [
            "mcp_dsh_fs_read_4074bc025755",
            "mcp_dsh_fs_read_42bf01ad692f",
        ];
        assert!(matches!(
            resolve_tool("fs.read", &two),
            Err(ResolveError::Ambiguous { .. })
        ));
    }
}
