use handlekit_ecs::DynamicBundleClone;

struct Unique(u32);

#[derive(DynamicBundleClone)]
struct Prefab {
    id: Unique,
    hp: u32,
}

fn main() {}
