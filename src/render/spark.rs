//! Sparklines: a series of values drawn as one line of block characters (`▁▂▃▄▅▆▇█`), or an
//! ASCII ramp (`_.-~=+*#`) where the locale is not UTF-8. Pure: values, a width in cells
//! and a [`Charset`] in, a string out.
//!
//! A series longer than the width is resampled into `width` buckets of neighbouring values,
//! each drawn as its [`Bucket::Max`] (remaining memory: the peaks of the saw-tooth, where
//! each pre-copy pass starts, survive) or its [`Bucket::Mean`] (rates). A shorter series is
//! drawn one cell per value, never stretched. Two series drawn against each other (dirty rate
//! against throughput) share one scale ([`pair`]) so the taller line is the bigger rate.
//! Empty series draw as the empty string; a series of zeros as the lowest glyph.

use super::glyphs::Charset;

/// The eight levels, lowest first.
pub const UNICODE_RAMP: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
pub const ASCII_RAMP: [char; 8] = ['_', '.', '-', '~', '=', '+', '*', '#'];

/// How a bucket of neighbouring values becomes one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    /// The largest (remaining memory: keeps the peaks).
    Max,
    /// The mean (rates).
    Mean,
}

fn ramp(charset: Charset) -> &'static [char; 8] {
    match charset {
        Charset::Unicode => &UNICODE_RAMP,
        Charset::Ascii => &ASCII_RAMP,
    }
}

/// The half-open range of `n` values bucket `i` of `width` covers (`n > width`).
fn bucket_range(i: usize, n: usize, width: usize) -> std::ops::Range<usize> {
    (i * n / width)..((i + 1) * n / width)
}

/// `values` in at most `width` cells: unchanged when they fit, else one value per bucket.
pub fn resample(values: &[f64], width: usize, how: Bucket) -> Vec<f64> {
    let n = values.len();
    if width == 0 {
        return Vec::new();
    }
    if n <= width {
        return values.to_vec();
    }
    (0..width)
        .map(|i| {
            let bucket = &values[bucket_range(i, n, width)];
            match how {
                Bucket::Max => bucket.iter().copied().fold(f64::MIN, f64::max),
                Bucket::Mean => bucket.iter().sum::<f64>() / bucket.len().max(1) as f64,
            }
        })
        .collect()
}

/// The level (0..=7) of `v` on a scale whose top is `max`.
fn level(v: f64, max: f64) -> usize {
    if max.is_nan() || v.is_nan() || max <= 0.0 || v <= 0.0 {
        return 0;
    }
    ((v / max).min(1.0) * 7.0).round() as usize
}

/// `values` (already resampled) drawn on a scale from 0 to `max`.
pub fn draw(values: &[f64], max: f64, charset: Charset) -> String {
    let ramp = ramp(charset);
    values.iter().map(|v| ramp[level(*v, max)]).collect()
}

fn floats(values: &[u64]) -> Vec<f64> {
    values.iter().map(|v| *v as f64).collect()
}

