//! The server's stderr as a failed scenario's artefacts show it: redacted the way the
//! journal redacts credentials ([`fake_antigravity::journal::wire_tap::redacted`]: the
//! shape and a fingerprint, never the secret). In each line, the word after `Bearer`
//! (or any auth scheme a secret-looking key names), the value of a secret-looking key
//! (`token=…`, `api_key: …`, `"password":"…"`), and any run of 32 or more hex digits
//! (a bridge token is 64) are replaced.

use fake_antigravity::journal::wire_tap::redacted;

/// Words whose presence in a key makes its value a secret (as the journal's).
const SECRET_WORDS: [&str; 7] = [
    "authorization",
    "token",
    "secret",
    "key",
    "cookie",
    "password",
    "credential",
];

/// `text` with every secret-looking value redacted, line by line.
pub fn redact_stderr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&redact_line(line));
    }
    out
}

fn redact_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    // `true` when the previous word makes this one a secret.
    let mut secret_next = false;
    for piece in line.split_inclusive(|c: char| c.is_whitespace()) {
        let word = piece.trim_end();
        let gap = &piece[word.len()..];
        let (shown, next) = redact_word(word, secret_next);
        out.push_str(&shown);
        out.push_str(gap);
        secret_next = next;
    }
    out
}

/// A word as shown, and whether the word after it is a secret.
fn redact_word(word: &str, secret: bool) -> (String, bool) {
    let lower = word.to_ascii_lowercase();
    // An auth scheme stays; the credential after it goes.
    if lower == "bearer" || lower == "basic" {
        return (word.to_owned(), true);
    }
    if secret && !word.is_empty() {
        return (redacted(trim_quotes(word)), false);
    }
    // `key=value`, `key:value`, `"key":"value"`: the value goes.
    if let Some(at) = word.find(['=', ':']) {
        let (key, rest) = word.split_at(at);
        let value = &rest[1..];
        if looks_secret(key) {
            if value.is_empty() {
                // `key: value` or `key=` then the value as the next word.
                return (word.to_owned(), true);
            }
            return (
                format!("{key}{}{}", &rest[..1], redacted(trim_quotes(value))),
                false,
            );
        }
    }
    if longest_hex_run(word) >= 32 {
        return (redacted(trim_quotes(word)), false);
    }
    (
        word.to_owned(),
        looks_secret(&lower) && lower.ends_with(':'),
    )
}

fn trim_quotes(word: &str) -> &str {
    word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | '}' | '{'))
}

fn looks_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| key.contains(word))
}

fn longest_hex_run(word: &str) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for byte in word.bytes() {
        run = if byte.is_ascii_hexdigit() { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn secrets_are_redacted_and_the_rest_kept() {
        let text = format!(
            "I1202 00:00:00.000000 7 main.py:80] Starting AGY ACP Server...\n\
             W1202 00:00:00.000001 7 mcp.py:3] header Authorization: Bearer {TOKEN}\n\
             E1202 00:00:00.000002 7 auth.py:9] refresh failed token=planted-secret api_key: also-planted\n\
             I1202 00:00:00.000003 7 x.py:1] bare {TOKEN} here\n"
        );
        let shown = redact_stderr(&text);
        for secret in [TOKEN, "planted-secret", "also-planted"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("Starting AGY ACP Server...\n"), "{shown}");
        assert!(shown.contains("Bearer <redacted len=64 hex fp="), "{shown}");
        assert!(shown.contains("token=<redacted len=14 text fp="), "{shown}");
        assert!(shown.contains("bare <redacted len=64 hex"), "{shown}");
        assert_eq!(shown.lines().count(), 4);
    }
}
