use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tools_runtime::ToolSchema;

mod seconds {
    use super::*;
    pub fn serialize<S: Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<std::time::Duration, D::Error> {
        u64::deserialize(d).map(std::time::Duration::from_secs)
    }
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Wait {
    #[serde(with = "seconds")]
    delay: std::time::Duration,
}

fn main() {}
