use proc_macro::TokenStream;

/// `answer!()` is `42`.
#[proc_macro]
pub fn answer(_input: TokenStream) -> TokenStream {
    "42".parse().unwrap()
}
