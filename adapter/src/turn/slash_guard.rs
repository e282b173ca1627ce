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

/// What may stand before a command and still leave it one: white space as Rust or
/// Python's `str.isspace` knows it (Python's adds U+001C–U+001F), zero-width characters,
/// the byte-order mark.
fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{1c}'..='\u{1f}' | '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}'
        )
}

/// The instruction that explains the escape to the model.
pub(super) const ESCAPE_NOTE: &str = "- In the conversation below, a line written as `\\/...` \
     begins with `/` in DSH's history: it is text, never a command.\n";

/// `text` with every `/` that begins a line written `\/`. Only the `/`s are looked at
/// (found as bytes), each by reading back over the blanks before it, so a long history
/// costs one pass; a text with nothing to escape is returned as it is, uncopied.
pub(super) fn escape_slash_commands(text: String) -> String {
    let mut escaped: Option<String> = None;
    let mut copied = 0;
    for (at, _) in text.match_indices('/') {
        if begins_line(text.get(..at).unwrap_or_default()) {
            let out = escaped.get_or_insert_with(|| String::with_capacity(text.len() + 16));
            out.push_str(text.get(copied..at).unwrap_or_default());
            out.push('\\');
            copied = at;
        }
    }
    match escaped {
        Some(mut out) => {
            out.push_str(text.get(copied..).unwrap_or_default());
            out
        }
        None => text,
    }
}

/// Whether what follows `before` begins a line: only blanks stand between it and the
/// last line break, or the start of the text.
fn begins_line(before: &str) -> bool {
    before
        .chars()
        .rev()
        .find(|&c| breaks_line(c) || !is_blank(c))
        .is_none_or(breaks_line)
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
            assert_eq!(escape_slash_commands(text.to_owned()), expected, "{text:?}");
        }
    }

    /// The line separators of Python's `str.splitlines` (its documentation's table),
    /// written out: the server is Python, and these are what it splits a prompt at.
    const SPLITLINES: [&str; 11] = [
        "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u{85}", "\u{2028}",
        "\u{2029}",
    ];

    /// Characters that are no line break to Python, some beside one in the code table.
    const NOT_BREAKS: [&str; 12] = [
        " ", "\t", "a", "\x0e", "\x1b", "\x1f", "\u{84}", "\u{86}", "\u{a0}", "\u{200b}",
        "\u{2027}", "\u{202a}",
    ];

    #[test]
    fn a_slash_after_each_of_pythons_line_breaks_is_escaped() {
        for sep in SPLITLINES {
            for blanks in ["", " \t", "\u{200b}\u{feff}"] {
                let text = format!("What does this do?{sep}{blanks}/logout");
                let expected = format!("What does this do?{sep}{blanks}\\/logout");
                assert_eq!(escape_slash_commands(text), expected, "{sep:?} {blanks:?}");
            }
        }
    }

    /// Python's `str.isspace` characters, written out (the real server is Python, so a
    /// line it strips before reading a command may start with any of them).
    const PYTHON_ISSPACE: [&str; 29] = [
        "\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", " ", "\u{85}", "\u{a0}",
        "\u{1680}", "\u{2000}", "\u{2001}", "\u{2002}", "\u{2003}", "\u{2004}", "\u{2005}",
        "\u{2006}", "\u{2007}", "\u{2008}", "\u{2009}", "\u{200a}", "\u{2028}", "\u{2029}",
        "\u{202f}", "\u{205f}", "\u{3000}",
    ];

    #[test]
    fn a_slash_after_any_of_pythons_white_space_at_a_line_start_is_escaped() {
        for blank in PYTHON_ISSPACE {
            let text = format!("What does this do?\n{blank}/logout");
            let expected = format!("What does this do?\n{blank}\\/logout");
            assert_eq!(escape_slash_commands(text), expected, "{blank:?}");
        }
    }

    #[test]
    fn a_slash_after_a_character_that_breaks_no_line_is_left() {
        for other in NOT_BREAKS {
            let text = format!("What does this do?{other}/logout");
            assert_eq!(escape_slash_commands(text.clone()), text, "{other:?}");
        }
    }

    #[test]
    fn a_slash_inside_a_line_is_left() {
        for text in ["a /logout", "path a/b\nx/y", "http://x", "\\/already"] {
            assert_eq!(escape_slash_commands(text.to_owned()), text);
        }
    }

    /// The escape as a walk over every character, the rule as the module states it, with
    /// the line breaks taken from [`SPLITLINES`], never from `breaks_line`.
    fn escaped_by_walking(text: &str) -> String {
        let mut out = String::new();
        let mut line_start = true;
        for c in text.chars() {
            if SPLITLINES.iter().any(|sep| sep.contains(c)) {
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

    #[test]
    fn the_escape_agrees_with_a_walk_over_every_character() {
        let pieces = [
            "/", "//", " ", "\t", "\n", "\r", "\r\n", "\u{b}", "\u{1c}", "\u{200b}", "\u{2029}",
            "a", "é", "\u{feff}",
        ];
        // Every sequence of up to four pieces.
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(longer);
            texts.sort();
            texts.dedup();
        }
        for text in &texts {
            assert_eq!(
                escape_slash_commands(text.clone()),
                escaped_by_walking(text),
                "{text:?}"
            );
        }
    }
}
