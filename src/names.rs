//! "Did you mean": close names for an object that does not exist.

/// Levenshtein distance, small inputs only.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Up to three candidates close to `wanted`: substring matches first, then by edit distance.
pub fn suggest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = distance(wanted, c);
            let close = d <= (wanted.len() / 3).max(2);
            let contains = c.contains(wanted) || wanted.contains(c);
            (close || contains).then_some((if contains { 0 } else { d }, c))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let names = ["database-01", "database-02", "web-1", "cache"];
        assert_eq!(suggest("databse-01", names), ["database-01", "database-02"]);
        assert_eq!(suggest("web", names), ["web-1"]);
        assert!(suggest("zzzzzz", names).is_empty());
    }
}
