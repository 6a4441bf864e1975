//! Steps as spans.

use super::proto::trace::{
    ExportTraceServiceRequest, ResourceSpans, SPAN_KIND_INTERNAL, STATUS_CODE_ERROR, ScopeSpans, Span, Status,
};
use super::{Context, attributes, proto::Hex, resource, scope, unix_nanos};
use stepmon_report::step::{Origin, Step};

/// A step's span times: its start and end, else its time origin and wall
/// time; `None` when it has no place in time.
fn times(step: &Step) -> Option<(u64, u64)> {
    let start = step.start.or_else(|| step.time_origin())?;
    let end = step.end.or_else(|| {
        let wall = jiff::SignedDuration::try_from_secs_f64(step.wall_seconds?).ok()?;
        start.checked_add(wall).ok()
    })?;
    let (start, end) = (unix_nanos(start)?, unix_nanos(end)?);
    Some((start, end.max(start)))
}

/// The span of `step` under `parent`.
fn step_span(step: &Step, trace_id: [u8; 16], parent: Option<[u8; 8]>, id: [u8; 8], state: &str) -> Option<Span> {
    let (start, end) = times(step)?;
    let run_id = match &step.origin {
        Origin::BuildKit { step_id, .. } => step_id.clone(),
        // A stepmon run has no id of its own in the CI: its span's is
        // unique and names it.
        _ => Hex(&id).to_string(),
    };
    let status = attributes::error_type(step).map(|kind| Status {
        message: match step.run.as_ref().and_then(|r| r.signal) {
            Some(signal) => format!("killed by {kind} (signal {signal})"),
            None => format!("exited with code {kind}"),
        },
        code: STATUS_CODE_ERROR,
    });
    Some(Span {
        trace_id: trace_id.to_vec(),
        span_id: id.to_vec(),
        trace_state: state.to_owned(),
        parent_span_id: parent.map(|p| p.to_vec()).unwrap_or_default(),
        name: step.name.clone(),
        kind: SPAN_KIND_INTERNAL,
        start_time_unix_nano: start,
        end_time_unix_nano: end,
        attributes: attributes::span(step, run_id),
        status,
    })
}

/// One `ResourceSpans` holding `spans`.
fn resource_spans(context: &Context, step: Option<&Step>, spans: Vec<Span>) -> ResourceSpans {
    ResourceSpans {
        resource: Some(resource(context, step)),
        scope_spans: vec![ScopeSpans { scope: Some(scope()), spans }],
    }
}

/// The trace request of `steps`, and the names of steps left out because
/// they have no time (no start and no sample). `next_span_id` gives fresh
/// random span ids.
///
/// Steps recorded by stepmon are each a child of the context's parent;
/// BuildKit steps are children of one `build` span (itself the parent's
/// child) from the first one's start to the last one's end, as BuildKit's
/// own trace has a span per build with one per vertex under it.
pub fn traces(
    steps: &[Step],
    context: &Context,
    next_span_id: &mut dyn FnMut() -> [u8; 8],
) -> (ExportTraceServiceRequest, Vec<String>) {
    let trace_id = context.parent.map_or(context.new_trace_id, |p| p.trace_id);
    let parent = context.parent.map(|p| p.parent_id);
    let state = context.trace_state.as_str();
    let mut out = Vec::new();
    let mut untimed = Vec::new();
    let (buildkit, runs): (Vec<&Step>, Vec<&Step>) =
        steps.iter().partition(|s| matches!(s.origin, Origin::BuildKit { .. }));
    for step in runs {
        match step_span(step, trace_id, parent, next_span_id(), state) {
            Some(span) => out.push(resource_spans(context, Some(step), vec![span])),
            None => untimed.push(step.name.clone()),
        }
    }
    if !buildkit.is_empty() {
        let build_id = next_span_id();
        let mut spans = Vec::new();
        for step in buildkit {
            match step_span(step, trace_id, Some(build_id), next_span_id(), state) {
                Some(span) => spans.push(span),
                None => untimed.push(step.name.clone()),
            }
        }
        let start = spans.iter().map(|s| s.start_time_unix_nano).min();
        let end = spans.iter().map(|s| s.end_time_unix_nano).max();
        if let (Some(start), Some(end)) = (start, end) {
            let mut attributes = attributes::Attributes::default();
            attributes.text("stepmon.origin", "buildKit");
            attributes.int("stepmon.buildkit.steps", u64::try_from(spans.len()).ok());
            let build = Span {
                trace_id: trace_id.to_vec(),
                span_id: build_id.to_vec(),
                trace_state: state.to_owned(),
                parent_span_id: parent.map(|p| p.to_vec()).unwrap_or_default(),
                name: "build".to_owned(),
                kind: SPAN_KIND_INTERNAL,
                start_time_unix_nano: start,
                end_time_unix_nano: end,
                attributes: attributes.0,
                status: None,
            };
            spans.insert(0, build);
            out.push(resource_spans(context, None, spans));
        }
    }
    (ExportTraceServiceRequest { resource_spans: out }, untimed)
}
