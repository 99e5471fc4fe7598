//! Request encoding from arbitrary JSON, for every provider: never panics,
//! and whatever encodes is a JSON body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skyl::{ClientConfig, Provider, Request};

fuzz_target!(|data: &[u8]| {
    let Ok(request) = serde_json::from_slice::<Request>(data) else {
        return;
    };
    for p in Provider::ALL {
        let mut config = ClientConfig::new(p);
        config.base_url = Some("http://127.0.0.1:1".into());
        config.model = Some("m".into());
        for stream in [false, true] {
            if let Ok(http) = skyl::encode_request(&config, &request, stream) {
                serde_json::from_str::<serde_json::Value>(&http.body).expect("a JSON body");
            }
        }
    }
});
