//! Review and verdict files rendered as Markdown. Raw HTML in them is shown as text:
//! an agent wrote these files, and nothing it wrote may run in the browser.

use pulldown_cmark::{Event, Options, Parser, html};

/// `text` as HTML, with any raw HTML escaped.
pub fn render(text: &str) -> String {
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(
        |event| match event {
            Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
            other => other,
        },
    );
    let mut out = String::new();
    html::push_html(&mut out, parser);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_markdown_and_escapes_html() {
        let html = render("## Verdict\nPROCEED\n\n<script>alert(1)</script>\n\n- a <b>b</b>\n");
        assert!(html.contains("<h2>Verdict</h2>"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
    }
}
