use handlekit_ecs::DynamicBundleClone;

#[derive(DynamicBundleClone, Clone)]
enum Prefab {
    Tree(u8),
}

fn main() {}
