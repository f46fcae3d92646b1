use std::rc::Rc;

use handlekit_ecs::Bundle;

#[derive(Bundle)]
struct Shared {
    count: u32,
    shared: Rc<u32>,
}

fn main() {}
