use handlekit_ecs::Query;

struct Pos(f32);

#[derive(Query)]
struct Moving {
    pos: &'static mut Pos,
}

fn main() {}
