//! A tiny word-statistics library: the project the README's first command measures.

/// Counts the words of `text` (runs of non-whitespace).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The most frequent word, lowercased, with its count; ties go to the earliest word.
pub fn most_frequent(text: &str) -> Option<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for word in text.split_whitespace() {
        let word = word.to_lowercase();
        match counts.iter_mut().find(|(w, _)| *w == word) {
            Some((_, n)) => *n += 1,
            None => counts.push((word, 1)),
        }
    }
    let best = counts.iter().map(|(_, n)| *n).max()?;
    counts.into_iter().find(|(_, n)| *n == best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words() {
        assert_eq!(word_count("the quick  brown\nfox"), 4);
        assert_eq!(word_count(""), 0);
    }

    #[test]
    fn finds_the_most_frequent_word() {
        assert_eq!(most_frequent("a b A c"), Some(("a".to_string(), 2)));
        assert_eq!(most_frequent("   "), None);
    }
}
