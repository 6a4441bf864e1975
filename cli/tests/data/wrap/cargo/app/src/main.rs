fn main() {
    println!("{} {}", wrap_fixture_lib::greeting(), wrap_fixture_macro::answer!());
}
