use handlekit_ecs::EntityBuilder;

fn main() {
    let mut builder = EntityBuilder::new();
    builder.add(1u8);
    let _: Option<&mut u8> = builder.get::<&mut u8>();
}
