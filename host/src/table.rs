//! Aligned tables of list commands (`host.md` §2.3.3): an upper-case header row, columns
//! separated by two spaces and padded to their widest cell by display width, so wide and
//! combining characters line up; the last column is not padded.

use unicode_width::UnicodeWidthStr;

/// The rows (the header first) as lines of text, each ending with a newline.
pub fn render(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.width()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < row.len() {
                line.push_str(&" ".repeat(widths[c] - cell.width() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A cell's text on one line, through the one sanitiser of `host.md` §2.4: escape sequences and
/// control characters removed, line breaks and tabs as spaces.
pub fn one_line(text: &str) -> String {
    katari_runtime::mcp::text::sanitize_line(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn columns_are_separated_by_two_spaces_and_the_last_is_not_padded() {
        let rows = vec![row(&["NAME", "TYPE", "TARGET"]), row(&["a", "stdio", "x"])];
        assert_eq!(render(&rows), "NAME  TYPE   TARGET\na     stdio  x\n");
    }

    #[test]
    fn widths_are_display_widths() {
        let rows = vec![row(&["NAME", "LLM"]), row(&["日本", "x"]), row(&["é", "y"])];
        assert_eq!(render(&rows), "NAME  LLM\n日本  x\né     y\n");
    }

    #[test]
    fn one_line_sanitises_and_keeps_one_line() {
        use katari_runtime::mcp::text::{HOSTILE, HOSTILE_SHOWN};
        assert_eq!(one_line("a\nb\tc\u{1b}"), "a b c");
        assert_eq!(one_line(HOSTILE), HOSTILE_SHOWN);
    }
}
