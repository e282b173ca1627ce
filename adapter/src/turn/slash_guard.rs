//! No prompt runs a server slash command. Google's server intercepts `/logout`, `/plan`
//! and the like in a prompt's text (`/logout` signs the user out and clears the stored
//! credentials); DSH's history is text to the model, never commands to the server. So a
//! `/` that begins a line (after any white space, zero-width characters or a byte-order
//! mark, and after any of the line breaks Python's `str.splitlines` knows) is written
//! `\/`, and the prompt's instructions say what that means.

/// Line breaks as Python's `str.splitlines` counts them (the server is Python).
fn breaks_line(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{0b}'
            | '\u{0c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// What may stand before a command and still leave it one: white space, zero-width
/// characters, the byte-order mark.
fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}'
        )
}

/// The instruction that explains the escape to the model.
pub(super) const ESCAPE_NOTE: &str = "- In the conversation below, a line written as `\\/...` \
     begins with `/` in DSH's history: it is text, never a command.\n";

/// `text` with every `/` that begins a line written `\/`.
pub(super) fn escape_slash_commands(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut line_start = true;
    for c in text.chars() {
        if breaks_line(c) {
            line_start = true;
        } else if line_start && c == '/' {
            out.push('\\');
            line_start = false;
        } else if !is_blank(c) {
            line_start = false;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_that_begins_any_line_is_escaped() {
        for (text, expected) in [
            ("/logout", "\\/logout"),
            ("hi\n/logout", "hi\n\\/logout"),
            ("hi\r\n  /logout now", "hi\r\n  \\/logout now"),
            ("a\u{2028}/plan", "a\u{2028}\\/plan"),
            ("a\u{0c}\u{200b}/logout", "a\u{0c}\u{200b}\\/logout"),
            ("\u{feff}/logout", "\u{feff}\\/logout"),
            ("a\u{85}\t/x", "a\u{85}\t\\/x"),
        ] {
            assert_eq!(escape_slash_commands(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_slash_inside_a_line_is_left() {
        for text in ["a /logout", "path a/b\nx/y", "http://x", "\\/already"] {
            assert_eq!(escape_slash_commands(text), text);
        }
    }
}
