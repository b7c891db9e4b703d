//! A page as a list of blocks, written out twice from the same blocks: as Markdown (to read in any
//! editor, or to paste into a learning platform) and as one HTML page (to open from disk: no script,
//! no request to anywhere). Every text is escaped for the format it goes into.

use std::fmt::Write as _;

/// One block of a page.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(u8, String),
    Paragraph(String),
    /// A list of items, each text or a link.
    List(Vec<Cell>),
    Table {
        header: Vec<String>,
        rows: Vec<Vec<Cell>>,
    },
    /// Text as it was printed (compiler messages, a kernel's output), in a fixed-width block.
    Code(String),
    /// A picture already in SVG (an inline plot), shown in HTML and named in Markdown.
    Svg {
        svg: String,
        says: String,
    },
    /// Two sources side by side (HTML) or one after the other (Markdown), the lines of each that
    /// match the other marked.
    SideBySide([Source; 2]),
}

/// A source shown in a [`Block::SideBySide`]: its title, its text, and its marked lines (from 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub title: String,
    pub text: String,
    pub marked: std::collections::BTreeSet<usize>,
}

/// A list item or a table cell: text, a link, or a bar of `percent` with a text beside it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Link { text: String, href: String },
    Bar { percent: f64, text: String },
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::Text(text.to_string())
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::Text(text)
    }
}

