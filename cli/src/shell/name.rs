//! A `stepmon shell` step's name, from what the CI gives: GitHub's step id
//! when the workflow set one, else the script's first command line.

/// The longest name taken from a script's line, in characters (a table
/// column and a `step` label value, not the script).
const LONGEST: usize = 48;

/// The step's id as GitHub gives it in `GITHUB_ACTION`, when the workflow
/// set it (`id: build`). A step without an id gets one made up by GitHub,
/// which names nothing: `__run`, `__run_2`, … for `run:` steps,
/// `__owner_repo` for actions — always starting with `__`
/// (<https://docs.github.com/en/actions/reference/variables-reference#default-environment-variables>).
pub fn github_step_id(github_action: Option<&str>) -> Option<&str> {
    github_action.filter(|id| !id.is_empty() && !id.starts_with("__"))
}

/// The script's first command line: the first line that is neither empty
/// nor a comment (`#`, also the `#!` line), trimmed, without a trailing
/// `\` (a command continued on the next line), cut to [`LONGEST`]
/// characters with `…` (at a word's end where one is near). `None`: no
/// such line.
pub fn first_command_line(script: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(script);
    let line = text.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#'))?;
    let line = line.strip_suffix('\\').map_or(line, str::trim_end);
    Some(shortened(line))
}

/// `line` as it is when it has at most [`LONGEST`] characters, else its
/// start with `…`: cut after the last whole word when that keeps at least
/// two thirds of it, else mid-word.
fn shortened(line: &str) -> String {
    if line.chars().count() <= LONGEST {
        return line.to_owned();
    }
    // Room for the ellipsis: the first LONGEST - 1 characters.
    let cut = line.char_indices().nth(LONGEST - 1).map_or(line.len(), |(at, _)| at);
    let head = &line[..cut];
    let head = match head.rfind(char::is_whitespace) {
        Some(space) if head[..space].chars().count() >= LONGEST * 2 / 3 => head[..space].trim_end(),
        _ => head,
    };
    format!("{head}…")
}

/// The step's name: [`github_step_id`], else [`first_command_line`], else
/// `fallback` (the shell's name: an empty script).
pub fn step_name(github_action: Option<&str>, script: &[u8], fallback: &str) -> String {
    github_step_id(github_action)
        .map(str::to_owned)
        .or_else(|| first_command_line(script))
        .unwrap_or_else(|| fallback.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn githubs_own_ids_are_no_names() {
        assert_eq!(github_step_id(Some("build")), Some("build"));
        assert_eq!(github_step_id(Some("test-linux_2")), Some("test-linux_2"));
        for made_up in ["__run", "__run_2", "__actions_checkout", ""] {
            assert_eq!(github_step_id(Some(made_up)), None, "{made_up}");
        }
        assert_eq!(github_step_id(None), None);
    }

    #[test]
    fn the_first_command_line_trimmed_and_cut() {
        let script = b"#!/usr/bin/env bash\n\n  # build it\n   cargo build --release \\\n  --locked\necho done\n";
        assert_eq!(first_command_line(script).as_deref(), Some("cargo build --release"));
        assert_eq!(first_command_line(b"\n# only a comment\n  \n"), None);
        assert_eq!(first_command_line(b"make\r\n"), Some("make".to_owned()));
        // Cut at a word's end, with an ellipsis.
        let long = b"cargo test --workspace --all-features --locked -- --test-threads 2";
        assert_eq!(first_command_line(long).as_deref(), Some("cargo test --workspace --all-features --locked…"));
        // One long word: cut mid-word, 48 characters with the ellipsis.
        let word = "x".repeat(60);
        assert_eq!(first_command_line(word.as_bytes()), Some(format!("{}…", "x".repeat(47))));
        // Exactly 48 characters: kept whole; multi-byte characters counted as one.
        let exact = "é".repeat(48);
        assert_eq!(first_command_line(exact.as_bytes()), Some(exact.clone()));
        let over = "é".repeat(49);
        assert_eq!(first_command_line(over.as_bytes()), Some(format!("{}…", "é".repeat(47))));
        // Bytes that are not UTF-8 do not stop it.
        assert_eq!(first_command_line(b"echo \xff\n").as_deref(), Some("echo \u{fffd}"));
    }

    #[test]
    fn the_name_is_the_id_else_the_line_else_the_shell() {
        assert_eq!(step_name(Some("build"), b"make\n", "bash"), "build");
        assert_eq!(step_name(Some("__run_2"), b"make all\n", "bash"), "make all");
        assert_eq!(step_name(None, b"", "sh"), "sh");
    }
}
