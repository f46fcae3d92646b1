//! Text helpers shared by the report and the ECS section: how a time is
//! printed, how text is made safe for HTML, and the comparison tables
//! (their cells, and the terminal and Markdown forms).

use std::fmt::Write as _;

use crate::Cell;

/// A row of a comparison table: its label, a cell per container, and the
/// ratio.
pub(crate) type Row = (String, Vec<String>, String);

/// Nanoseconds, with a precision that suits their size.
pub(crate) fn format_ns(ns: f64) -> String {
    if ns >= 100.0 {
        format!("{ns:.0}")
    } else if ns >= 10.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.2}")
    }
}

/// `text` with the characters HTML gives a meaning escaped.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The header and rows of a Markdown comparison table: a label column, a
/// column per name in `names`, and `last` (the ratio); each row is its
/// label, its cells and its ratio.
pub(crate) fn markdown_table(out: &mut String, names: &[&str], last: &str, rows: &[Row]) {
    let header: String = names.iter().map(|name| format!(" {name} |")).collect();
    out.push_str(&format!("| |{header} {last} |\n"));
    out.push_str(&format!("|{}\n", " --- |".repeat(names.len() + 2)));
    for (label, cells, ratio) in rows {
        out.push_str(&format!("| {label} | {} | {ratio} |\n", cells.join(" | ")));
    }
}

/// A comparison table for the terminal: a header line of `names`, each
/// right-aligned in a column at least 8 wide after a label column
/// `label_width` wide, then the ratio column's header; and the rows.
pub(crate) fn terminal_table(out: &mut String, label_width: usize, names: &[&str], rows: &[Row]) {
    let widths: Vec<usize> = names.iter().map(|name| name.len().max(8)).collect();
    let _ = write!(out, "{:<label_width$}", "");
    for (name, width) in names.iter().zip(&widths) {
        let _ = write!(out, " {name:>width$}");
    }
    let _ = writeln!(out, "  hk/best peer");
    for (label, cells, ratio) in rows {
        let _ = write!(out, "{label:<label_width$}");
        for (cell, width) in cells.iter().zip(&widths) {
            let _ = write!(out, " {cell:>width$}");
        }
        let _ = writeln!(out, "  {ratio}");
    }
}

/// A table cell: the median of `cell`, with a `*` when its container is
/// the row's `best`; `-` where there is no cell.
pub(crate) fn median_cell(cell: Option<&Cell>, best: Option<&str>) -> String {
    match cell {
        Some(cell) => {
            let mark = if Some(cell.container) == best {
                "*"
            } else {
                ""
            };
            format!("{}{mark}", format_ns(cell.median_ns))
        }
        None => "-".into(),
    }
}

/// The ratio column: our median ÷ the peer's, and the peer; `-` without
/// both.
pub(crate) fn ratio_cell(ours: Option<&Cell>, peer: Option<&Cell>) -> String {
    match (ours, peer) {
        (Some(ours), Some(peer)) => format!(
            "{:.2}× ({})",
            ours.median_ns / peer.median_ns,
            peer.container
        ),
        _ => "-".into(),
    }
}
