#!/usr/bin/env python3
"""Summarize one run of `cargo bench -p handlekit-bench --bench workloads`.

Reads criterion's `target/criterion/<workload>_<value>/<container>/<N>/new/`
files (the latest run of each benchmark) and prints a Markdown table: the
median time per element of IdTable<Id>, IdTable<Id32> and SlotMap, and the
ratios IdTable/SlotMap (< 1 means handlekit is faster). Criterion turns the
`/` in a group name and the `<>` in a container name into `_`.

Usage: python3 crates/bench/criterion_summary.py [target/criterion]
"""

import json
import sys
from pathlib import Path

WORKLOADS = ["insert", "remove", "get", "iter_full", "iter_half"]
CONTAINERS = ["IdTable_Id_", "IdTable_Id32_", "SlotMap"]


def median_ns(root: Path, workload: str, container: str, n: str):
    new = root / f"{workload}_u64" / container / n / "new"
    try:
        estimates = json.loads((new / "estimates.json").read_text())
    except FileNotFoundError:
        return None
    return estimates["median"]["point_estimate"]


def sizes(root: Path, workload: str):
    found = set()
    for container in CONTAINERS:
        folder = root / f"{workload}_u64" / container
        if folder.is_dir():
            found.update(p.name for p in folder.iterdir() if p.name.isdigit())
    return sorted(found, key=int)


def fmt_ns(ns: float) -> str:
    return f"{ns:.2f}" if ns >= 1 else f"{ns:.3f}"


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
    print(
        "| workload | N | IdTable<Id> ns/elem | IdTable<Id32> ns/elem "
        "| SlotMap ns/elem | Id / SlotMap | Id32 / SlotMap |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for workload in WORKLOADS:
        for n in sizes(root, workload):
            per = [median_ns(root, workload, c, n) for c in CONTAINERS]
            cells = ["—" if t is None else fmt_ns(t / int(n)) for t in per]
            ratios = []
            for t in per[:2]:
                if t is None or per[2] is None:
                    ratios.append("—")
                else:
                    ratios.append(f"{t / per[2]:.2f}")
            print(f"| {workload} | {int(n):,} | " + " | ".join(cells + ratios) + " |")


if __name__ == "__main__":
    main()
