/// A line made at build time: the build script sets the variable.
pub fn greeting() -> &'static str {
    // An unused variable: a warning, so that the builds compared have a
    // compiler message.
    let unused = 1;
    env!("WRAP_FIXTURE_BUILT")
}
