#!/usr/bin/env python3
"""Parses an OpenMetrics exposition from stdin with prometheus_client's
OpenMetrics parser (a real consumer), adds the checks that parser leaves
out, and prints what it parsed as JSON on stdout:

    {"families": [{"name", "type", "unit", "help",
                   "samples": [{"name", "labels", "value"}]}]}

Exits 1 with the reason on stderr on any parse error or failed check; 2
when prometheus_client is not importable (the caller decides whether that
is a skip or a failure). Used by export/tests/openmetrics.rs and import/tests/history_views.rs.
"""

import json
import math
import re
import sys

try:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
except ImportError as error:  # pragma: no cover - depends on the machine
    print(f"prometheus_client is not importable: {error}", file=sys.stderr)
    sys.exit(2)

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
SUFFIX = {"counter": "_total", "info": "_info", "gauge": "", "stateset": ""}


def check(text, families):
    """What the spec asks and prometheus_client 0.16 does not check."""
    # The parser silently drops a repeated sample (same name and labels):
    # every sample line must come back.
    lines = [line for line in text.split("\n") if line and not line.startswith("#")]
    parsed = sum(len(family.samples) for family in families)
    if parsed != len(lines):
        raise ValueError(f"{len(lines)} sample lines but {parsed} samples parsed (a duplicate was dropped)")
    seen = set()
    for family in families:
        name = family.name
        if not NAME.match(name):
            raise ValueError(f"bad family name {name!r}")
        if name in seen:
            raise ValueError(f"family {name!r} twice")
        seen.add(name)
        if family.type not in SUFFIX:
            raise ValueError(f"family {name!r} has type {family.type!r}, not one stepmon writes")
        if not family.documentation:
            raise ValueError(f"family {name!r} has no HELP")
        if not family.samples:
            raise ValueError(f"family {name!r} has no samples")
        label_sets = set()
        for sample in family.samples:
            if sample.name != name + SUFFIX[family.type]:
                raise ValueError(f"sample {sample.name!r} in family {name!r} of type {family.type}")
            for label in sample.labels:
                if not LABEL.match(label) or label.startswith("__"):
                    raise ValueError(f"bad label name {label!r} in {sample.name}")
            key = tuple(sorted(sample.labels.items()))
            if key in label_sets:
                raise ValueError(f"duplicate label set in {name}: {key}")
            label_sets.add(key)
            if isinstance(sample.value, float) and not math.isfinite(sample.value):
                raise ValueError(f"non-finite value in {sample.name}: {sample.value}")
            if sample.timestamp is not None:
                raise ValueError(f"{sample.name} has a timestamp")
        if family.type == "stateset":
            groups = {}
            for sample in family.samples:
                group = tuple(sorted((k, v) for k, v in sample.labels.items() if k != name))
                groups[group] = groups.get(group, 0) + sample.value
            for group, true_states in groups.items():
                if true_states != 1:
                    raise ValueError(f"stateset {name} {group} has {true_states} true states, not 1")


def main():
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
        check(text, families)
    except Exception as error:  # noqa: BLE001 -- the parser raises ValueError, KeyError, IndexError...
        print(f"OpenMetrics parse error: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    out = {
        "families": [
            {
                "name": f.name,
                "type": f.type,
                "unit": f.unit,
                "help": f.documentation,
                # The value as Python reads it, as text: exact, whatever the
                # JSON reader on the other side does with floats.
                "samples": [{"name": s.name, "labels": s.labels, "value": repr(s.value)} for s in f.samples],
            }
            for f in families
        ]
    }
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
