//! Parse-time validation: the rules serde's derive cannot express run while parsing, so
//! a failure carries the location of the YAML node it concerns. This module owns the
//! machinery ([`Check`] and the `deserialize_with` helpers that run it) and the rules of
//! single fields; a part's own rules (a non-empty chat, unique tool names, `result` xor
//! `error`) are its [`Check`] impl, beside its type in `scenario.rs`.

use serde::{Deserialize, Deserializer, de};

/// A part of a scenario that can be checked on its own once parsed.
pub(super) trait Check {
    /// Why the value is unusable, if it is.
    fn check(&self) -> Result<(), String>;
}

/// Deserializes a `T` and checks it; a failure is reported at the node's location.
struct Checked<T>(T);

impl<'de, T: Deserialize<'de> + Check> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = T::deserialize(deserializer)?;
        value.check().map_err(de::Error::custom)?;
        Ok(Self(value))
    }
}

/// `deserialize_with` helper: parse, then [`Check`].
pub(super) fn checked<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Check,
{
    Checked::<T>::deserialize(deserializer).map(|checked| checked.0)
}

/// `deserialize_with` helper for an optional part: checked when present.
pub(super) fn checked_option<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Check,
{
    Option::<Checked<T>>::deserialize(deserializer).map(|checked| checked.map(|c| c.0))
}

/// `deserialize_with` helper for lists: each element is checked at its own location.
pub(super) fn checked_each<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Check,
{
    Vec::<Checked<T>>::deserialize(deserializer)
        .map(|items| items.into_iter().map(|checked| checked.0).collect())
}

/// `deserialize_with` helper for `known_failure`: the reason must say something.
pub(super) fn known_failure<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    let reason = Option::<String>::deserialize(deserializer)?;
    if reason.as_deref().is_some_and(|text| text.trim().is_empty()) {
        return Err(de::Error::custom(
            "`known_failure` needs a reason and a tracking note",
        ));
    }
    Ok(reason)
}

/// `deserialize_with` helper for `fake_only`: one line that says why.
pub(super) fn reason<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    let reason = Option::<String>::deserialize(deserializer)?;
    match reason.as_deref() {
        Some(text) if text.trim().is_empty() => Err(de::Error::custom(
            "`fake_only` needs a reason: why a real agent cannot play the scenario",
        )),
        Some(text) if text.trim().contains('\n') => Err(de::Error::custom(
            "`fake_only` is one line: why a real agent cannot play the scenario",
        )),
        _ => Ok(reason),
    }
}

/// `deserialize_with` helper for `time_bound_secs`: a bound of zero (or one over an hour)
/// is a mistake, not a scenario.
pub(super) fn time_bound_secs<'de, D>(deserializer: D) -> Result<Option<u64>, D::Error>
where
    D: Deserializer<'de>,
{
    let bound = Option::<u64>::deserialize(deserializer)?;
    if bound.is_some_and(|secs| secs == 0 || secs > 3600) {
        return Err(de::Error::custom(
            "`time_bound_secs` must be between 1 and 3600 seconds",
        ));
    }
    Ok(bound)
}

/// `deserialize_with` helper for `fake:`: the fake's own script checks (model catalogue,
/// expectations after calls, ...), reported at the `fake:` node.
pub(super) fn checked_script<'de, D>(
    deserializer: D,
) -> Result<fake_antigravity::script::Script, D::Error>
where
    D: Deserializer<'de>,
{
    let script = fake_antigravity::script::Script::deserialize(deserializer)?;
    fake_antigravity::check_script(&script)
        .map_err(|why| de::Error::custom(format!("invalid `fake` script: {why}")))?;
    Ok(script)
}
