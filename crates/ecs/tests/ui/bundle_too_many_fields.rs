use handlekit_ecs::Bundle;

#[derive(Bundle)]
struct Thirteen(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, char, bool, ());

fn main() {}
