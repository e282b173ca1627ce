//! Links the addon the way Node loads it (napi's symbols resolve at load time).

fn main() {
    napi_build::setup();
}
