//! The ECS workloads on hecs (archetype tables): `spawn_batch`, `for`
//! loops over `query_mut` (and its `for_each`), a `view` for lookups, `iter_batched` under rayon for
//! `heavy_compute`, and its column serialization.

use std::any::TypeId;
use std::hint::black_box;

use hecs::serialize::column::{self, DeserializeContext, SerializeContext};
use hecs::{Archetype, ColumnBatchBuilder, ColumnBatchType, Entity, World};
use postcard::ser_flavors::Flavor as _;
use rayon::iter::{ParallelBridge, ParallelIterator};
use serde::de::SeqAccess;
use serde::ser::SerializeTuple;

use super::data::{self, Data, Position, Rotation, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, sum_lookups, DespawnFront, Peer, Prepared, SimpleWorld as _, SpawnBatch};
use crate::workloads::{Form, Rng};

/// The ECS section's workloads on hecs, on its world.
pub(super) type Hecs = World;

impl Peer for Hecs {
    /// The suite's hecs module: a `for` loop over `query_mut` (or its
    /// `for_each`).
    fn simple_iter(mut world: World, n: usize, form: Form) -> Prepared {
        Prepared::passes(n, move || {
            let query = world.query_mut::<(&mut Position, &Velocity)>();
            each(query, form, |(p, v)| {
                p.0 += v.0;
            })
        })
    }

    fn frag_iter(form: Form) -> Prepared {
        let mut world = World::new();
        crate::for_each_frag_type!(|F| world.spawn_batch(data::frag_bundles::<F>()));
        Prepared::passes(world.len() as usize, move || {
            let query = world.query_mut::<&mut Data>();
            each(query, form, |d| {
                d.0 *= 2.0;
            })
        })
    }

    fn heavy_compute(n: usize) -> Option<Prepared> {
        let world = World::simple(n);
        Some(Prepared::on_pool(n, move || {
            world
                .query::<(&mut Position, &mut Transform)>()
                .iter_batched(64)
                .par_bridge()
                .for_each(|batch| batch.for_each(|(p, t)| data::heavy(p, t)));
        }))
    }

    /// hecs has no scheduler: the same plan as handlekit-ecs's, through
    /// run-time-checked queries on the shared world.
    fn schedule(n_each: usize) -> Prepared {
        super::joined_schedule::<World>(
            n_each,
            |world| {
                world
                    .query::<(&mut SA, &mut SB)>()
                    .iter()
                    .for_each(|(a, b)| data::swap(a, b))
            },
            |world| {
                world
                    .query::<(&mut SC, &mut SD)>()
                    .iter()
                    .for_each(|(c, d)| data::swap(c, d));
                world
                    .query::<(&mut SC, &mut SE)>()
                    .iter()
                    .for_each(|(c, e)| data::swap(c, e));
            },
        )
    }

    fn add_remove(n: usize) -> Prepared {
        let (mut world, entities) = super::spawned::<World, _>((0..n).map(|i| (SA(i as f32),)));
        Prepared::once(n, move || {
            for &e in &entities {
                world.insert_one(e, SB(0.0)).expect("alive");
            }
            for &e in &entities {
                black_box(world.remove_one::<SB>(e).expect("has SB"));
            }
        })
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        super::random_gets(n, rng, |world: &mut World, lookups| {
            let view = world.view::<&Position>();
            sum_lookups(lookups, |e| view.get(e).map_or(0.0, |p| p.0.x));
        })
    }

    /// `World::get`, which takes the column's borrow for the one call.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        super::random_gets(n, rng, |world: &mut World, lookups| {
            sum_lookups(lookups, |e| {
                world.get::<&Position>(e).map_or(0.0, |p| p.0.x)
            });
        })
    }

    /// A world of `n` simple entities serialized with hecs's column format,
    /// and deserialized into a new world (postcard, or serde_json if `text`).
    fn serialize(n: usize, text: bool) -> Option<Prepared> {
        let world = World::simple(n);
        Some(Prepared::once(n, move || {
            let loaded = round_trip(&world, text);
            assert_eq!(loaded.len(), world.len());
            black_box(loaded);
        }))
    }
}

/// The component ids of the column format.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy)]
enum Id {
    Transform,
    Position,
    Rotation,
    Velocity,
}

/// hecs's column (de)serialization context for the simple entity.
#[derive(Default)]
struct Context {
    ids: Vec<Id>,
}

