use handlekit_ecs::Query;

struct Pos(f32);

#[derive(Query)]
struct Moving<'a> {
    pos: &'a mut Pos,
    speed: f32,
}

fn main() {}
