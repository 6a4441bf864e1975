//! Text for XML/HTML and Markdown: whatever a step is called (a command
//! line, a BuildKit `RUN` with `<`, `&`, quotes, `|` or line breaks) must
//! come out as the same text, never as markup.

/// `text` as XML 1.0 / HTML character data or attribute value (quoted with
/// `"` or `'`): the five special characters become references, and
/// characters XML 1.0 forbids (most C0 controls, U+FFFE, U+FFFF —
/// <https://www.w3.org/TR/xml/#charsets>) become U+FFFD; line breaks and tabs
/// become spaces so that a name stays on one line.
pub fn xml(text: &str) -> String {
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
/// text (except at the start of a paragraph line or list item, see
/// [`markdown_line`]); left as is so that the raw Markdown stays readable in
/// terminals, PR comments and logs (`6.66 s (48 periods)`, not
/// `6\.66 s \(48 periods\)`).
const PLAIN_PUNCTUATION: &str = ".,;:%/'\"()=?@$^{}-+";

/// `text` as inline Markdown that is safe in a GFM table cell or a heading,
/// where no block (list, quote, heading) can start: every ASCII punctuation
/// character that can mean something inline is backslash-escaped
/// (CommonMark allows that for any of them —
/// <https://spec.commonmark.org/0.31.2/#backslash-escapes>), so `<script>`
/// stays text, `|` does not end a cell (GFM tables), `*`, `_`, `` ` ``, `[`,
/// `!`, `&`, `~` start no emphasis, code, link, image, entity or
/// strikethrough, and a `#` cannot close a heading; the punctuation of `PLAIN_PUNCTUATION`
/// stays as is (`3.80 s`). Line breaks and other control characters become
/// spaces so the text stays on its line.
///
/// Not handled: GitHub's `:emoji:` shortcodes and bare URLs stay as GitHub
/// renders them (the text reads the same).
pub fn markdown_inline(text: &str) -> String {
    escape(text, false)
}

/// [`markdown_inline`] for text that starts a paragraph line or a list item
/// (after `- `), where a line can also start a block: its first character is
/// escaped when it is punctuation (`-`, `+`, `>`, `#`, … start no list, quote
/// or heading), and so is the `.` or `)` after leading digits when a blank
/// or the end follows (`12. x` would start an ordered list,
/// <https://spec.commonmark.org/0.31.2/#ordered-list-marker>; `3.80 s` would
/// not, and stays as is).
pub fn markdown_line(text: &str) -> String {
    escape(text, true)
}

fn escape(text: &str, line_start: bool) -> String {
    // Leading blanks (and breaks, which would become blanks) are invisible in
    // Markdown anyway, and would move a `-` away from "the start".
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c.is_control());
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let leading_digits = chars.iter().take_while(|c| c.is_ascii_digit()).count();
    let list_marker = line_start
        && leading_digits > 0
        && chars.get(leading_digits).is_some_and(|c| *c == '.' || *c == ')')
        && chars.get(leading_digits + 1).is_none_or(|c| c.is_whitespace() || c.is_control());
    for (i, &c) in chars.iter().enumerate() {
        let at_start = line_start && i == 0;
        let marker = list_marker && i == leading_digits;
        if c.is_ascii_punctuation() && (at_start || marker || !PLAIN_PUNCTUATION.contains(c)) {
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
        for escape in [markdown_inline, markdown_line] {
            assert_eq!(escape("a|b"), "a\\|b");
            assert_eq!(escape("<script>"), "\\<script\\>");
            assert_eq!(escape("x\ny"), "x y");
            assert_eq!(escape("make -j8 (x.y)"), "make -j8 (x.y)");
            assert_eq!(
                escape("a #b *c* `d` [e](f) &amp; ~g~ !h _i_"),
                "a \\#b \\*c\\* \\`d\\` \\[e\\](f) \\&amp; \\~g\\~ \\!h \\_i\\_"
            );
        }
        // Only where a block could start.
        assert_eq!(markdown_line("\n- x"), "\\- x");
        assert_eq!(markdown_inline("\n- x"), "- x");
        assert_eq!(markdown_line("-rf"), "\\-rf");
        assert_eq!(markdown_inline("-rf"), "-rf");
        assert_eq!(markdown_line("12. x"), "12\\. x");
        assert_eq!(markdown_line("12)"), "12\\)");
        assert_eq!(markdown_inline("12. x"), "12. x");
    }

    #[test]
    fn numbers_read_raw_in_cells_and_sentences() {
        assert_eq!(markdown_inline("3.80 s"), "3.80 s");
        assert_eq!(markdown_inline("3.13 s (48 periods)"), "3.13 s (48 periods)");
        assert_eq!(markdown_line("3.80 s of CPU"), "3.80 s of CPU");
        assert_eq!(markdown_line("waited 3.80 s. Then 2. stop"), "waited 3.80 s. Then 2. stop");
    }

    /// What pulldown-cmark (CommonMark + GFM tables and strikethrough) reads
    /// in `document`: the text of each block, by kind (`cell`, `item`,
    /// `paragraph`, ...), and whether it found any HTML.
    fn read(document: &str) -> (Vec<(String, String)>, bool) {
        use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
        let mut blocks = Vec::new();
        let mut text = String::new();
        let mut html = false;
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for event in Parser::new_ext(document, options) {
            match event {
                Event::Start(Tag::Paragraph | Tag::TableCell | Tag::Item | Tag::Heading { .. }) => text.clear(),
                // The table's and the list's own structure.
                Event::Start(Tag::Table(_) | Tag::TableHead | Tag::TableRow | Tag::List(_))
                | Event::End(TagEnd::Table | TagEnd::TableHead | TagEnd::TableRow | TagEnd::List(_)) => {}
                Event::Text(t) => text.push_str(&t),
                Event::Html(_) | Event::InlineHtml(_) => html = true,
                Event::End(end) => {
                    let kind = match end {
                        TagEnd::Paragraph => "paragraph",
                        TagEnd::TableCell => "cell",
                        TagEnd::Item => "item",
                        TagEnd::Heading(_) => "heading",
                        _ => continue,
                    };
                    blocks.push((kind.to_owned(), std::mem::take(&mut text)));
                }
                // Emphasis, code, links, breaks, lists, quotes: escaping failed.
                other => blocks.push(("other".to_owned(), format!("{other:?}"))),
            }
        }
        (blocks, html)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// Any text of ASCII punctuation, digits, letters, blanks and breaks
        /// reads back as itself (breaks as spaces, trimmed) in a table cell,
        /// a heading, a paragraph and a list item, with no markup.
        #[test]
        fn hostile_text_reads_back_as_text(text in "[ -~\t\n]{0,24}") {
            let expected: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
            let expected = expected.trim();
            let inline = markdown_inline(&text);
            let line = markdown_line(&text);
            let cases = [
                (format!("| h | x |\n|---|---|\n| {inline} | x |\n"), vec!["cell", "cell", "cell", "cell"], 2),
                (format!("## {inline}\n"), vec!["heading"], 0),
                (format!("{line}\n"), vec!["paragraph"], 0),
                (format!("- {line}\n"), vec!["item"], 0),
            ];
            for (document, kinds, at) in cases {
                let (blocks, html) = read(&document);
                proptest::prop_assert!(!html, "{document:?}: {blocks:?}");
                let found: Vec<&str> = blocks.iter().map(|(k, _)| k.as_str()).collect();
                // An empty paragraph is no block at all.
                if expected.is_empty() && kinds == ["paragraph"] {
                    proptest::prop_assert!(found.is_empty(), "{document:?}: {blocks:?}");
                    continue;
                }
                proptest::prop_assert_eq!(&found, &kinds, "{:?}: {:?}", document, blocks);
                proptest::prop_assert_eq!(blocks[at].1.trim(), expected, "{:?}", document);
            }
        }
    }
}
