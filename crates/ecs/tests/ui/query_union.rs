use handlekit_ecs::Query;

#[derive(Query)]
union Either<'a> {
    int: &'a u32,
    float: &'a f32,
}

fn main() {}
