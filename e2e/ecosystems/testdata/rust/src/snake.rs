use crate::words;

/// snake_case: the words, lower-cased, joined by `_`.
pub fn to_snake(s: &str) -> String {
    words(s).iter().map(|w| w.to_lowercase()).collect::<Vec<_>>().join("_")
}

#[cfg(test)]
mod tests {
    use super::to_snake;

    #[test]
    fn snake_of_camel() {
        assert_eq!(to_snake("parseHttpRequest"), "parse_http_request");
    }
}
