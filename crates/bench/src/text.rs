//! Text helpers shared by the report and the ECS section: how a time is
//! printed, how text is made safe for HTML, and the Markdown comparison
//! tables.

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
pub(crate) fn markdown_table(
    out: &mut String,
    names: &[&str],
    last: &str,
    rows: &[(String, Vec<String>, String)],
) {
    let header: String = names.iter().map(|name| format!(" {name} |")).collect();
    out.push_str(&format!("| |{header} {last} |\n"));
    out.push_str(&format!("|{}\n", " --- |".repeat(names.len() + 2)));
    for (label, cells, ratio) in rows {
        out.push_str(&format!("| {label} | {} | {ratio} |\n", cells.join(" | ")));
    }
}
