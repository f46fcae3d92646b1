#!/usr/bin/env python3
"""Prints the README's "Figures" tables and its ECS table from one run's
`report.json`.

    python3 scripts/readme_figures.py [target/handlekit-report/report.json]

Every figure is a goal row's own figure (the median of its per-repeat
ratios), so the README says what the run's goals section says; nothing
is computed here but counts. Paste the output over the tables of the
same name in README.md, with the run's commit and duration.
"""

import collections
import json
import sys

SIZES = (1000, 100000, 1000000)
WALKS = ("iter", "iter_mut", "values", "values_mut", "keys")
BODIES = ("bb", "sum")
FORMS = (("for", "`for` loops (the headline)"), ("fold", "`fold` / `for_each`"))


def short(goal):
    """A goal's text without its `(figure: ...)` or `(every ...)` note."""
    for note in (" (figure", " (every", " (seed"):
        goal = goal.split(note)[0]
    return goal


def rows_by(report):
    """(goal text, subject, cell, value type, n) -> goal row."""
    found = {}
    for goal in report["goals"]:
        for row in goal["rows"]:
            key = (goal["goal"], row["subject"], row["cell"], row["value_type"], row["n"])
            found[key] = row
    return found


def goal_named(report, prefix):
    return next(g for g in report["goals"] if g["goal"].startswith(prefix))


def triple(rows, goal, subject, cell, value_type):
    figures = []
    for n in SIZES:
        row = rows.get((goal["goal"], subject, cell, value_type, n))
        figures.append("—" if row is None else f"{row['figure']:.2f}")
    return " / ".join(figures)


def pass_tables(report, rows):
    for form, title in FORMS:
        prefix = "no holes, `for` loops" if form == "for" else "no holes, `fold` / `for_each`"
        full = goal_named(report, prefix + ": IdTable and LookupTable")
        holes = goal_named(report, "half and 95% removed, " + prefix[len("no holes, "):])
        rotating = goal_named(report, "half removed, 64 tables walked in turn, " + prefix[len("no holes, "):])
        print(
            f"**{title}**, `u64` values, N = 1k / 100k / 1M. No holes: `IdTable<Id>` ÷ "
            "SlotMap (time; below 1 is faster). Half and 95% removed: SlotMap ÷ "
            "`IdTable<Id>` (how many times faster); the last column at 1k only, "
            "over 64 half-removed tables walked in turn (the proposed goal).\n"
        )
        print("| pass | no holes | half removed | 95% removed | half removed, 64 tables in turn |")
        print("| --- | --- | --- | --- | --- |")
        for walk in WALKS:
            for body in BODIES:
                cells = [
                    triple(rows, full, "IdTable<Id>", f"{walk}.{body}.{form}.full", "u64"),
                    triple(rows, holes, "IdTable<Id>", f"{walk}.{body}.{form}.half", "u64"),
                    triple(rows, holes, "IdTable<Id>", f"{walk}.{body}.{form}.sparse", "u64"),
                    triple(rows, rotating, "IdTable<Id>", f"{walk}.{body}.{form}.rotating", "u64").split(" / ")[0],
                ]
                print(f"| `{walk}` {body} | " + " | ".join(cells) + " |")
        print()
        marker = ", `for` loops" if form == "for" else ", `fold` / `for_each`"
        summaries = []
        for goal in report["goals"]:
            text = goal["goal"]
            if marker not in text or not text.startswith(
                ("no holes", "half and 95% removed", "half removed, 64 tables")
            ):
                continue
            counts = collections.Counter(row["verdict"] for row in goal["rows"])
            name = short(text).replace(marker, "")
            summaries.append(
                f"{name} — {goal['verdict'].replace('_', ' ')}: {counts['met']} met, "
                f"{counts['within_noise']} within noise, {counts['missed']} missed of "
                f"{len(goal['rows'])}"
            )
        print(
            "Goals of this form (every walk and body, both value types): "
            + "; ".join(summaries)
            + ".\n"
        )


def operations_table(report, rows):
    """The fastest-peer rows first (labelled by workload), then the rest."""
    against_peers, others = [], []
    for goal in report["goals"]:
        text = goal["goal"]
        if text.endswith("the fastest generational peer"):
            against_peers.append((text.split(":")[0], goal))
        elif text.startswith(("get: IdTable ≤ 1.0× pulz-arena", "reinsert (insert into freed slots)")) or (
            ": Hive ≤ 1.5× IdTable" in text or ": Hive ≤ 2.5× IdTable" in text
        ):
            others.append((short(text), goal))
    print("| workload | `u64` | 64-byte values | verdict |")
    print("| --- | --- | --- | --- |")
    for label, goal in against_peers + others:
        subject = next(r["subject"] for r in goal["rows"] if r["subject"] != "IdTable<Id32>")
        cell = goal["rows"][0]["cell"]
        print(
            f"| {label} | {triple(rows, goal, subject, cell, 'u64')} | "
            f"{triple(rows, goal, subject, cell, '64B')} | {goal['verdict'].replace('_', ' ')} |"
        )


