//! Text for XML/HTML and Markdown: whatever a step is called (a command
//! line, a BuildKit `RUN` with `<`, `&`, quotes, `|` or line breaks) must
//! come out as the same text, never as markup.

/// `text` as XML 1.0 / HTML character data or attribute value (quoted with
/// `"` or `'`): the five special characters become references, and
/// characters XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF —
/// <https://www.w3.org/TR/xml/#charsets>) become U+FFFD; line breaks and tabs
/// become spaces so that a name stays on one line.
pub(crate) fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// ASCII punctuation with no meaning inside a line of CommonMark/GFM inline
/// text (except at its start, see [`markdown`]); left as is so that the raw
/// Markdown stays readable (`6.66 s (48 periods)`, not `6\.66 s \(48 periods\)`).
const PLAIN_PUNCTUATION: &str = ".,;:%/'\"()=?@$^{}-+";

/// `text` as inline Markdown that is safe in a GFM table cell, a heading or a
/// list item: every ASCII punctuation character that can mean something
/// inline is backslash-escaped (CommonMark allows that for any of them —
/// <https://spec.commonmark.org/0.31.2/#backslash-escapes>), so `<script>`
/// stays text, `|` does not end a cell (GFM tables), `*`, `_`, `` ` ``, `[`,
/// `!`, `&`, `~` start no emphasis, code, link, image, entity or
/// strikethrough, and a `#` cannot close a heading. At the start of the text
/// every punctuation character is escaped, and so is the `.` or `)` after
/// leading digits, so that text never starts a list, quote or heading inside
/// a list item. Line breaks and other control characters become spaces so
/// the text stays on its line.
///
/// Not handled: GitHub's `:emoji:` shortcodes and bare URLs stay as GitHub
/// renders them (the text reads the same).
pub(crate) fn markdown(text: &str) -> String {
    // Leading blanks (and breaks, which would become blanks) are invisible in
    // Markdown anyway, and would move a `-` away from "the start".
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c.is_control());
    let mut out = String::with_capacity(text.len());
    let leading_digits = text.chars().take_while(char::is_ascii_digit).count();
    for (i, c) in text.chars().enumerate() {
        let list_marker = i == leading_digits && leading_digits > 0 && (c == '.' || c == ')');
        if c.is_ascii_punctuation() && (i == 0 || list_marker || !PLAIN_PUNCTUATION.contains(c)) {
            out.push('\\');
            out.push(c);
        } else if c.is_control() {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_forbidden_characters() {
        assert_eq!(xml(r#"a<b & "c" 'd'>"#), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
        assert_eq!(xml("line\nbreak\ttab"), "line break tab");
        assert_eq!(xml("bell\u{7}"), "bell\u{FFFD}");
        assert_eq!(xml("ünïcode ✓"), "ünïcode ✓");
    }

    #[test]
    fn markdown_escapes_punctuation_and_breaks() {
        assert_eq!(markdown("a|b"), "a\\|b");
        assert_eq!(markdown("<script>"), "\\<script\\>");
        assert_eq!(markdown("x\ny"), "x y");
        assert_eq!(markdown("\n- x"), "\\- x");
        assert_eq!(markdown("make -j8 (x.y)"), "make -j8 (x.y)");
        assert_eq!(markdown("-rf"), "\\-rf");
        assert_eq!(markdown("12. x"), "12\\. x");
        assert_eq!(
            markdown("a #b *c* `d` [e](f) &amp; ~g~ !h _i_"),
            "a \\#b \\*c\\* \\`d\\` \\[e\\](f) \\&amp; \\~g\\~ \\!h \\_i\\_"
        );
    }
}
