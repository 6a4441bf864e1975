//! A part of a report beyond the job's own table — a BuildKit build's
//! summary, its critical path, its per-platform totals — built once as
//! lines and tables of text and drawn by the Markdown and the HTML view
//! alike, so that the two cannot disagree.

use std::fmt::Write as _;

use crate::escape::{markdown_inline as md, markdown_line as md_line, xml};

/// A table of a [`Section`]: its head, which columns are numbers
/// (right-aligned), its rows of text (unescaped).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// The HTML class of the `<table>` (`build-critical-path`).
    pub class: &'static str,
    /// What the table shows, one line.
    pub caption: String,
    /// The column heads.
    pub header: Vec<&'static str>,
    /// Per column: a number (right-aligned) or words (left).
    pub numeric: Vec<bool>,
    /// The rows, a cell per column.
    pub rows: Vec<Vec<String>>,
}

/// A titled part: lines (a list), then tables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Section {
    /// The HTML class of the `<section>` (`build`).
    pub class: &'static str,
    /// Its heading.
    pub title: String,
    /// Its lines, shown as a list.
    pub lines: Vec<String>,
    /// Its tables, under the lines.
    pub tables: Vec<Table>,
}

/// `sections` as Markdown: `### title`, the lines as a list, each table
/// under its caption in bold (GitHub's tables have no caption).
pub(crate) fn markdown(out: &mut String, sections: &[Section]) {
    for s in sections {
        let _ = writeln!(out, "### {}\n", md_line(&s.title));
        for line in &s.lines {
            let _ = writeln!(out, "- {}", md_line(line));
        }
        if !s.lines.is_empty() {
            out.push('\n');
        }
        for t in &s.tables {
            let _ = writeln!(out, "**{}**\n", md_line(&t.caption));
            let _ = writeln!(out, "| {} |", t.header.iter().map(|h| md(h)).collect::<Vec<_>>().join(" | "));
            let align: Vec<&str> = t.numeric.iter().map(|n| if *n { "--:" } else { ":--" }).collect();
            let _ = writeln!(out, "|{}|", align.join("|"));
            for row in &t.rows {
                let _ = writeln!(out, "| {} |", row.iter().map(|c| md(c)).collect::<Vec<_>>().join(" | "));
            }
            out.push('\n');
        }
    }
}

/// `sections` as HTML: `section.summary.<class>` with an `h2`, `ul > li` for the
/// lines, then `table.<class>` with a caption, `thead` and `tbody`
/// (`td.text` for the word columns).
pub(crate) fn html(out: &mut String, sections: &[Section]) {
    for s in sections {
        let _ = writeln!(out, "<section class=\"summary {}\">\n<h2>{}</h2>", s.class, xml(&s.title));
        if !s.lines.is_empty() {
            out.push_str("<ul>\n");
            for line in &s.lines {
                let _ = writeln!(out, "<li>{}</li>", xml(line));
            }
            out.push_str("</ul>\n");
        }
        for t in &s.tables {
            let _ = write!(out, "<table class=\"{}\">\n<caption>{}</caption>\n<thead><tr>", t.class, xml(&t.caption));
            for h in &t.header {
                let _ = write!(out, "<th scope=\"col\">{}</th>", xml(h));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            for row in &t.rows {
                out.push_str("<tr>");
                for (c, cell) in row.iter().enumerate() {
                    let class = if t.numeric.get(c).copied().unwrap_or(false) { "" } else { " class=\"text\"" };
                    let _ = write!(out, "<td{class}>{}</td>", xml(cell));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody>\n</table>\n");
        }
        out.push_str("</section>\n");
    }
}

/// The stylesheet of the sections' tables (the job table's look).
pub(crate) const STYLE: &str = "\
section.summary table { border-collapse: collapse; margin: .5em 0 1em; font-size: .9em; }
section.summary caption { text-align: left; font-weight: bold; }
section.summary th, section.summary td { padding: .2em .5em; border-bottom: 1px solid var(--line); text-align: right; }
section.summary td.text { text-align: left; }
";
