//! Derive macros of [handlekit-ecs](https://docs.rs/handlekit-ecs):
//! `#[derive(Bundle)]`, `#[derive(DynamicBundleClone)]` and
//! `#[derive(Query)]`. Use them
//! through `handlekit_ecs` (its `macros` feature, on by default), which
//! re-exports them next to the traits they implement; the generated code
//! names the crate `::handlekit_ecs`.
//!
//! ```
//! use handlekit_ecs::{Bundle, World};
//!
//! #[derive(Bundle)]
//! struct Ship {
//!     pos: [f32; 2],
//!     hull: u32,
//! }
//!
//! let mut world = World::new();
//! let e = world.spawn(Ship { pos: [0.0; 2], hull: 100 });
//! assert_eq!(*world.get::<u32>(e).unwrap(), 100);
//! ```
//!
//! The derives only forward: each method of `Bundle` hands each field to
//! the helper that every tuple's method calls per component (`put_one`,
//! `has`, `take_one`, the builder's `add`; the duplicate check over the
//! fields' `TypeId`s), and `spawn_batch` runs the batch loop of the tuple
//! of the field types with the struct split inside it, so a derived bundle
//! runs the code of the same tuple. A struct of more fields than the
//! largest tuple (12) spawns its batches one entity at a time.
//! `DynamicBundleClone` adds each field to the builder in turn. `Query`
//! implements a hidden safe trait of handlekit-ecs (the tuple of the field
//! types, or for an enum a first-match chain of its variants' tuples, and
//! a conversion of that query's item into the type), which one impl in
//! handlekit-ecs makes a `Query`: the generated code holds no `unsafe`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput, Fields, Ident, Type};

mod query;

/// The largest tuple `handlekit_ecs` implements `Bundle` for.
const MAX_FIELDS: usize = 12;

/// Implements `handlekit_ecs::Bundle` for a struct (named fields, a tuple
/// struct or a unit struct, generic or not) whose fields are components of
/// distinct types: spawning, inserting or removing the struct works on one
/// component per field. See the `Bundle` trait of handlekit-ecs.
///
/// ```
/// use handlekit_ecs::{Bundle, World};
///
/// #[derive(Bundle)]
/// struct Tagged<T: Send + Sync + 'static>(T, &'static str);
///
/// let mut world = World::new();
/// let e = world.spawn(Tagged(5u8, "five"));
/// assert_eq!(*world.get::<&str>(e).unwrap(), "five");
/// ```
#[proc_macro_derive(Bundle)]
pub fn derive_bundle(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand(input, bundle)
}

/// Implements `handlekit_ecs::DynamicBundleClone` for a struct whose fields
/// are `Clone` components, so that `EntityBuilderClone::add_bundle` takes
/// it (prefabs). See the `DynamicBundleClone` trait of handlekit-ecs.
///
/// ```
/// use handlekit_ecs::{DynamicBundleClone, EntityBuilderClone, World};
///
/// #[derive(DynamicBundleClone)]
/// struct Tree {
///     height: f32,
///     kind: String,
/// }
///
/// let mut builder = EntityBuilderClone::new();
/// builder.add_bundle(Tree { height: 3.0, kind: "oak".into() });
/// let oak = builder.build();
/// let mut world = World::new();
/// let (a, b) = (world.spawn(&oak), world.spawn(&oak));
/// assert_eq!(*world.get::<String>(a).unwrap(), *world.get::<String>(b).unwrap());
/// ```
#[proc_macro_derive(DynamicBundleClone)]
pub fn derive_dynamic_bundle_clone(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand(input, dynamic_bundle_clone)
}

