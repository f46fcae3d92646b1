#!/usr/bin/env python3
"""Checks that plain `cargo test` builds the library crates' tests with every
feature they declare.

`cargo test` at the workspace root selects every member, and cargo (resolver
2) unifies a package's features over everything it builds: the runner
(`crates/bench`) depends on `handlekit-ecs` with `serde` and `rayon`, which
turn the same features of `handlekit` on. So the one `cargo test` the README
names runs the serde round trips and the rayon splits too, and CI needs no
`--all-features` run of its own. If a dependency line changes and a feature
drops out of that set, its tests would stop running without a sound; this
check fails instead, naming the features left out.

Run from the repository root after `cargo test` (everything is fresh then, so
it takes a second or two):

    python3 scripts/check_test_features.py
"""

import json
import subprocess
import sys

CRATES = ["handlekit", "handlekit-ecs"]


def main() -> int:
    metadata = json.loads(
        subprocess.check_output(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"]
        )
    )
    declared = {
        package["name"]: set(package["features"]) - {"default"}
        for package in metadata["packages"]
        if package["name"] in CRATES
    }
    crate_of_manifest = {
        package["manifest_path"]: package["name"]
        for package in metadata["packages"]
        if package["name"] in CRATES
    }
    build = subprocess.run(
        ["cargo", "test", "--no-run", "--message-format=json"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    # The library as its own unit tests build it (profile.test): the
    # build the integration tests link is the same feature set.
    tested = {}
    for line in build.stdout.splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact":
            continue
        package = crate_of_manifest.get(message["manifest_path"])
        if (
            package is None
            or "lib" not in message["target"]["kind"]
            or not message["profile"]["test"]
        ):
            continue
        tested[package] = set(message["features"])
    failed = False
    for crate in CRATES:
        if crate not in tested:
            print(f"{crate}: cargo test built no unit tests of this crate")
            failed = True
            continue
        missing = sorted(declared[crate] - tested[crate])
        if missing:
            print(f"{crate}: cargo test leaves out the features {', '.join(missing)}")
            failed = True
        else:
            print(f"{crate}: cargo test builds its tests with every feature "
                  f"({', '.join(sorted(tested[crate]))})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
