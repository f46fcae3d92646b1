use handlekit_ecs::Bundle;

#[derive(Bundle)]
enum Shape {
    Circle(f32),
    Square(u32),
}

fn main() {}