/// Implements `handlekit_ecs::Query` for a struct or an enum with one
/// lifetime parameter, so that `world.query_mut::<Q>()` (and every other
/// query call) yields `Q<'_>` values: a named query in place of a tuple.
///
/// - **A struct** (named fields, a tuple struct or a unit struct) is the
///   tuple of its field types: a row matches if it matches every field's
///   query, and the item is the struct of their items. It runs the code of
///   that tuple (the same loops, the same borrows: a type named twice with
///   one `&mut` panics, as `(&mut A, &A)` does).
/// - **An enum** is a list of alternatives, one per variant (each the tuple
///   of its fields' types): a row matches if it matches a variant, and its
///   item is the **first** variant it matches (hecs's rule); a unit variant
///   matches every row. The borrows are the union of the variants' (a type
///   several variants name is borrowed once, exclusively if one writes it).
///   Its rows are visited one at a time, as [`Or`]'s.
///
/// Each field's type is a query (`&'a T`, `&'a mut T`, `Option<&'a T>`,
/// `Option<&'a mut T>`, `Entity`, `With<T>`, `Without<T>`, `Or<L, R>`, a
/// tuple of them, or another derived query `Other<'a>`) whose item, for the
/// item's lifetime in place of `'a`, is the field's type. Type parameters
/// are kept (bounded so that each field is a query). A type with no borrowed
/// field may have no lifetime.
///
/// The generated code contains no `unsafe`: it implements a hidden safe
/// trait of handlekit-ecs (the query it is made of and the conversion of
/// that query's item), and one impl in handlekit-ecs makes every such type
/// a `Query`.
///
/// [`Or`]: https://docs.rs/handlekit-ecs/latest/handlekit_ecs/enum.Or.html
///
/// ```
/// use handlekit_ecs::{Entity, Query, World};
///
/// struct Pos(f32);
/// struct Vel(f32);
/// struct Health(u32);
///
/// #[derive(Query)]
/// struct Moving<'a> {
///     entity: Entity,
///     pos: &'a mut Pos,
///     vel: &'a Vel,
///     health: Option<&'a Health>,
/// }
///
/// let mut world = World::new();
/// let ship = world.spawn((Pos(0.0), Vel(2.0), Health(3)));
/// world.spawn((Pos(5.0),)); // no Vel: not moving
///
/// for Moving { entity, pos, vel, health } in world.query_mut::<Moving>() {
///     pos.0 += vel.0;
///     assert_eq!(entity, ship);
///     assert_eq!(health.map(|h| h.0), Some(3));
/// }
/// assert_eq!(world.get::<Pos>(ship).unwrap().0, 2.0);
///
/// // An enum: the first variant an entity matches.
/// #[derive(Query)]
/// enum Shape<'a> {
///     Moving(&'a Pos, &'a Vel),
///     Still { pos: &'a Pos },
/// }
///
/// let kinds: Vec<&str> = world
///     .query_mut::<Shape>()
///     .into_iter()
///     .map(|shape| match shape {
///         Shape::Moving(..) => "moving",
///         Shape::Still { .. } => "still",
///     })
///     .collect();
/// assert_eq!(kinds, ["moving", "still"]);
/// ```
///
/// Unsupported shapes are compile errors: a union, more than one lifetime
/// parameter, a borrowed field with no lifetime parameter, a field whose
/// type is not a query.
#[proc_macro_derive(Query)]
pub fn derive_query(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand(input, query::derive)
}

/// Parses `input`, derives with `derive`, and turns an error into a compile
/// error: every derive's entry point.
fn expand(
    input: proc_macro::TokenStream,
    derive: fn(&DeriveInput) -> syn::Result<TokenStream>,
) -> proc_macro::TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    derive(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The head of a derived impl of `trait_path` for the input type: its
/// generics, its own where predicates, then `bound(ty)` for each field's
/// type in `types` (which spans it on the field, so that a field that does
/// not meet it is reported there).
fn impl_head(
    input: &DeriveInput,
    trait_path: TokenStream,
    types: &[&Type],
    bound: impl Fn(&Type) -> TokenStream,
) -> TokenStream {
    let name = &input.ident;
    let (impl_generics, type_generics, _) = input.generics.split_for_impl();
    let predicates = input.generics.where_clause.iter();
    let predicates = predicates.flat_map(|w| w.predicates.iter());
    let bounds = types.iter().map(|ty| bound(ty));
    quote! {
        #[automatically_derived]
        impl #impl_generics #trait_path for #name #type_generics
        where
            #(#predicates,)*
            #(#bounds)*
    }
}

/// The struct's fields: their types, the pattern that binds them to
/// `__handlekit_field_{i}` (`Self { a: __handlekit_field_0, .. }` or
/// `Self(__handlekit_field_0, ..)`), and those bindings; and the head of
/// the derived impl of the trait of the derive's name.
struct Destructured<'a> {
    types: Vec<&'a Type>,
    pattern: TokenStream,
    bindings: Vec<Ident>,
    head: TokenStream,
}

