//! Secrets out of the arguments kept: a run document is a CI artifact,
//! pushed to Prometheus and OpenTelemetry, and command lines carry tokens
//! (`--token X`, `--password=X`, `TOKEN=X` through `env`, a URL's
//! `user:password@`, an `Authorization:` header). Their values are replaced
//! before the arguments enter the document; the argument names stay.

/// What replaces a secret.
pub(super) const HIDDEN: &str = "***";

/// Words that make an option or a variable name a secret's.
/// (Not `auth` alone: `--author` is no secret.)
const SECRET_WORDS: [&str; 8] = ["password", "passwd", "secret", "token", "apikey", "api_key", "api-key", "credential"];

/// Whether `name` (an option without its dashes, a variable) names a secret.
fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

/// `args` with every secret value replaced by [`HIDDEN`].
pub(super) fn redact(args: &mut [String]) {
    let mut next_is_secret = false;
    for arg in args.iter_mut() {
        if std::mem::take(&mut next_is_secret) {
            *arg = HIDDEN.to_owned();
            continue;
        }
        if let Some(option) = arg.strip_prefix('-').map(|o| o.trim_start_matches('-')) {
            match option.split_once('=') {
                Some((name, _)) if secret_name(name) => {
                    *arg = format!("{}={HIDDEN}", &arg[..arg.len() - option.len() + name.len()])
                }
                Some(_) => {}
                None => next_is_secret = secret_name(option),
            }
            continue;
        }
        if let Some((name, _)) = arg.split_once('=')
            && !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && secret_name(name)
        {
            *arg = format!("{name}={HIDDEN}");
            continue;
        }
        if let Some((header, _)) = arg.split_once(':')
            && ["authorization", "proxy-authorization", "cookie"].contains(&header.trim().to_ascii_lowercase().as_str())
        {
            *arg = format!("{header}: {HIDDEN}");
            continue;
        }
        hide_url_password(arg);
    }
}

/// `scheme://user:password@host…` → `scheme://user:***@host…`, anywhere in `arg`.
fn hide_url_password(arg: &mut String) {
    let mut from = 0;
    while let Some(at) = arg[from..].find("://").map(|i| from + i + 3) {
        let rest = &arg[at..];
        let end = rest.find(['/', ' ', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(userinfo_end), Some(colon)) if colon < userinfo_end => {
                arg.replace_range(at + colon + 1..at + userinfo_end, HIDDEN);
                from = at + colon + 1 + HIDDEN.len() + 1;
            }
            _ => from = at + end,
        }
        if from >= arg.len() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(args: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        redact(&mut args);
        args
    }

    #[test]
    fn option_values_variables_headers_and_url_passwords_are_hidden() {
        assert_eq!(redacted(&["gh", "--token", "ghp_x", "repo"]), ["gh", "--token", "***", "repo"]);
        assert_eq!(redacted(&["mysql", "--password=hunter2", "-u", "me"]), ["mysql", "--password=***", "-u", "me"]);
        assert_eq!(redacted(&["env", "NPM_TOKEN=abc", "npm", "publish"]), ["env", "NPM_TOKEN=***", "npm", "publish"]);
        assert_eq!(
            redacted(&["curl", "-H", "Authorization: Bearer abc", "https://u:pw@example.com/x"]),
            ["curl", "-H", "Authorization: ***", "https://u:***@example.com/x"]
        );
        assert_eq!(
            redacted(&["git", "clone", "https://x-access:tok@host/r.git"]),
            ["git", "clone", "https://x-access:***@host/r.git"]
        );
    }

    #[test]
    fn ordinary_arguments_stay() {
        let plain = ["cc1plus", "-quiet", "-I", "include", "-DNDEBUG=1", "src/foo.cpp", "-o", "/tmp/x.s"];
        assert_eq!(redacted(&plain), plain);
        let urls = ["curl", "https://example.com:8443/a", "git@github.com:o/r.git", "CC=gcc"];
        assert_eq!(redacted(&urls), urls);
        assert_eq!(redacted(&["x", "--token"]), ["x", "--token"], "a last option has no value to hide");
        assert_eq!(redacted(&["git", "commit", "--author", "A <a@b>"]), ["git", "commit", "--author", "A <a@b>"]);
    }
}
