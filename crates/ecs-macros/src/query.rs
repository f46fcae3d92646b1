//! `#[derive(Query)]`: a struct is the tuple of its field types, an enum
//! the `FirstOf` chain of its variants' tuples, each with a safe conversion
//! of the tuple's (or chain's) item into the struct or enum
//! (`handlekit_ecs::__private::QueryShape`). No `unsafe` is generated: the
//! blanket impl of `Query` for every `QueryShape`, in handlekit-ecs, is the
//! only unsafe code a derived query runs.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericParam, Ident, Lifetime, Type};

/// The largest tuple `handlekit_ecs` implements `Query` for.
const MAX_TUPLE: usize = 12;

/// One alternative: the struct, or one variant of the enum.
struct Alternative<'a> {
    /// The path that builds it: `Name` or `Name::Variant`.
    path: TokenStream,
    fields: &'a Fields,
}

pub(crate) fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let lifetime = lifetime(input)?;
    let alternatives: Vec<Alternative<'_>> = match &input.data {
        Data::Struct(data) => vec![Alternative {
            path: quote! { #name },
            fields: &data.fields,
        }],
        Data::Enum(data) => {
            if data.variants.is_empty() {
                return Err(syn::Error::new(
                    name.span(),
                    "`#[derive(Query)]` on an enum needs at least one variant: each variant \
                     is an alternative, the first that an entity matches gives its item",
                ));
            }
            data.variants
                .iter()
                .map(|variant| {
                    let v = &variant.ident;
                    Alternative {
                        path: quote! { #name::#v },
                        fields: &variant.fields,
                    }
                })
                .collect()
        }
        Data::Union(data) => {
            return Err(syn::Error::new(
                data.union_token.span(),
                "`#[derive(Query)]` supports structs and enums, not unions: a union holds one \
                 of its fields at a time, and a query's item holds the item of each field",
            ))
        }
    };
    if let Some(lifetime) = lifetime {
        // Every borrow of a field is for the declared lifetime, which the
        // item's replaces: another lifetime (`'static`) could not hold it.
        for field in alternatives.iter().flat_map(|alt| alt.fields.iter()) {
            if let Some(other) = other_lifetime(field.ty.to_token_stream(), lifetime) {
                return Err(syn::Error::new_spanned(
                    other,
                    format!(
                        "`#[derive(Query)]` fields borrow for the type's lifetime `{lifetime}`, \
                         which stands for the borrow of the query's items; write `{lifetime}` here"
                    ),
                ));
            }
        }
    }
    if lifetime.is_none() {
        // Without a lifetime the item is the type itself, which only works
        // if no field borrows.
        let borrowed = alternatives
            .iter()
            .flat_map(|alt| alt.fields.iter())
            .find(|field| borrows(field.ty.to_token_stream()));
        if let Some(field) = borrowed {
            return Err(syn::Error::new_spanned(
                &field.ty,
                format!(
                    "`#[derive(Query)]` needs a lifetime parameter, the lifetime of the \
                     items' borrows: declare `{name}<'a>` and write this field's borrows with \
                     it (`&'a T`, `&'a mut T`, `Option<&'a T>`)"
                ),
            ));
        }
    }

    let item_lifetime = Lifetime::new("'__handlekit_item", Span::call_site());
    let item = Ident::new("__handlekit_item", Span::mixed_site());
    let mut shapes = Vec::new();
    let mut patterns = Vec::new();
    let mut checks = Vec::new();
    for alt in &alternatives {
        let types: Vec<&Type> = alt.fields.iter().map(|field| &field.ty).collect();
        if types.len() > MAX_TUPLE * MAX_TUPLE {
            return Err(syn::Error::new(
                alt.fields.span(),
                format!(
                    "`#[derive(Query)]` supports up to {} fields per struct or variant",
                    MAX_TUPLE * MAX_TUPLE
                ),
            ));
        }
        // A check per field, spanned on the field's type, so that a field
        // that is not a query is reported there. (Not a bound of the impl:
        // a where clause `&'a T: Query` would hide the impl that gives its
        // item type.)
        checks.extend(types.iter().map(|ty| {
            quote_spanned! { ty.span() => ::handlekit_ecs::__private::assert_query::<#ty>(); }
        }));
        let bindings: Vec<Ident> = (0..types.len())
            .map(|i| format_ident!("__handlekit_field_{}", i, span = Span::mixed_site()))
            .collect();
        let (shape, pattern) = tuple(&types, &bindings);
        let path = &alt.path;
        let values = bindings.iter().map(|b| {
            quote! { ::handlekit_ecs::__private::FromItem::from_item(#b) }
        });
        let build = match alt.fields {
            Fields::Named(named) => {
                let names = named.named.iter().map(|field| &field.ident);
                quote! { #path { #(#names: #values),* } }
            }
            Fields::Unnamed(_) => quote! { #path(#(#values),*) },
            Fields::Unit => quote! { #path },
        };
        shapes.push(shape);
        patterns.push((pattern, build));
    }

    // The variants' chain: `FirstOf<A, FirstOf<B, C>>`, and each variant's
    // pattern in it: `First(a)`, `Rest(First(b))`, `Rest(Rest(c))`.
    let first_of = quote! { ::handlekit_ecs::__private::FirstOf };
    let last = shapes.len() - 1;
    let mut shape = shapes[last].clone();
    for s in shapes[..last].iter().rev() {
        shape = quote! { #first_of<#s, #shape> };
    }
    let arms = patterns.iter().enumerate().map(|(i, (pattern, build))| {
        let mut pattern = pattern.clone();
        if i < last {
            pattern = quote! { #first_of::First(#pattern) };
        }
        for _ in 0..i {
            pattern = quote! { #first_of::Rest(#pattern) };
        }
        quote! { #pattern => #build, }
    });

    let type_generics = input.generics.split_for_impl().1;
    // No bound per field: each field is checked by `assert_query`.
    let head = crate::impl_head(
        input,
        quote! { ::handlekit_ecs::__private::QueryShape },
        &[],
        |_| TokenStream::new(),
    );
    // The type with the item's lifetime in place of the declared one.
    let item_type = match lifetime {
        Some(_) => {
            let args = input.generics.params.iter().map(|param| match param {
                GenericParam::Lifetime(_) => item_lifetime.to_token_stream(),
                GenericParam::Type(t) => t.ident.to_token_stream(),
                GenericParam::Const(c) => c.ident.to_token_stream(),
            });
            quote! { #name<#(#args),*> }
        }
        None => quote! { #name #type_generics },
    };
    Ok(quote! {
        #head
        {
            type Shape = #shape;
            type Item<#item_lifetime> = #item_type;
            #[inline(always)]
            fn from_shape<#item_lifetime>(
                #item: <Self::Shape as ::handlekit_ecs::Query>::Item<#item_lifetime>,
            ) -> Self::Item<#item_lifetime> {
                #(#checks)*
                match #item {
                    #(#arms)*
                }
            }
        }
    })
}

/// The type's one lifetime parameter, if it has one; an error at the second
/// if it has more.
fn lifetime(input: &DeriveInput) -> syn::Result<Option<&Lifetime>> {
    let mut lifetimes = input.generics.lifetimes();
    let first = lifetimes.next();
    if let Some(second) = lifetimes.next() {
        return Err(syn::Error::new(
            second.lifetime.span(),
            format!(
                "`#[derive(Query)]` takes one lifetime parameter, the lifetime of the items' \
                 borrows (`{}`); this is a second one",
                first.map_or(String::new(), |l| l.lifetime.to_string())
            ),
        ));
    }
    Ok(first.map(|l| &l.lifetime))
}

/// Whether a type's tokens hold a reference or a lifetime.
fn borrows(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Punct(p) => p.as_char() == '&' || p.as_char() == '\'',
        TokenTree::Group(g) => borrows(g.stream()),
        _ => false,
    })
}

/// The first lifetime in a type's tokens that is not `lifetime`, as its two
/// tokens (`'` and the name).
fn other_lifetime(tokens: TokenStream, lifetime: &Lifetime) -> Option<TokenStream> {
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Punct(p) if p.as_char() == '\'' => {
                if let Some(TokenTree::Ident(name)) = tokens.peek() {
                    if *name != lifetime.ident {
                        let name = name.clone();
                        return Some(quote! { #p #name });
                    }
                }
            }
            TokenTree::Group(g) => {
                if let Some(found) = other_lifetime(g.stream(), lifetime) {
                    return Some(found);
                }
            }
            _ => {}
        }
    }
    None
}

/// The tuple query of `types` and the pattern that binds its item to
/// `bindings`: one tuple up to 12, else a tuple of tuples of up to 12.
fn tuple(types: &[&Type], bindings: &[Ident]) -> (TokenStream, TokenStream) {
    if types.len() <= MAX_TUPLE {
        return (quote! { (#(#types,)*) }, quote! { (#(#bindings,)*) });
    }
    let shapes = types.chunks(MAX_TUPLE).map(|c| quote! { (#(#c,)*) });
    let patterns = bindings.chunks(MAX_TUPLE).map(|c| quote! { (#(#c,)*) });
    (quote! { (#(#shapes,)*) }, quote! { (#(#patterns,)*) })
}
