//! Steps' sample series as OTLP metrics: the raw readings of every
//! sample, so that a backend can chart and aggregate them itself. The
//! kernel's cumulative counters (CPU time, IO bytes, PSI stall time) are
//! cumulative monotonic `Sum`s starting at the step's start; current
//! values (memory, tasks) are `Gauge`s. Names follow the semantic
//! conventions' style (`container.cpu.time`, unit `s`) under `stepmon.step.`.

use stepmon_model::sample::StepSample;
use stepmon_model::system::PressureJson;

use super::attributes::{self, Attributes};
use super::proto::common::KeyValue;
use super::proto::metrics::{
    AGGREGATION_TEMPORALITY_CUMULATIVE, Data, ExportMetricsServiceRequest, Gauge, Metric, Number, NumberDataPoint,
    ResourceMetrics, ScopeMetrics, Sum,
};
use super::{Context, resource, scope, unix_nanos};
use stepmon_report::step::Step;

/// How a series is read from a sample.
type Pick = fn(&StepSample) -> Option<Number>;

fn int(v: Option<u64>) -> Option<Number> {
    v.and_then(|v| i64::try_from(v).ok()).map(Number::AsInt)
}

/// A kernel count in `unit`s per second (ns, µs) as seconds.
#[allow(clippy::cast_precision_loss)]
fn seconds(v: Option<u64>, per_second: f64) -> Option<Number> {
    v.map(|v| Number::AsDouble(v as f64 / per_second))
}

fn stall(p: Option<PressureJson>) -> Option<Number> {
    seconds(p?.some?.total, 1e6)
}

/// A metric: name, unit, description, whether it is a counter, and the
/// points' extra attribute (the PSI resource).
struct Series {
    name: &'static str,
    unit: &'static str,
    description: &'static str,
    counter: bool,
    extra: Option<(&'static str, &'static str)>,
    pick: Pick,
}

/// One resource's PSI stall time: the three are one metric, told apart by
/// `stepmon.pressure.resource`.
const fn stall_series(resource: &'static str, pick: Pick) -> Series {
    Series {
        name: "stepmon.step.pressure.stall.time",
        unit: "s",
        description: "Time some of the step's tasks stalled on a resource (PSI some total)",
        counter: true,
        extra: Some(("stepmon.pressure.resource", resource)),
        pick,
    }
}

/// Every series stepmon sends, with what in the run JSON it is.
const SERIES: [Series; 8] = [
    Series {
        name: "stepmon.step.cpu.time",
        unit: "s",
        description: "CPU time of the step (cpuStat.usageNanos)",
        counter: true,
        extra: None,
        pick: |s| seconds(s.cpu_stat?.usage_nanos, 1e9),
    },
    Series {
        name: "stepmon.step.memory.usage",
        unit: "By",
        description: "Memory charged to the step (memory.current)",
        counter: false,
        extra: None,
        pick: |s| int(s.stepmon.memory_current),
    },
    Series {
        name: "stepmon.step.io.read",
        unit: "By",
        description: "Bytes the step read from block devices (ioStat.readBytes)",
        counter: true,
        extra: None,
        pick: |s| int(s.io_stat?.read_bytes),
    },
    Series {
        name: "stepmon.step.io.write",
        unit: "By",
        description: "Bytes the step wrote to block devices (ioStat.writeBytes)",
        counter: true,
        extra: None,
        pick: |s| int(s.io_stat?.write_bytes),
    },
    Series {
        name: "stepmon.step.pids",
        unit: "{process}",
        description: "Tasks in the step (pidsStat.current)",
        counter: false,
        extra: None,
        pick: |s| int(s.pids_stat.current),
    },
    stall_series("cpu", |s| stall(s.cpu_stat?.pressure)),
    stall_series("memory", |s| stall(s.memory_stat?.pressure)),
    stall_series("io", |s| stall(s.io_stat?.pressure)),
];

/// The points of one series of `step`; the identity attributes on each.
fn points(step: &Step, series: &Series, identity: &[KeyValue], start: u64) -> Vec<NumberDataPoint> {
    let mut attributes = identity.to_vec();
    if let Some((key, value)) = series.extra {
        let mut extra = Attributes::default();
        extra.text(key, value);
        attributes.extend(extra.0);
    }
    step.usage
        .resource_usage
        .samples
        .iter()
        .filter_map(|sample| {
            let value = (series.pick)(sample)?;
            let time = unix_nanos(sample.timestamp)?;
            Some(NumberDataPoint {
                attributes: attributes.clone(),
                // Gauges have no start; a counter's is the step's start
                // (never after the point).
                start_time_unix_nano: if series.counter { start.min(time) } else { 0 },
                time_unix_nano: time,
                value: Some(value),
            })
        })
        .collect()
}

/// The metrics of one step, series with the same name merged.
fn step_metrics(step: &Step) -> Vec<Metric> {
    let mut identity = Attributes::default();
    attributes::identity(step, &mut identity);
    let start = step.time_origin().and_then(unix_nanos).unwrap_or(0);
    let mut metrics: Vec<Metric> = Vec::new();
    for series in &SERIES {
        let points = points(step, series, &identity.0, start);
        if points.is_empty() {
            continue;
        }
        let existing = metrics.iter_mut().find(|m| m.name == series.name);
        match (existing, series.counter) {
            (Some(Metric { data: Some(Data::Sum(sum)), .. }), _) => sum.data_points.extend(points),
            (Some(Metric { data: Some(Data::Gauge(gauge)), .. }), _) => gauge.data_points.extend(points),
            (_, counter) => metrics.push(Metric {
                name: series.name.to_owned(),
                description: series.description.to_owned(),
                unit: series.unit.to_owned(),
                data: Some(if counter {
                    Data::Sum(Sum {
                        data_points: points,
                        aggregation_temporality: AGGREGATION_TEMPORALITY_CUMULATIVE,
                        is_monotonic: true,
                    })
                } else {
                    Data::Gauge(Gauge { data_points: points })
                }),
            }),
        }
    }
    metrics
}

/// The metrics request of `steps`: one `ResourceMetrics` per step with
/// samples.
#[must_use]
pub fn metrics(steps: &[Step], context: &Context) -> ExportMetricsServiceRequest {
    let resource_metrics = steps
        .iter()
        .filter_map(|step| {
            let metrics = step_metrics(step);
            (!metrics.is_empty()).then(|| ResourceMetrics {
                resource: Some(resource(context, Some(step))),
                scope_metrics: vec![ScopeMetrics { scope: Some(scope()), metrics }],
            })
        })
        .collect();
    ExportMetricsServiceRequest { resource_metrics }
}