impl SerializeContext for Context {
    fn component_count(&self, archetype: &Archetype) -> usize {
        archetype
            .component_types()
            .filter(|&t| {
                t == TypeId::of::<Transform>()
                    || t == TypeId::of::<Position>()
                    || t == TypeId::of::<Rotation>()
                    || t == TypeId::of::<Velocity>()
            })
            .count()
    }

    fn serialize_component_ids<S: SerializeTuple>(
        &mut self,
        archetype: &Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        column::try_serialize_id::<Transform, _, _>(archetype, &Id::Transform, &mut out)?;
        column::try_serialize_id::<Position, _, _>(archetype, &Id::Position, &mut out)?;
        column::try_serialize_id::<Rotation, _, _>(archetype, &Id::Rotation, &mut out)?;
        column::try_serialize_id::<Velocity, _, _>(archetype, &Id::Velocity, &mut out)?;
        out.end()
    }

    fn serialize_components<S: SerializeTuple>(
        &mut self,
        archetype: &Archetype,
        mut out: S,
    ) -> Result<S::Ok, S::Error> {
        column::try_serialize::<Transform, _>(archetype, &mut out)?;
        column::try_serialize::<Position, _>(archetype, &mut out)?;
        column::try_serialize::<Rotation, _>(archetype, &mut out)?;
        column::try_serialize::<Velocity, _>(archetype, &mut out)?;
        out.end()
    }
}

impl DeserializeContext for Context {
    fn deserialize_component_ids<'de, A: SeqAccess<'de>>(
        &mut self,
        mut seq: A,
    ) -> Result<ColumnBatchType, A::Error> {
        self.ids.clear();
        let mut batch = ColumnBatchType::new();
        while let Some(id) = seq.next_element::<Id>()? {
            match id {
                Id::Transform => batch.add::<Transform>(),
                Id::Position => batch.add::<Position>(),
                Id::Rotation => batch.add::<Rotation>(),
                Id::Velocity => batch.add::<Velocity>(),
            };
            self.ids.push(id);
        }
        Ok(batch)
    }

    fn deserialize_components<'de, A: SeqAccess<'de>>(
        &mut self,
        entity_count: u32,
        mut seq: A,
        batch: &mut ColumnBatchBuilder,
    ) -> Result<(), A::Error> {
        for &id in &self.ids {
            match id {
                Id::Transform => {
                    column::deserialize_column::<Transform, _>(entity_count, &mut seq, batch)?
                }
                Id::Position => {
                    column::deserialize_column::<Position, _>(entity_count, &mut seq, batch)?
                }
                Id::Rotation => {
                    column::deserialize_column::<Rotation, _>(entity_count, &mut seq, batch)?
                }
                Id::Velocity => {
                    column::deserialize_column::<Velocity, _>(entity_count, &mut seq, batch)?
                }
            }
        }
        Ok(())
    }
}

/// `world` serialized with hecs's column format and deserialized into a
/// new world (postcard, or serde_json if `text`): the measured part of
/// `serialize`, also run by the `ecs_instructions` example.
pub fn round_trip(world: &World, text: bool) -> World {
    if text {
        let mut bytes = Vec::new();
        let mut serializer = serde_json::Serializer::new(&mut bytes);
        column::serialize(world, &mut Context::default(), &mut serializer).expect("serialize");
        let mut deserializer = serde_json::Deserializer::from_slice(&bytes);
        column::deserialize(&mut Context::default(), &mut deserializer).expect("deserialize")
    } else {
        let mut serializer = postcard::Serializer {
            output: postcard::ser_flavors::StdVec::new(),
        };
        column::serialize(world, &mut Context::default(), &mut serializer).expect("serialize");
        let bytes = serializer.output.finalize().expect("serialize");
        let mut deserializer = postcard::Deserializer::from_bytes(&bytes);
        column::deserialize(&mut Context::default(), &mut deserializer).expect("deserialize")
    }
}

pub(super) fn despawn_front(n: usize) -> DespawnFront {
    super::despawn_front_batch(
        n,
        Entity::DANGLING,
        |world: &mut World, e| world.despawn(e).expect("alive"),
        |world| Some(world.len() as usize),
        "despawn only (hecs has no shrink call)",
    )
}

impl<B: hecs::Bundle + 'static> SpawnBatch<B> for World {
    type Entity = Entity;

    fn batch(&mut self, bundles: impl Iterator<Item = B>) -> impl Iterator<Item = Entity> {
        self.spawn_batch(bundles)
    }
}
