use handlekit_ecs::Query;

struct Pos(f32);
struct Vel(f32);

#[derive(Query)]
struct Moving<'a, 'b> {
    pos: &'a mut Pos,
    vel: &'b Vel,
}

fn main() {}
