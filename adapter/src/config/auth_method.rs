//! `AuthMethod`: the sign-in method the user chose for Google's server (`authMethod`), one
//! of the four 1.3.0 advertises. The adapter authenticates only with it, and never
//! switches a method the server's `settings.json` already names (issue 25 §2).

/// How the user signs in to Google's server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMethod {
    /// A personal Google account, through the browser (the default).
    #[default]
    OauthPersonal,
    /// Gemini Enterprise, through the browser (needs `gcp.project` and `gcp.location` in
    /// the server's `settings.json`).
    OauthBusiness,
    /// A Gemini API key (`GEMINI_API_KEY`, passed through to the server).
    GeminiApiKey,
    /// Vertex AI (`GOOGLE_API_KEY`, or `GOOGLE_CLOUD_PROJECT` and `GOOGLE_CLOUD_LOCATION`
    /// with Application Default Credentials, passed through).
    AgentPlatform,
}

impl AuthMethod {
    /// Every method, in the server's order.
    pub const ALL: [Self; 4] = [
        Self::OauthPersonal,
        Self::OauthBusiness,
        Self::GeminiApiKey,
        Self::AgentPlatform,
    ];

    /// The method's id on the wire and in `settings.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OauthPersonal => "oauth-personal",
            Self::OauthBusiness => "oauth-business",
            Self::GeminiApiKey => "gemini-api-key",
            Self::AgentPlatform => "agent-platform",
        }
    }

    /// Whether signing in opens a browser (the OAuth flows).
    pub fn needs_browser(self) -> bool {
        matches!(self, Self::OauthPersonal | Self::OauthBusiness)
    }

    /// What the server needs in its environment for this method, for an error message.
    pub fn needs(self) -> &'static str {
        match self {
            Self::OauthPersonal => "a browser sign-in",
            Self::OauthBusiness => {
                "a browser sign-in, and gcp.project and gcp.location in the server's settings.json"
            }
            Self::GeminiApiKey => "GEMINI_API_KEY in the environment DSH starts from",
            Self::AgentPlatform => {
                "GOOGLE_API_KEY, or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION with \
                 Application Default Credentials, in the environment DSH starts from"
            }
        }
    }

    /// The method `id` names; `vertex-ai`, `agent-platform`'s former id, which 1.3.0 still
    /// accepts in `settings.json`, is `agent-platform`.
    pub fn from_id(id: &str) -> Option<Self> {
        if id == "vertex-ai" {
            return Some(Self::AgentPlatform);
        }
        Self::ALL.into_iter().find(|method| method.as_str() == id)
    }
}

impl std::fmt::Display for AuthMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_reads_back_from_its_id_and_from_json() -> crate::TestResult {
        for method in AuthMethod::ALL {
            assert_eq!(AuthMethod::from_id(method.as_str()), Some(method));
            let json: AuthMethod = serde_json::from_str(&format!("\"{method}\""))?;
            assert_eq!(json, method);
        }
        assert_eq!(
            AuthMethod::from_id("vertex-ai"),
            Some(AuthMethod::AgentPlatform)
        );
        assert_eq!(AuthMethod::from_id("password"), None);
        assert_eq!(AuthMethod::default(), AuthMethod::OauthPersonal);
        Ok(())
    }
}
