//! The Markdown harness: what a CommonMark reader with GitHub's table
//! extension (pulldown-cmark) sees in a document.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// What a CommonMark + GFM-tables reader sees in a Markdown document.
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub(crate) headings: Vec<String>,
    /// Table rows (the header row first), each a list of cell texts.
    pub(crate) rows: Vec<Vec<String>>,
    /// The same rows, table by table.
    pub(crate) tables: Vec<Vec<Vec<String>>>,
    pub(crate) items: Vec<String>,
    pub(crate) code: Vec<(String, String)>,
    /// Raw HTML the reader found (must stay empty: escaping failed otherwise).
    pub(crate) html: Vec<String>,
}

pub(crate) fn read_markdown(text: &str) -> Read {
    let mut read = Read::default();
    let mut buffer = String::new();
    let mut row: Vec<String> = Vec::new();
    let mut code_lang = String::new();
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. } | Tag::TableCell | Tag::Item | Tag::CodeBlock(_)) => {
                if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) = &event {
                    code_lang = lang.to_string();
                }
                buffer.clear();
            }
            Event::Text(t) | Event::Code(t) => buffer.push_str(&t),
            Event::SoftBreak | Event::HardBreak => buffer.push(' '),
            Event::Html(h) | Event::InlineHtml(h) => read.html.push(h.to_string()),
            Event::End(TagEnd::Heading(_)) => read.headings.push(std::mem::take(&mut buffer)),
            Event::End(TagEnd::TableCell) => row.push(std::mem::take(&mut buffer)),
            Event::Start(Tag::Table(_)) => read.tables.push(Vec::new()),
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => {
                if let Some(table) = read.tables.last_mut() {
                    table.push(row.clone());
                }
                read.rows.push(std::mem::take(&mut row));
            }
            Event::End(TagEnd::Item) => read.items.push(std::mem::take(&mut buffer)),
            Event::End(TagEnd::CodeBlock) => {
                read.code.push((std::mem::take(&mut code_lang), std::mem::take(&mut buffer)))
            }
            _ => {}
        }
    }
    read
}
