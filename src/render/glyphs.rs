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

static CURRENT: std::sync::OnceLock<Charset> = std::sync::OnceLock::new();

/// The glyphs vmctl's lines and tables use, spelled in ASCII for a terminal without UTF-8.
const ASCII: &[(char, &str)] = &[
    ('→', "->"),
    ('←', "<-"),
    ('↔', "<->"),
    ('·', "|"),
    ('—', "--"),
    ('–', "-"),
    ('−', "-"),
    ('…', "..."),
    ('✗', "x"),
    ('✖', "x"),
    ('✓', "ok"),
    ('✔', "ok"),
    ('⚠', "!"),
    ('×', "x"),
    ('÷', "/"),
    ('≤', "<="),
    ('≥', ">="),
    ('≈', "~"),
    ('▶', ">"),
    ('▲', "^"),
    ('█', "#"),
    ('░', "."),
];

/// `text` in `charset`: unchanged in Unicode; in ASCII, the glyphs of [`ASCII`] spelled out
/// (`→` is `->`). Other characters (a name from the cluster) are left as they are.
pub fn fold(text: &str, charset: Charset) -> std::borrow::Cow<'_, str> {
    if charset.is_unicode() || text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match ASCII.iter().find(|(g, _)| *g == c) {
            Some((_, ascii)) => out.push_str(ascii),
            None => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

static DOCUMENTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The command writes documents (`-o json|yaml|html`): what it writes is data, never folded.
pub fn set_documents(yes: bool) {
    DOCUMENTS.store(yes, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the command writes documents ([`set_documents`]): nothing in them is reshaped.
pub fn documents() -> bool {
    DOCUMENTS.load(std::sync::atomic::Ordering::Relaxed)
}

/// [`fold`] in this process's charset: what the table and line renderers write goes
/// through it (`render::write_stdout`, `render::stderr_line`), unless the command writes
/// documents ([`set_documents`]).
pub fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    if DOCUMENTS.load(std::sync::atomic::Ordering::Relaxed) {
        return std::borrow::Cow::Borrowed(text);
    }
    fold(text, Charset::current())
}

/// [`fold`] in this process's charset, for stderr (warnings, errors, progress lines): never
/// data, so folded under `-o json` too.
pub fn for_stderr(text: &str) -> std::borrow::Cow<'_, str> {
    fold(text, Charset::current())
}

impl Charset {
    /// This process's charset, detected once.
    pub fn current() -> Self {
        *CURRENT.get_or_init(Self::detect)
    }

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
    fn ascii_spells_the_glyphs_out() {
        let line = "node-1 → node-2 · 3 left — ✗ failed…";
        assert_eq!(super::fold(line, Charset::Unicode), line);
        let ascii = super::fold(line, Charset::Ascii);
        assert_eq!(ascii, "node-1 -> node-2 | 3 left -- x failed...");
        assert!(ascii.is_ascii());
        assert_eq!(super::fold("ünïcode", Charset::Ascii), "ünïcode");
    }

    #[test]
    fn lc_all_then_lc_ctype_then_lang() {
        assert_eq!(of("C", "", "en_US.UTF-8"), Charset::Ascii);
        assert_eq!(of("", "C", "en_US.UTF-8"), Charset::Ascii);
        assert_eq!(of("", "en_US.UTF-8", "C"), Charset::Unicode);
        assert_eq!(of("en_US.UTF-8", "C", "C"), Charset::Unicode);
    }
}
