//! Rust source as the few tokens a path is made of: identifiers, `::`, braces, commas and
//! semicolons, each with its line; comments and the insides of string and character literals
//! are dropped.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// `::`
    Path,
    Open,
    Close,
    Comma,
    Semi,
    /// `#[path = "…"]`'s file, kept because it places the next `mod`.
    PathAttr(String),
    /// Anything else (one token per character).
    Other(char),
}

/// The tokens of `src`, each with its 1-based line.
pub fn tokens(src: &str) -> Vec<(Tok, u32)> {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<(Tok, u32)> = Vec::new();
    let (mut i, mut line) = (0, 1u32);
    // Skips to the end of a string whose opening quote is at `i`, `hashes` `#` after its
    // closing quote (raw strings); counts the lines it spans; returns its text.
    let string = |i: &mut usize, line: &mut u32, raw: bool, hashes: usize| -> String {
        let start = *i + 1;
        *i += 1;
        while *i < c.len() {
            match c[*i] {
                '\\' if !raw => *i += 1,
                '"' if c[*i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == '#')
                    .count()
                    == hashes =>
                {
                    let text = c[start..*i].iter().collect();
                    *i += 1 + hashes;
                    return text;
                }
                '\n' => *line += 1,
                _ => {}
            }
            *i += 1;
        }
        String::new()
    };
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        match ch {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if next == Some('/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if c[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => {
                let at = line;
                let text = string(&mut i, &mut line, false, 0);
                // `#[path = "…"]`: the tokens before it are `# [ path =`.
                let n = out.len();
                if n >= 4
                    && matches!(&out[n - 2].0, Tok::Ident(p) if p == "path")
                    && out[n - 1].0 == Tok::Other('=')
                    && out[n - 3].0 == Tok::Other('[')
                    && out[n - 4].0 == Tok::Other('#')
                {
                    out.truncate(n - 4);
                    out.push((Tok::PathAttr(text), at));
                }
            }
            'r' | 'b'
                if matches!(next, Some('"') | Some('#')) || (ch == 'b' && next == Some('r')) =>
            {
                // r"…", r#"…"#, b"…", br"…"; an identifier that merely starts with r or b
                // is handled below when no quote follows.
                let mut j = i + 1;
                if ch == 'b' && c.get(j) == Some(&'r') {
                    j += 1;
                }
                let raw = ch == 'r' || (ch == 'b' && next == Some('r'));
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) == Some(&'"') {
                    i = j;
                    string(&mut i, &mut line, raw, hashes);
                } else {
                    i = ident(&c, i, line, &mut out);
                }
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{..}'), else a lifetime or label.
                if next == Some('\\') {
                    i += 2;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if c.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            ':' if next == Some(':') => {
                out.push((Tok::Path, line));
                i += 2;
            }
            '{' => {
                out.push((Tok::Open, line));
                i += 1;
            }
            '}' => {
                out.push((Tok::Close, line));
                i += 1;
            }
            ',' => {
                out.push((Tok::Comma, line));
                i += 1;
            }
            ';' => {
                out.push((Tok::Semi, line));
                i += 1;
            }
            c0 if c0.is_alphabetic() || c0 == '_' => i = ident(&c, i, line, &mut out),
            c0 if c0.is_whitespace() => i += 1,
            c0 if c0.is_ascii_digit() => {
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                    i += 1;
                }
            }
            // The `]` closing `#[path = "…"]` goes with it.
            ']' if matches!(out.last(), Some((Tok::PathAttr(_), _))) => i += 1,
            c0 => {
                out.push((Tok::Other(c0), line));
                i += 1;
            }
        }
    }
    out
}

/// Pushes the identifier starting at `i` (a raw `r#name` as `name`); returns where it ends.
fn ident(c: &[char], mut i: usize, line: u32, out: &mut Vec<(Tok, u32)>) -> usize {
    let start = i;
    while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
        i += 1;
    }
    out.push((Tok::Ident(c[start..i].iter().collect()), line));
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        tokens(src)
            .into_iter()
            .filter_map(|(t, _)| match t {
                Tok::Ident(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_strings_and_chars_are_dropped() {
        let src =
            "a // crate::x\n/* crate::y /* nested */ */ b \"crate::z\" r#\"crate::w\"# '\"' c 'a";
        assert_eq!(idents(src), ["a", "b", "c", "a"]);
    }

    #[test]
    fn lines_are_counted_through_strings_and_comments() {
        let toks = tokens("a\n\"x\ny\"\n/* \n */ b");
        assert_eq!(toks.last(), Some(&(Tok::Ident("b".into()), 5)));
    }

    #[test]
    fn a_path_attribute_is_kept() {
        let toks = tokens("#[path = \"../x.rs\"]\nmod x;");
        assert_eq!(toks[0].0, Tok::PathAttr("../x.rs".into()));
        assert_eq!(toks[1].0, Tok::Ident("mod".into()));
    }
}