fn top(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

/// One series on its own scale (its largest value is the full block).
pub fn sparkline(values: &[u64], width: usize, how: Bucket, charset: Charset) -> String {
    let cells = resample(&floats(values), width, how);
    draw(&cells, top(&cells), charset)
}

/// Two series on one scale (the largest of both is the full block): (a, b).
pub fn pair(a: &[u64], b: &[u64], width: usize, how: Bucket, charset: Charset) -> (String, String) {
    let (a, b) = (
        resample(&floats(a), width, how),
        resample(&floats(b), width, how),
    );
    let max = top(&a).max(top(&b));
    (draw(&a, max, charset), draw(&b, max, charset))
}

/// A line to print under a sparkline of the same `passes.len()` values and `width`: the pass
/// number where a pass starts (`1` at the first cell), or `|` where a number does not fit
/// before the next start. Unknown passes mark nothing.
pub fn pass_marks(passes: &[Option<u64>], width: usize) -> String {
    let n = passes.len();
    let cells: Vec<Option<u64>> = if n <= width {
        passes.to_vec()
    } else {
        (0..width)
            .map(|i| {
                passes[bucket_range(i, n, width)]
                    .iter()
                    .flatten()
                    .max()
                    .copied()
            })
            .collect()
    };
    let starts: Vec<usize> = (0..cells.len())
        .filter(
            |&i| match (i.checked_sub(1).and_then(|j| cells[j]), cells[i]) {
                (_, None) => false,
                (None, Some(_)) => i == 0 || cells[..i].iter().all(Option::is_none),
                (Some(before), Some(now)) => now > before,
            },
        )
        .collect();
    let mut line = vec![' '; cells.len()];
    for (k, &at) in starts.iter().enumerate() {
        let room = starts.get(k + 1).copied().unwrap_or(cells.len()) - at;
        let label = cells[at].map(|p| p.to_string()).unwrap_or_default();
        // A number needs a blank after it unless it ends the line.
        let fits = label.len() < room || at + label.len() == cells.len();
        if fits {
            for (j, c) in label.chars().enumerate() {
                line[at + j] = c;
            }
        } else {
            line[at] = '|';
        }
    }
    line.into_iter().collect::<String>().trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: Charset = Charset::Unicode;
    const A: Charset = Charset::Ascii;

    #[test]
    fn a_short_series_is_one_cell_per_value_on_its_own_scale() {
        assert_eq!(
            sparkline(&[0, 1, 2, 3, 4, 5, 6, 7], 20, Bucket::Max, U),
            "▁▂▃▄▅▆▇█"
        );
        assert_eq!(
            sparkline(&[0, 1, 2, 3, 4, 5, 6, 7], 20, Bucket::Max, A),
            "_.-~=+*#"
        );
        assert_eq!(sparkline(&[70, 35, 0], 20, Bucket::Max, U), "█▅▁");
    }

    #[test]
    fn empty_one_point_and_all_zero_series() {
        assert_eq!(sparkline(&[], 10, Bucket::Max, U), "");
        assert_eq!(sparkline(&[5, 6], 0, Bucket::Max, U), "");
        assert_eq!(sparkline(&[42], 10, Bucket::Max, U), "█");
        assert_eq!(sparkline(&[0, 0, 0], 10, Bucket::Mean, U), "▁▁▁");
        assert_eq!(sparkline(&[0, 0, 0], 10, Bucket::Mean, A), "___");
        assert_eq!(
            pair(&[], &[], 10, Bucket::Mean, U),
            (String::new(), String::new())
        );
    }

    #[test]
    fn resampling_by_max_keeps_the_saw_tooth_peaks() {
        // Four passes of 25 samples, each starting high and falling to 0; 100 values in 8
        // cells. The peaks (100, 60, 30, 10) must be drawn; a mean would flatten them.
        let mut values = Vec::new();
        for peak in [100u64, 60, 30, 10] {
            values.extend((0..25).map(|i| peak * (25 - i) / 25));
        }
        let by_max = resample(&floats(&values), 8, Bucket::Max);
        assert_eq!(by_max.len(), 8);
        assert_eq!(by_max[0], 100.0);
        assert!(by_max.contains(&60.0) && by_max.contains(&30.0) && by_max.contains(&10.0));
        let by_mean = resample(&floats(&values), 8, Bucket::Mean);
        assert!(by_mean.iter().all(|v| *v < 100.0), "{by_mean:?}");
        let line = sparkline(&values, 8, Bucket::Max, U);
        assert_eq!(line.chars().count(), 8);
        assert!(line.starts_with('█'), "{line}");
        assert_eq!(resample(&[1.0, 2.0, 3.0, 4.0], 2, Bucket::Mean), [1.5, 3.5]);
    }

    #[test]
    fn two_series_share_one_scale() {
        // Throughput 40, dirty rate 10: the dirty line stays low, not full height.
        let (sent, dirty) = pair(&[40, 40, 40], &[10, 10, 10], 10, Bucket::Mean, U);
        assert_eq!(sent, "███");
        assert_eq!(dirty, "▃▃▃");
        // Each on its own scale both would be full blocks.
        assert_eq!(sparkline(&[10, 10, 10], 10, Bucket::Mean, U), "███");
        // The dirty rate overtaking is seen.
        let (sent, dirty) = pair(&[40, 40], &[10, 80], 10, Bucket::Mean, A);
        assert_eq!((sent.as_str(), dirty.as_str()), ("==", ".#"));
    }

    #[test]
    fn pass_marks_line_up_with_the_cells() {
        let passes = [1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3, 10, 10, 10].map(Some);
        assert_eq!(pass_marks(&passes, 40), "1  2 3     10");
        // Resampled to 7 cells (2 values each) the starts move with the buckets; a number
        // with no room is a bar.
        assert_eq!(pass_marks(&passes, 7), "||3  10");
        assert_eq!(pass_marks(&[None, None], 5), "");
        assert_eq!(pass_marks(&[None, Some(4), Some(4)], 5), " 4");
        assert_eq!(pass_marks(&[], 5), "");
    }
}
