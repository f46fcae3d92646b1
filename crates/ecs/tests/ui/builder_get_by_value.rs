use handlekit_ecs::EntityBuilder;

fn main() {
    let mut builder = EntityBuilder::new();
    builder.add(1u8);
    let _ = builder.get::<u8>();
}