# The README's ECS table: a label, the start of its goal's text, and the
# baseline run's figures (a96e8d2, before issue 31's work), which stay.
ECS_ROWS = (
    ("`simple_iter`, `for` loops (the headline)", "ECS simple_iter, `for` loops", "1.77 / 1.97"),
    ("`simple_iter`, handlekit-ecs's `for` loop ÷ its `for_each` (goal ≤ 1.1)", "ECS simple_iter: handlekit-ecs's `for` loop", "2.17 / 2.06"),
    ("`simple_iter_each`, `for_each`", "ECS simple_iter_each, `for_each`", "1.01 / 1.20"),
    ("`simple_iter` ÷ the same loop over plain `Vec`s, `for` (goal ≤ 1.2)", "ECS simple_iter: handlekit-ecs ≤ 1.2×", "2.18 / 2.26"),
    ("`simple_iter_each` ÷ the same loop over plain `Vec`s (goal ≤ 1.2)", "ECS simple_iter_each: handlekit-ecs ≤ 1.2×", "1.03 / 0.95"),
    ("`frag_iter` (520 entities), `for` loops", "ECS frag_iter, `for` loops", "9.28"),
    ("`frag_iter`, `for` loop ÷ its `for_each`", "ECS frag_iter: handlekit-ecs's `for` loop", "7.24"),
    ("`frag_iter_each`, `for_each`", "ECS frag_iter_each, `for_each`", "1.20"),
    ("`add_remove`, `insert_one` / `remove_one`", "ECS add_remove, insert_one", "2.50 / 2.28"),
    ("`add_remove` with `ColumnMut` (goal ≤ 0.7)", "ECS add_remove, ColumnMut", "1.26 / 1.10"),
    ("`random_get`, `World::get`", "ECS random_get, World::get:", "8.87 / 5.04"),
    ("`random_get_call`, `World::get` against each peer's own per-entity call", "ECS random_get_call", "—"),
    ("`random_get`, `World::get_mut`", "ECS random_get, World::get_mut", "12.03 / 5.80"),
    ("`random_get`, `World::has`", "ECS random_get, World::has", "6.51 / 2.89"),
    ("`random_get`, a query's `get`", "ECS random_get, a query's get", "2.57 / 1.31"),
    ("`simple_insert`", "ECS simple_insert", "0.78"),
    ("`heavy_compute` (1,000 entities)", "ECS heavy_compute", "1.03"),
    ("`schedule` (40,000 entities)", "ECS schedule", "1.03"),
    ("save and load, postcard (1,000 entities, against hecs)", "ECS serialize_binary", "0.66"),
    ("save and load, JSON (1,000 entities, against hecs)", "ECS serialize_text", "0.99"),
    ("`despawn_front`: resident after collection ÷ peak", "ECS despawn_front", "0.10"),
    ("`collect(4096, ..)` at 10M rows ÷ at 100k", "ECS collect_pause", "1.03"),
)


def ecs_table(report):
    """handlekit-ecs's goal cells: median [range] per size, the verdict, the baseline."""
    print("| workload | 10k | 1M | verdict | baseline (a96e8d2) |")
    print("| --- | --- | --- | --- | --- |")
    for label, prefix, baseline in ECS_ROWS:
        goal = goal_named(report, prefix)
        cells = [
            f"{row['figure']:.2f} [{row['low']:.2f}–{row['high']:.2f}]"
            for row in sorted(goal["rows"], key=lambda row: row["n"])
        ]
        cells += [""] * (2 - len(cells))
        verdict = goal["verdict"].replace("_", " ")
        print(f"| {label} | {cells[0]} | {cells[1]} | {verdict} | {baseline} |")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "target/handlekit-report/report.json"
    report = json.load(open(path, encoding="utf-8"))
    rows = rows_by(report)
    machine = report["machine"]
    counts = collections.Counter(goal["verdict"] for goal in report["goals"])
    print(
        f"<!-- run at {machine['git_revision']}, {report['config']['repeats']} repeats, "
        f"{report['duration_s']:.0f} s; goals: {counts['met']} met, "
        f"{counts['within_noise']} within noise, {counts['missed']} missed of "
        f"{len(report['goals'])} -->\n"
    )
    pass_tables(report, rows)
    operations_table(report, rows)
    print()
    ecs_table(report)


if __name__ == "__main__":
    main()
