//! The root README's ECS example is the (doc-tested) crate README's.

#[test]
fn root_readme_carries_the_crate_readme_example() {
    let ecs = include_str!("../README.md");
    let root = include_str!("../../../README.md");
    let start = ecs.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let end = start + ecs[start..].find("```\n").expect("the end of the block");
    let body = &ecs[start..end];
    let expected = format!("```rust,ignore\n{body}```");
    assert!(
        root.contains(&expected),
        "the root README's ECS block differs from crates/ecs/README.md"
    );
}
