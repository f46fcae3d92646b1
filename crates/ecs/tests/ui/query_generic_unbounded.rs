use handlekit_ecs::Query;

#[derive(Query)]
struct Value<'a, T> {
    value: &'a T,
}

fn main() {}