/// The blocks as Markdown.
pub fn markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Block::Heading(level, text) => writeln!(out, "{} {}\n", "#".repeat(*level as usize), md_text(text)),
            Block::Paragraph(text) => writeln!(out, "{}\n", md_text(text)),
            Block::List(items) => writeln!(
                out,
                "{}\n",
                items
                    .iter()
                    .map(|item| format!("- {}", md_cell(item)))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            Block::Table { header, rows } => {
                let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
                let mut table = vec![
                    line(header.iter().map(|h| md_cell_text(h)).collect()),
                    line(header.iter().map(|_| "---".to_string()).collect()),
                ];
                table.extend(rows.iter().map(|row| line(row.iter().map(md_cell).collect())));
                writeln!(out, "{}\n", table.join("\n"))
            }
            // Indented, not fenced: no line of a kernel's output can close an indented block.
            Block::Code(text) => writeln!(
                out,
                "{}\n",
                text.trim_end()
                    .lines()
                    .map(|line| format!("    {line}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            Block::Svg { says, .. } => writeln!(out, "*{}*\n", md_text(says)),
            Block::SideBySide(sources) => writeln!(
                out,
                "{}",
                sources
                    .iter()
                    .map(|source| {
                        let lines: Vec<String> = numbered(source)
                            .map(|(number, line, marked)| {
                                format!("    {} {number:4}  {line}", if marked { '>' } else { ' ' })
                            })
                            .collect();
                        format!(
                            "{} (matching lines marked >):\n\n{}\n",
                            md_text(&source.title),
                            lines.join("\n")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        }
        .expect("writing to a String cannot fail");
    }
    out
}

/// The blocks as one HTML page titled `title`, styled inline (the page stands alone).
pub fn html(title: &str, blocks: &[Block]) -> String {
    let mut out = format!("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n", escape(title));
    for block in blocks {
        match block {
            Block::Heading(level, text) => writeln!(out, "<h{level}>{}</h{level}>", escape(text)),
            Block::Paragraph(text) => writeln!(out, "<p>{}</p>", escape(text)),
            Block::List(items) => writeln!(
                out,
                "<ul>\n{}\n</ul>",
                items
                    .iter()
                    .map(|item| format!("<li>{}</li>", html_cell(item)))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
            Block::Table { header, rows } => {
                let head: String = header.iter().map(|h| format!("<th>{}</th>", escape(h))).collect();
                let body: Vec<String> = rows
                    .iter()
                    .map(|row| {
                        format!(
                            "<tr>{}</tr>",
                            row.iter()
                                .map(|cell| format!("<td>{}</td>", html_cell(cell)))
                                .collect::<String>()
                        )
                    })
                    .collect();
                writeln!(
                    out,
                    "<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{}\n</tbody>\n</table>",
                    body.join("\n")
                )
            }
            Block::Code(text) => writeln!(out, "<pre>{}</pre>", escape(text.trim_end())),
            Block::Svg { svg, says } => {
                writeln!(out, "<figure>{svg}<figcaption>{}</figcaption></figure>", escape(says))
            }
            Block::SideBySide(sources) => {
                let cells: Vec<(String, String)> = sources
                    .iter()
                    .map(|source| {
                        let lines: String = numbered(source)
                            .map(|(number, line, marked)| {
                                let line = format!("{number:4}  {}", escape(line));
                                if marked {
                                    format!("<mark>{line}</mark>\n")
                                } else {
                                    format!("{line}\n")
                                }
                            })
                            .collect();
                        (escape(&source.title), lines)
                    })
                    .collect();
                writeln!(
                    out,
                    "<table class=\"side\">\n<thead><tr><th>{}</th><th>{}</th></tr></thead>\n<tbody><tr><td><pre>{}</pre></td><td><pre>{}</pre></td></tr></tbody>\n</table>",
                    cells[0].0, cells[1].0, cells[0].1, cells[1].1
                )
            }
        }
        .expect("writing to a String cannot fail");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The page's look: readable tables, bars drawn with CSS (no script, no image files).
const STYLE: &str = "body{font-family:sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem;color:#222}\
table{border-collapse:collapse;margin:0.5rem 0}th,td{border:1px solid #bbb;padding:0.2rem 0.4rem;text-align:left;vertical-align:top}\
th{background:#eee}pre{background:#f6f6f6;padding:0.5rem;overflow-x:auto;white-space:pre-wrap}\
.bar{display:inline-block;height:0.8rem;background:#4a7;margin-right:0.4rem;vertical-align:middle}td:has(.bar){white-space:nowrap}\
.PASS{color:#185}.FAIL,.FAULT{color:#b22;font-weight:bold}.MACHINE{color:#a60}\
table.side{table-layout:fixed;width:100%}table.side pre{font-size:0.8rem}mark{background:#fd8}";

/// A source's lines with their numbers (from 1) and whether each is marked.
fn numbered(source: &Source) -> impl Iterator<Item = (usize, &str, bool)> {
    source
        .text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line, source.marked.contains(&(index + 1))))
}

fn html_cell(cell: &Cell) -> String {
    match cell {
        Cell::Text(text) if ["PASS", "FAIL", "FAULT", "MACHINE"].contains(&text.as_str()) => {
            format!("<span class=\"{text}\">{text}</span>")
        }
        Cell::Text(text) => escape(text),
        Cell::Link { text, href } => format!("<a href=\"{}\">{}</a>", escape(href), escape(text)),
        Cell::Bar { percent, text } => format!(
            "<span class=\"bar\" style=\"width:{:.1}px\"></span>{}",
            2.0 * percent.clamp(0.0, 100.0),
            escape(text)
        ),
    }
}

fn md_cell(cell: &Cell) -> String {
    match cell {
        Cell::Text(text) => md_cell_text(text),
        Cell::Link { text, href } => format!("[{}](<{}>)", md_cell_text(text), href.replace(['<', '>'], "")),
        Cell::Bar { text, .. } => md_cell_text(text),
    }
}

/// Text inside a table cell: a line break would end the cell (a `|` is escaped as all punctuation is).
fn md_cell_text(text: &str) -> String {
    escaped_from(&text.replace('\n', " "), false)
}

/// Text Markdown would read as markup (a `*` in `a*b`, `<` starting a tag, `_` in a name, `![`, a
/// line that starts a list), escaped with backslashes, which CommonMark allows before any ASCII
/// punctuation; the common `.`, `,`, `:`, `;`, `/`, `'`, `"`, `%`, `=`, `?`, `-` are left as they
/// are, except a `-` that starts a line and a `.` after digits that start one (lists).
fn md_text(text: &str) -> String {
    escaped_from(text, true)
}

/// [`md_text`] for text that does not begin a line (a table cell), whose first character is text.
fn escaped_from(text: &str, mut line_start: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut leading_digits = false;
    for c in text.chars() {
        let harmless = ".,:;/'\"%=?- ".contains(c) && !(leading_digits && ".)".contains(c));
        if c.is_ascii_punctuation() && (!harmless || (line_start && "-+".contains(c))) {
            out.push('\\');
        }
        out.push(c);
        leading_digits = (line_start || leading_digits) && c.is_ascii_digit();
        line_start = c == '\n' || (line_start && c == ' ');
    }
    out
}

/// Text for HTML, in an element or an attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_students_text_is_never_markup() {
        let blocks = vec![
            Block::Heading(1, "Feedback: <script>alert(1)</script>".into()),
            Block::Table {
                header: vec!["case".into(), "verdict".into()],
                rows: vec![vec!["a | b\nc".into(), "FAIL".into()]],
            },
            Block::List(vec![Cell::Link {
                text: "x_y".into(),
                href: "001-x_y.html\"onclick=\"".into(),
            }]),
            Block::Code("nvcc: error ``` <b>\n".into()),
        ];
        let html = html("t<", &blocks);
        assert!(!html.contains("<script>") && html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("href=\"001-x_y.html&quot;onclick=&quot;\""), "{html}");
        assert!(html.contains("<span class=\"FAIL\">FAIL</span>"));
        let md = markdown(&blocks);
        assert!(md.contains("| a \\| b c | FAIL |"), "{md}");
        assert!(md.contains("\n    nvcc: error ``` <b>\n"), "{md}");
        // A kernel's output cannot leave its block, and text cannot become a list, a link or a picture.
        let escaping = markdown(&[
            Block::Code("```\n~~~~\n# Score: 100".into()),
            Block::Paragraph("1. ![x](javascript:1) - a & b".into()),
        ]);
        assert!(escaping.contains("    ```\n    ~~~~\n    # Score: 100\n"), "{escaping}");
        assert!(
            escaping.contains("1\\. \\!\\[x\\]\\(javascript:1\\) - a \\& b"),
            "{escaping}"
        );
        assert!(md.contains("\\<script\\>"), "{md}");
    }
}
