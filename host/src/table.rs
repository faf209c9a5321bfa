//! Aligned tables of list commands (`host.md` §2.3.3): an upper-case header row, columns
//! separated by two spaces and padded to their widest cell by display width, so wide and
//! combining characters line up; the last column is not padded.

use unicode_width::UnicodeWidthStr;

/// The rows (the header first) as lines of text, each ending with a newline.
pub fn render(rows: &[Vec<String>]) -> String {
    // Each cell's width once: listings can have ten thousand rows (`get threads`).
    let cell_widths: Vec<Vec<usize>> = rows
        .iter()
        .map(|r| r.iter().map(|cell| width(cell)).collect())
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            cell_widths
                .iter()
                .map(|r| r.get(c).copied().unwrap_or(0))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::with_capacity(
        rows.len() * (widths.iter().sum::<usize>() + 2 * columns.saturating_sub(1) + 1),
    );
    for (row, cell_widths) in rows.iter().zip(&cell_widths) {
        let start = out.len();
        for (c, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if c + 1 < row.len() {
                let pad = widths[c] - cell_widths[c] + 2;
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        // The line without trailing blanks (an empty last cell, the padding before it).
        let kept = out[start..].trim_end().len();
        out.truncate(start + kept);
        out.push('\n');
    }
    out
}

/// The display width of a cell: its length when it is printable ASCII, as most cells are.
fn width(cell: &str) -> usize {
    if cell.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        cell.len()
    } else {
        cell.width()
    }
}

/// A cell's text on one line, through the one sanitiser of `host.md` §2.4: escape sequences and
/// control characters removed, line breaks and tabs as spaces.
pub fn one_line(text: &str) -> String {
    // Text without any control character is what the sanitiser would give back.
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
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
    fn lines_end_without_blanks_when_the_last_cells_are_empty() {
        let rows = vec![
            row(&["ID", "TURNS", "STATE"]),
            row(&["a", "2", ""]),
            row(&["", "", ""]),
            row(&["b", "10", "interrupted"]),
        ];
        assert_eq!(
            render(&rows),
            "ID  TURNS  STATE\na   2\n\nb   10     interrupted\n"
        );
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
