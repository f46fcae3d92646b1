use handlekit_ecs::Bundle;

#[derive(Bundle)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
