//! `opentelemetry/proto/metrics/v1/metrics.proto` and
//! `opentelemetry/proto/collector/metrics/v1/metrics_service.proto`.

use serde::Serialize;

use super::common::{InstrumentationScope, KeyValue, Resource};

/// `ExportMetricsServiceRequest`: the body of `POST /v1/metrics`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportMetricsServiceRequest {
    /// `repeated ResourceMetrics resource_metrics = 1`.
    #[prost(message, repeated, tag = "1")]
    pub resource_metrics: Vec<ResourceMetrics>,
}

/// `ResourceMetrics`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetrics {
    /// `Resource resource = 1`.
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    /// `repeated ScopeMetrics scope_metrics = 2`.
    #[prost(message, repeated, tag = "2")]
    pub scope_metrics: Vec<ScopeMetrics>,
}

/// `ScopeMetrics`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct ScopeMetrics {
    /// `InstrumentationScope scope = 1`.
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    /// `repeated Metric metrics = 2`.
    #[prost(message, repeated, tag = "2")]
    pub metrics: Vec<Metric>,
}

/// `Metric`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
pub struct Metric {
    /// `string name = 1`.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `string description = 2`.
    #[prost(string, tag = "2")]
    pub description: String,
    /// `string unit = 3` (UCUM).
    #[prost(string, tag = "3")]
    pub unit: String,
    /// `oneof data`: `Gauge gauge = 5`, `Sum sum = 7` (histograms and
    /// summaries, 9–11, are not sent).
    #[prost(oneof = "Data", tags = "5, 7")]
    #[serde(flatten)]
    pub data: Option<Data>,
}

/// `Metric.data`.
#[derive(Clone, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Data {
    /// `Gauge gauge = 5`.
    #[prost(message, tag = "5")]
    Gauge(Gauge),
    /// `Sum sum = 7`.
    #[prost(message, tag = "7")]
    Sum(Sum),
}

/// `Gauge`: sampled values.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gauge {
    /// `repeated NumberDataPoint data_points = 1`.
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<NumberDataPoint>,
}

/// `AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE`.
pub const AGGREGATION_TEMPORALITY_CUMULATIVE: i32 = 2;

/// `Sum`: a counter.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sum {
    /// `repeated NumberDataPoint data_points = 1`.
    #[prost(message, repeated, tag = "1")]
    pub data_points: Vec<NumberDataPoint>,
    /// `AggregationTemporality aggregation_temporality = 2`.
    #[prost(int32, tag = "2")]
    pub aggregation_temporality: i32,
    /// `bool is_monotonic = 3`.
    #[prost(bool, tag = "3")]
    pub is_monotonic: bool,
}

/// `NumberDataPoint`.
#[derive(Clone, PartialEq, prost::Message, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberDataPoint {
    /// `repeated KeyValue attributes = 7`.
    #[prost(message, repeated, tag = "7")]
    pub attributes: Vec<KeyValue>,
    /// `fixed64 start_time_unix_nano = 2`.
    #[prost(fixed64, tag = "2")]
    #[serde(serialize_with = "super::u64_string")]
    pub start_time_unix_nano: u64,
    /// `fixed64 time_unix_nano = 3`.
    #[prost(fixed64, tag = "3")]
    #[serde(serialize_with = "super::u64_string")]
    pub time_unix_nano: u64,
    /// `oneof value`: `double as_double = 4`, `sfixed64 as_int = 6`.
    #[prost(oneof = "Number", tags = "4, 6")]
    #[serde(flatten)]
    pub value: Option<Number>,
}

/// `NumberDataPoint.value`.
#[derive(Clone, Copy, PartialEq, prost::Oneof, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Number {
    /// `double as_double = 4`.
    #[prost(double, tag = "4")]
    AsDouble(f64),
    /// `sfixed64 as_int = 6`.
    #[prost(sfixed64, tag = "6")]
    #[serde(serialize_with = "super::i64_string")]
    AsInt(i64),
}