/// The fields of the struct `input` for `#[derive({derive})]`, whose impl
/// bounds each field's type with `bound` (see [`impl_head`]); an error for
/// an enum or a union.
fn destructure<'a>(
    input: &'a DeriveInput,
    derive: &str,
    bound: impl Fn(&Type) -> TokenStream,
) -> syn::Result<Destructured<'a>> {
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        Data::Enum(data) => {
            return Err(syn::Error::new(
                data.enum_token.span(),
                format!(
                    "`#[derive({derive})]` supports structs only: an enum's variants carry \
                     different components, so it cannot be one bundle; derive it on a struct \
                     per variant instead"
                ),
            ))
        }
        Data::Union(data) => {
            return Err(syn::Error::new(
                data.union_token.span(),
                format!(
                    "`#[derive({derive})]` supports structs only: a union holds one of its \
                     fields at a time, so it cannot be a bundle of all of them"
                ),
            ))
        }
    };
    let bindings: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__handlekit_field_{}", i, span = Span::mixed_site()))
        .collect();
    let types: Vec<&Type> = fields.iter().map(|field| &field.ty).collect();
    let trait_name = Ident::new(derive, Span::call_site());
    let head = impl_head(
        input,
        quote! { ::handlekit_ecs::#trait_name },
        &types,
        bound,
    );
    let pattern = match fields {
        Fields::Named(named) => {
            let names = named.named.iter().map(|field| &field.ident);
            quote! { Self { #(#names: #bindings),* } }
        }
        Fields::Unnamed(_) => quote! { Self(#(#bindings),*) },
        Fields::Unit => quote! { Self },
    };
    Ok(Destructured {
        types,
        pattern,
        bindings,
        head,
    })
}

fn bundle(input: &DeriveInput) -> syn::Result<TokenStream> {
    let Destructured {
        types,
        pattern,
        bindings,
        head,
    } = destructure(input, "Bundle", |ty| {
        quote_spanned! { ty.span() => #ty: ::handlekit_ecs::Component, }
    })?;
    let world = Ident::new("__handlekit_world", Span::mixed_site());
    let entity = Ident::new("__handlekit_entity", Span::mixed_site());
    let row = Ident::new("__handlekit_row", Span::mixed_site());
    let bundles = Ident::new("__handlekit_bundles", Span::mixed_site());
    let out = Ident::new("__handlekit_out", Span::mixed_site());
    let builder = Ident::new("__handlekit_builder", Span::mixed_site());
    // The batch loop of the tuple of the field types, the struct split
    // inside it; past the largest tuple, one spawn per bundle.
    let spawn_batch = if types.len() <= MAX_FIELDS {
        quote! {
            <(#(#types,)*) as ::handlekit_ecs::__private::TupleBundle>::spawn_batch_split(
                #world,
                #bundles,
                #out,
                |#pattern| (#(#bindings,)*),
            )
        }
    } else {
        quote! { ::handlekit_ecs::__private::spawn_each(#world, #bundles, #out) }
    };
    Ok(quote! {
        #head
        {
            #[inline]
            fn check_unique() {
                ::handlekit_ecs::__private::check_unique_types([#((
                    ::core::any::TypeId::of::<#types>(),
                    ::core::any::type_name::<#types>(),
                )),*])
            }

            #[inline]
            fn put(
                self,
                #world: &mut ::handlekit_ecs::World,
                #entity: ::handlekit_ecs::Entity,
                #row: usize,
            ) {
                let #pattern = self;
                #(::handlekit_ecs::__private::put_one(#world, #entity, #row, #bindings);)*
            }

            #[inline]
            fn has_all(
                #world: &::handlekit_ecs::World,
                #entity: ::handlekit_ecs::Entity,
                #row: usize,
            ) -> ::core::result::Result<(), &'static str> {
                #(::handlekit_ecs::__private::has::<#types>(#world, #entity, #row)?;)*
                ::core::result::Result::Ok(())
            }

            #[inline]
            fn take(
                #world: &mut ::handlekit_ecs::World,
                #entity: ::handlekit_ecs::Entity,
                #row: usize,
            ) -> Self {
                #(let #bindings =
                    ::handlekit_ecs::__private::take_one::<#types>(#world, #entity, #row);)*
                #pattern
            }

            #[inline]
            fn spawn_batch(
                #world: &mut ::handlekit_ecs::World,
                #bundles: impl ::core::iter::Iterator<Item = Self>,
                #out: &mut ::std::vec::Vec<::handlekit_ecs::Entity>,
            ) {
                #spawn_batch
            }

            #[inline]
            fn add_to(self, #builder: &mut ::handlekit_ecs::EntityBuilder) {
                let #pattern = self;
                #(#builder.add(#bindings);)*
            }
        }
    })
}

fn dynamic_bundle_clone(input: &DeriveInput) -> syn::Result<TokenStream> {
    // The types are only bounded.
    let Destructured {
        pattern,
        bindings,
        head,
        ..
    } = destructure(input, "DynamicBundleClone", |ty| {
        quote_spanned! { ty.span() =>
            #ty: ::handlekit_ecs::Component + ::core::clone::Clone,
        }
    })?;
    let builder = Ident::new("__handlekit_builder", Span::mixed_site());
    Ok(quote! {
        #head
        {
            #[inline]
            fn add_to_clone(self, #builder: &mut ::handlekit_ecs::EntityBuilderClone) {
                let #pattern = self;
                #(#builder.add(#bindings);)*
            }
        }
    })
}

/// The README's example, run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
