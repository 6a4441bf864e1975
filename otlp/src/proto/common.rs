//! `opentelemetry/proto/common/v1/common.proto` and
//! `opentelemetry/proto/resource/v1/resource.proto`.

use serde::Serialize;

/// `AnyValue`: one attribute value.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct AnyValue {
    /// `oneof value`, fields 1–7 (stepmon sends 1–5).
    #[prost(oneof = "Value", tags = "1, 2, 3, 4, 5")]
    #[serde(flatten)]
    pub value: Option<Value>,
}

/// `AnyValue.value`.
#[derive(Clone, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Value {
    /// `string string_value = 1`.
    #[prost(string, tag = "1")]
    StringValue(String),
    /// `bool bool_value = 2`.
    #[prost(bool, tag = "2")]
    BoolValue(bool),
    /// `int64 int_value = 3`.
    #[prost(int64, tag = "3")]
    #[serde(serialize_with = "super::i64_string")]
    IntValue(i64),
    /// `double double_value = 4`.
    #[prost(double, tag = "4")]
    DoubleValue(f64),
    /// `ArrayValue array_value = 5`.
    #[prost(message, tag = "5")]
    ArrayValue(ArrayValue),
}

/// `ArrayValue`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct ArrayValue {
    /// `repeated AnyValue values = 1`.
    #[prost(message, repeated, tag = "1")]
    pub values: Vec<AnyValue>,
}

/// `KeyValue`: one attribute.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct KeyValue {
    /// `string key = 1`.
    #[prost(string, tag = "1")]
    pub key: String,
    /// `AnyValue value = 2`.
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

impl KeyValue {
    /// An attribute from its key and value.
    pub fn new(key: impl Into<String>, value: Value) -> KeyValue {
        KeyValue { key: key.into(), value: Some(AnyValue { value: Some(value) }) }
    }
}

/// `InstrumentationScope`: what produced the telemetry.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct InstrumentationScope {
    /// `string name = 1`.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `string version = 2`.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `Resource` (resource.proto): the entity the telemetry is about.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct Resource {
    /// `repeated KeyValue attributes = 1`.
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}
