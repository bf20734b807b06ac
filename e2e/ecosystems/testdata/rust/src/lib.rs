//! wordcase: split identifiers into words and join them in another case.

pub mod snake;

/// The words of an identifier: split at anything that is not a letter or a
/// digit, and where a lower-case letter or a digit meets an upper-case one.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn splits_camel_case() {
        assert_eq!(words("parseHttpRequest"), vec!["parse", "Http", "Request"]);
    }

    #[test]
    fn splits_at_punctuation() {
        assert_eq!(words("max-len_2"), vec!["max", "len", "2"]);
    }
}
