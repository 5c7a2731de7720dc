//! The page shell every view shares, and HTML escaping.

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A whole page: `title`, breadcrumbs (`(label, href)`, the last one current) and body.
pub fn page(title: &str, crumbs: &[(&str, &str)], body: &str) -> String {
    let mut nav = String::from("<a href=\"/\">projects</a> · <a href=\"/insights\">insights</a>");
    for (label, href) in crumbs {
        nav.push_str(&format!(" › <a href=\"{}\">{}</a>", esc(href), esc(label)));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t} · factory</title><link rel=\"stylesheet\" href=\"/assets/app.css\">\
         <script src=\"/assets/app.js\" defer></script></head>\
         <body><header><strong>factory</strong> <nav>{nav}</nav></header>\
         <main><h1>{t}</h1>\n{body}\n</main></body></html>\n",
        t = esc(title),
    )
}

/// A panel that could not be filled: says why, in place of its content.
pub fn degraded(what: &str, why: &str) -> String {
    format!(
        "<p class=\"degraded\"><strong>{}</strong>: {}</p>",
        esc(what),
        esc(why)
    )
}

/// A score with four decimals, or a dash.
pub fn score(s: Option<f64>) -> String {
    s.map_or("–".into(), |s| format!("{s:.4}"))
}

/// A signed delta with four decimals, or a dash.
pub fn delta(d: Option<f64>) -> String {
    d.map_or("–".into(), |d| format!("{d:+.4}"))
}

/// `1.2s`, `3m 04s`, `1h 02m`.
pub fn duration_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{:.1}s", ms as f64 / 1000.0),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// A verdict as a coloured tag.
pub fn verdict_tag(v: &str) -> String {
    format!("<span class=\"tag v-{0}\">{0}</span>", esc(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_ms(1234), "1.2s");
        assert_eq!(duration_ms(184_000), "3m 04s");
        assert_eq!(duration_ms(3_720_000), "1h 02m");
    }
}
