use handlekit_ecs::Query;

struct Pos(f32);

#[derive(Query)]
struct Moving<'a> {
    pos: &'a mut Pos,
    fixed: &'static Pos,
}

fn main() {}
