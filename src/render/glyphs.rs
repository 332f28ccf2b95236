//! Which characters the charts may draw with: Unicode block and box characters where the
//! locale says UTF-8, ASCII otherwise (`LANG=C`, no locale at all, a serial console).
//!
//! The locale is read the way setlocale(3) resolves `LC_CTYPE`: the first of `LC_ALL`,
//! `LC_CTYPE`, `LANG` that is set and not empty; none means the "C" locale.

/// The character set a chart is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    /// Block elements (`▁▂▃▄▅▆▇█`), shades and box drawing.
    Unicode,
    /// Printable ASCII only.
    Ascii,
}

impl Charset {
    /// From this process's environment.
    pub fn detect() -> Self {
        let var = |name: &str| std::env::var(name).ok();
        Self::from_locale(var("LC_ALL"), var("LC_CTYPE"), var("LANG"))
    }

    /// Pure: the charset the three variables give (see the module comment).
    pub fn from_locale(
        lc_all: Option<String>,
        lc_ctype: Option<String>,
        lang: Option<String>,
    ) -> Self {
        let locale = [lc_all, lc_ctype, lang]
            .into_iter()
            .flatten()
            .find(|v| !v.is_empty())
            .unwrap_or_default();
        // "en_US.UTF-8", "C.UTF-8", "de_DE.utf8@euro": the codeset follows the dot.
        let codeset = locale
            .split_once('.')
            .map(|(_, rest)| rest.split('@').next().unwrap_or(rest))
            .unwrap_or("");
        let codeset = codeset.to_ascii_lowercase().replace('-', "");
        if codeset == "utf8" {
            Charset::Unicode
        } else {
            Charset::Ascii
        }
    }

    pub fn is_unicode(self) -> bool {
        self == Charset::Unicode
    }
}

#[cfg(test)]
mod tests {
    use super::Charset;

    fn of(lc_all: &str, lc_ctype: &str, lang: &str) -> Charset {
        let s = |v: &str| (!v.is_empty()).then(|| v.to_string());
        Charset::from_locale(s(lc_all), s(lc_ctype), s(lang))
    }

    #[test]
    fn utf8_locales_draw_unicode_and_c_draws_ascii() {
        assert_eq!(of("", "", "en_US.UTF-8"), Charset::Unicode);
        assert_eq!(of("", "", "de_DE.utf8@euro"), Charset::Unicode);
        assert_eq!(of("", "", "C.UTF-8"), Charset::Unicode);
        assert_eq!(of("", "", "C"), Charset::Ascii);
        assert_eq!(of("", "", "POSIX"), Charset::Ascii);
        assert_eq!(of("", "", ""), Charset::Ascii);
        assert_eq!(of("", "", "en_US.ISO-8859-1"), Charset::Ascii);
    }

    #[test]
    fn lc_all_then_lc_ctype_then_lang() {
        assert_eq!(of("C", "", "en_US.UTF-8"), Charset::Ascii);
        assert_eq!(of("", "C", "en_US.UTF-8"), Charset::Ascii);
        assert_eq!(of("", "en_US.UTF-8", "C"), Charset::Unicode);
        assert_eq!(of("en_US.UTF-8", "C", "C"), Charset::Unicode);
    }
}
