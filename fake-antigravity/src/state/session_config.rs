//! A session's model and mode, and the three views of them the server sends: the legacy
//! `models` (SessionModelState), `modes`, and `configOptions` (model first, then mode), in
//! the docs/antigravity-1.3.0.md §6 shapes. Config is not persisted: load and resume reset
//! it.

use serde_json::{Value, json};

use crate::acp::catalogue::{
    DEFAULT_MODE, DEFAULT_MODEL, FREE_TIER_MODELS, MODES, model_display_name,
};
use crate::script::Script;

/// The models a session may use, and the one a new session starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCatalogue {
    models: Vec<(String, String)>,
    default: String,
}

impl ModelCatalogue {
    /// The script's catalogue (or the 1.3.0 free tier) and default model (the script's, or
    /// `gemini-3.8-flash-high` when listed, or the first model).
    pub fn from_script(script: &Script) -> Self {
        let models: Vec<(String, String)> = match &script.models {
            Some(ids) => ids
                .iter()
                .map(|id| (id.clone(), model_display_name(id)))
                .collect(),
            None => FREE_TIER_MODELS
                .iter()
                .map(|(id, name)| ((*id).to_string(), (*name).to_string()))
                .collect(),
        };
        let default = match &script.default_model {
            Some(model) => model.clone(),
            None if models.iter().any(|(id, _)| id == DEFAULT_MODEL) => DEFAULT_MODEL.to_string(),
            None => models
                .first()
                .map(|(id, _)| id.clone())
                .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
        };
        Self { models, default }
    }

    /// Whether `id` is a model of the catalogue.
    pub fn contains(&self, id: &str) -> bool {
        self.models.iter().any(|(known, _)| known == id)
    }

    /// The model a new (or reloaded) session starts with.
    pub fn default_model(&self) -> &str {
        &self.default
    }
}

/// Whether `id` is a permission mode.
pub fn is_mode(id: &str) -> bool {
    MODES.iter().any(|(known, _, _)| *known == id)
}

/// Why a config change was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `configId` is neither `model` nor `mode`.
    #[error("unknown config option `{0}`")]
    UnknownOption(String),
    /// The value is not one of the option's values.
    #[error("`{value}` is not a valid value for `{option}`")]
    UnknownValue {
        /// The option.
        option: String,
        /// The refused value.
        value: String,
    },
}

/// A session's current model and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// The current model id.
    pub model: String,
    /// The current mode id (`default`, `auto_edit`, `yolo`).
    pub mode: String,
}

impl SessionConfig {
    /// The config of a new session.
    pub fn initial(catalogue: &ModelCatalogue) -> Self {
        Self {
            model: catalogue.default_model().to_string(),
            mode: DEFAULT_MODE.to_string(),
        }
    }

    /// Sets `config_id` (`model` or `mode`) to `value`.
    pub fn set(
        &mut self,
        catalogue: &ModelCatalogue,
        config_id: &str,
        value: &str,
    ) -> Result<(), ConfigError> {
        let unknown = || ConfigError::UnknownValue {
            option: config_id.to_string(),
            value: value.to_string(),
        };
        match config_id {
            "model" if catalogue.contains(value) => self.model = value.to_string(),
            "mode" if is_mode(value) => self.mode = value.to_string(),
            "model" | "mode" => return Err(unknown()),
            other => return Err(ConfigError::UnknownOption(other.to_string())),
        }
        Ok(())
    }

    /// `configOptions`: the model option first, then the mode option.
    pub fn config_options(&self, catalogue: &ModelCatalogue) -> Value {
        let models: Vec<Value> = catalogue
            .models
            .iter()
            .map(|(id, name)| json!({"value": id, "name": name, "description": id}))
            .collect();
        let modes: Vec<Value> = MODES
            .iter()
            .map(|(id, name, description)| {
                json!({"value": id, "name": name, "description": description})
            })
            .collect();
        json!([
            {"currentValue": self.model, "id": "model", "name": "Model", "category": "model",
             "type": "select", "options": models},
            {"currentValue": self.mode, "id": "mode", "name": "Session Mode", "category": "mode",
             "type": "select", "options": modes}
        ])
    }

    /// The session body of `session/new` (plus `sessionId`), `load` and `resume`:
    /// `modes`, legacy `models` and `configOptions`.
    pub fn session_body(&self, catalogue: &ModelCatalogue) -> serde_json::Map<String, Value> {
        let available_modes: Vec<Value> = MODES
            .iter()
            .map(|(id, name, description)| {
                json!({"id": id, "name": name, "description": description})
            })
            .collect();
        let available_models: Vec<Value> = catalogue
            .models
            .iter()
            .map(|(id, name)| json!({"modelId": id, "name": name, "description": id}))
            .collect();
        let mut body = serde_json::Map::new();
        body.insert(
            "modes".into(),
            json!({"currentModeId": self.mode, "availableModes": available_modes}),
        );
        body.insert(
            "models".into(),
            json!({"availableModels": available_models, "currentModelId": self.model}),
        );
        body.insert("configOptions".into(), self.config_options(catalogue));
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_session_uses_the_free_tier_and_puts_model_first() {
        let catalogue = ModelCatalogue::from_script(&Script::default());
        let config = SessionConfig::initial(&catalogue);
        let body = config.session_body(&catalogue);
        assert_eq!(body["configOptions"][0]["id"], "model");
        assert_eq!(
            body["configOptions"][0]["currentValue"],
            "gemini-3.8-flash-high"
        );
        assert_eq!(body["configOptions"][1]["id"], "mode");
        assert_eq!(
            body["models"]["availableModels"][9]["name"],
            "Gemini 3.1 Pro (High)"
        );
        assert_eq!(
            body["models"]["availableModels"][9]["description"],
            "gemini-pro-agent"
        );
    }

    #[test]
    fn set_refuses_unknown_values() {
        let catalogue = ModelCatalogue::from_script(&Script::default());
        let mut config = SessionConfig::initial(&catalogue);
        assert!(
            config
                .set(&catalogue, "model", "gemini-3.1-pro-low")
                .is_ok()
        );
        assert_eq!(config.model, "gemini-3.1-pro-low");
        assert!(config.set(&catalogue, "model", "gpt-5").is_err());
        assert!(config.set(&catalogue, "mode", "yolo").is_ok());
        assert!(config.set(&catalogue, "effort", "x").is_err());
    }
}
