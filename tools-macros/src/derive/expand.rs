//! Turns a validated [`Container`] into the `ToolSchema` implementation.
//!
//! The generated code calls small builders in `::tools_runtime::__private` instead of spelling
//! out schemas, which keeps the expansion short and cheap to compile.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{Container, Data, Field, Repr, Side, SkipIf, Style, Variant};

/// The support module, as the `use` at the top of the expansion's `const _` block names it
/// (see [`expand`]): a short path keeps the expansion, and every build, smaller.
fn p() -> TokenStream {
    quote!(__p)
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(__p::Some(#s)),
        None => quote!(__p::None),
    }
}

fn schema_fn(side: Side) -> syn::Ident {
    match side {
        Side::Input => format_ident!("input_schema"),
        Side::Output => format_ident!("output_schema"),
    }
}

/// The schema expression of one type on one side, spanned on the type so a missing
/// `ToolSchema` points at it.
fn type_schema(ty: &syn::Type, side: Side) -> TokenStream {
    let p = p();
    let f = schema_fn(side);
    quote_spanned!(ty.span()=> <#ty as #p::ToolSchema>::#f())
}

/// Statements adding `fields` to the builder `__o`.
fn add_fields(fields: &[Field], side: Side) -> TokenStream {
    let p = p();
    let mut out = TokenStream::new();
    for f in fields {
        let skipped = match side {
            Side::Input => f.skip_de,
            Side::Output => f.skip_ser,
        };
        if skipped {
            continue;
        }
        let ty = &f.ty;
        if f.flatten.is_some() {
            let schema = type_schema(ty, side);
            out.extend(quote!(__o.flatten(#schema);));
            continue;
        }
        let name = f.names.on(side);
        let doc = opt_str(f.doc.as_deref());
        out.extend(match side {
            Side::Input => {
                let default = f.default;
                let aliases = &f.names.aliases;
                quote_spanned!(ty.span()=> __o.input_field::<#ty>(#name, #doc, #default, &[#(#aliases),*]);)
            }
            Side::Output => {
                let skip = match f.skip_ser_if {
                    SkipIf::Never => quote!(#p::SkipIf::Never),
                    SkipIf::IsNone => quote!(#p::SkipIf::IsNone),
                    SkipIf::Custom => quote!(#p::SkipIf::Custom),
                };
                quote_spanned!(ty.span()=> __o.output_field::<#ty>(#name, #doc, #skip);)
            }
        });
    }
    out
}

/// An object schema of named fields, plus optional leading statements (a tag).
fn object(
    fields: &[Field],
    side: Side,
    deny: bool,
    head: TokenStream,
    doc: Option<&str>,
) -> TokenStream {
    let p = p();
    let deny = side == Side::Output || deny;
    let add = add_fields(fields, side);
    let doc = opt_str(doc);
    quote!({
        let mut __o = #p::ObjectBuilder::new(#deny);
        #head
        #add
        __o.build(#doc)
    })
}

fn describe(schema: TokenStream, doc: Option<&str>) -> TokenStream {
    let p = p();
    let doc = opt_str(doc);
    quote!(#p::describe(#schema, #doc))
}

fn struct_body(c: &Container, style: &Style, side: Side) -> TokenStream {
    let doc = c.doc.as_deref();
    if c.transparent.is_some() {
        let field = match style {
            Style::Struct(fields) => fields.iter().find(|f| !(f.skip_ser && f.skip_de)),
            Style::Newtype(f) => Some(&**f),
            _ => None,
        };
        if let Some(f) = field {
            return describe(type_schema(&f.ty, side), doc.or(f.doc.as_deref()));
        }
    }
    match style {
        Style::Struct(fields) => object(fields, side, c.deny_unknown_fields, quote!(), doc),
        Style::Newtype(f) => describe(type_schema(&f.ty, side), doc.or(f.doc.as_deref())),
        Style::Unit | Style::Tuple(_) => describe(type_schema(&syn::parse_quote!(()), side), doc),
    }
}

fn variant_names(v: &Variant, side: Side) -> Vec<String> {
    let mut names = vec![v.names.on(side).to_owned()];
    if side == Side::Input {
        names.extend(v.names.aliases.iter().cloned());
    }
    names
}

fn enum_body(c: &Container, variants: &[Variant], side: Side) -> TokenStream {
    let p = p();
    let live: Vec<&Variant> = variants
        .iter()
        .filter(|v| match side {
            Side::Input => !v.skip_de,
            Side::Output => !v.skip_ser,
        })
        .collect();
    let doc = c.doc.as_deref();
    let mut alternatives = Vec::new();
    match &c.repr {
        Repr::External => {
            let units: Vec<&&Variant> = live
                .iter()
                .filter(|v| matches!(v.style, Style::Unit))
                .collect();
            if !units.is_empty() {
                let names: Vec<String> =
                    units.iter().flat_map(|v| variant_names(v, side)).collect();
                let documented: Vec<TokenStream> = units
                    .iter()
                    .filter_map(|v| {
                        let name = v.names.on(side);
                        v.doc.as_deref().map(|d| quote!((#name, #d)))
                    })
                    .collect();
                // The container's text describes the enum only when every variant is a unit.
                let container_doc = opt_str(if units.len() == live.len() { doc } else { None });
                let unit_doc =
                    quote!(#p::variant_lines(#container_doc, &[#(#documented),*]).as_deref());
                let schema = quote!(#p::string_enum(&[#(#names),*], #unit_doc));
                if units.len() == live.len() {
                    return schema;
                }
                alternatives.push(schema);
            }
            for v in live.iter().filter(|v| !matches!(v.style, Style::Unit)) {
                let data = match &v.style {
                    Style::Struct(fields) => {
                        object(fields, side, c.deny_unknown_fields, quote!(), None)
                    }
                    Style::Newtype(f) => type_schema(&f.ty, side),
                    _ => continue,
                };
                let name = v.names.on(side);
                let vdoc = opt_str(v.doc.as_deref());
                alternatives.push(quote!(#p::external(#name, #data, #vdoc)));
            }
        }
        Repr::Internal { tag } => {
            for v in &live {
                let names = variant_names(v, side);
                let head = quote!(__o.tag(#tag, &[#(#names),*]););
                let vdoc = v.doc.as_deref();
                alternatives.push(match &v.style {
                    Style::Struct(fields) => {
                        object(fields, side, c.deny_unknown_fields, head, vdoc)
                    }
                    Style::Newtype(f) => {
                        let inner = type_schema(&f.ty, side);
                        object(
                            &[],
                            side,
                            c.deny_unknown_fields,
                            quote!(#head __o.flatten(#inner);),
                            vdoc,
                        )
                    }
                    _ => object(&[], side, c.deny_unknown_fields, head, vdoc),
                });
            }
        }
        Repr::Adjacent { tag, content } => {
            for v in &live {
                let names = variant_names(v, side);
                let mut head = quote!(__o.tag(#tag, &[#(#names),*]););
                let data = match &v.style {
                    Style::Struct(fields) => {
                        Some(object(fields, side, c.deny_unknown_fields, quote!(), None))
                    }
                    Style::Newtype(f) => Some(type_schema(&f.ty, side)),
                    _ => None,
                };
                if let Some(data) = data {
                    head.extend(quote!(__o.field(#content, #data, true, __p::None);));
                }
                alternatives.push(object(
                    &[],
                    side,
                    c.deny_unknown_fields,
                    head,
                    v.doc.as_deref(),
                ));
            }
        }
        Repr::Untagged => {
            for v in &live {
                let vdoc = v.doc.as_deref();
                alternatives.push(match &v.style {
                    Style::Struct(fields) => {
                        object(fields, side, c.deny_unknown_fields, quote!(), vdoc)
                    }
                    Style::Newtype(f) => describe(type_schema(&f.ty, side), vdoc),
                    _ => describe(type_schema(&syn::parse_quote!(()), side), vdoc),
                });
            }
        }
    }
    let doc = opt_str(doc);
    quote!(#p::one_of(::std::vec![#(#alternatives),*], #doc))
}

fn body(c: &Container, side: Side) -> TokenStream {
    let convert = match side {
        Side::Input => &c.from,
        Side::Output => &c.into,
    };
    if let Some(ty) = convert {
        return describe(type_schema(ty, side), c.doc.as_deref());
    }
    match &c.data {
        Data::Struct(style) => struct_body(c, style, side),
        Data::Enum(variants) => enum_body(c, variants, side),
    }
}

/// Every field type, for the nesting depth.
fn field_types(c: &Container) -> Vec<&syn::Type> {
    fn of(style: &Style) -> Vec<&syn::Type> {
        match style {
            Style::Struct(fields) => fields.iter().map(|f| &f.ty).collect(),
            Style::Newtype(f) => vec![&f.ty],
            _ => Vec::new(),
        }
    }
    match &c.data {
        Data::Struct(style) => of(style),
        Data::Enum(variants) => variants.iter().flat_map(|v| of(&v.style)).collect(),
    }
}

/// The hidden `ToolSchema` constant holding a type's nesting depth. A type that contains
/// itself through other derived types makes its evaluation a cycle, and rustc's cycle error
/// names the constant: the name is the only part of that error we choose, so it says what is
/// wrong and what to write instead.
const DEPTH_CONST: &str =
    "NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE";

/// Whether a field type (or a `from`/`into` type) names `Self`, which a nested `fn` cannot.
fn mentions_self(c: &Container) -> bool {
    fn has_self(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == "Self",
            proc_macro2::TokenTree::Group(g) => has_self(g.stream()),
            _ => false,
        })
    }
    field_types(c)
        .into_iter()
        .chain(c.from.iter())
        .chain(c.into.iter())
        .any(|ty| has_self(quote!(#ty)))
}

/// The `ToolSchema` implementation of a valid container.
pub(crate) fn expand(c: &Container) -> TokenStream {
    let p = p();
    let ident = &c.ident;
    let mut generics = c.generics.clone();
    let is_generic = generics.type_params().next().is_some();
    let type_params: Vec<syn::Ident> = generics.type_params().map(|t| t.ident.clone()).collect();
    {
        let where_clause = generics.make_where_clause();
        for t in &type_params {
            where_clause
                .predicates
                .push(syn::parse_quote!(#t: #p::ToolSchema));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let input = body(c, Side::Input);
    let output = body(c, Side::Output);
    // Without type parameters, lifetimes or `Self` in the fields, the builders are methods of
    // `DerivedSchemas<Type>` implemented for the runtime's `Anchor`: rustc compiles a method
    // with its `Self` type's module, apart from the user's code, so editing a tool body
    // elsewhere in the module leaves them to be reused as they are; and no closure (no closure
    // type and call shim per schema).
    let anchored = !is_generic && !mentions_self(c) && c.generics.params.is_empty();
    let (input, output, builders) = if !anchored {
        (input, output, quote!())
    } else {
        // A type whose two schemas are the same (a unit-only enum, for one) writes the builder
        // once: `DerivedSchemas::output` defaults to `input`.
        let output_fn = if input.to_string() == output.to_string() {
            quote!()
        } else {
            quote!(fn output() -> #p::Schema { #output })
        };
        (
            quote!(<#p::Anchor as #p::DerivedSchemas<#ident>>::input()),
            quote!(<#p::Anchor as #p::DerivedSchemas<#ident>>::output()),
            quote! {
                #[automatically_derived]
                impl #p::DerivedSchemas<#ident> for #p::Anchor {
                    fn input() -> #p::Schema { #input }
                    #output_fn
                }
            },
        )
    };
    let depth = format_ident!("{}", DEPTH_CONST);
    // max(a, max(b, ... 0)): plain calls, so a cycle report stays short.
    let nesting = field_types(c).into_iter().rev().fold(
        quote!(0),
        |acc, ty| quote_spanned!(ty.span()=> #p::max2(<#ty as #p::ToolSchema>::#depth, #acc)),
    );
    // Evaluating the depth at compile time (a constant is evaluated whether used or not)
    // turns a type that reaches itself through other types into a compile error: a cycle in
    // constant evaluation.
    let check = if is_generic || c.generics.lifetimes().next().is_some() {
        quote!()
    } else {
        quote!(const _: usize = <#ident as #p::ToolSchema>::#depth;)
    };
    quote! {
        const _: () = {
            use ::tools_runtime::__private as __p;
            #builders
            #[automatically_derived]
            impl #impl_generics #p::ToolSchema for #ident #ty_generics #where_clause {
                fn input_schema() -> #p::Schema { #input }
                fn output_schema() -> #p::Schema { #output }
                const #depth: usize = 1 + #nesting;
            }
            #check
        };
    }
}

/// What is emitted when the input has errors: an implementation with no schema, so uses of the
/// type report nothing further.
pub(crate) fn stub(input: &syn::DeriveInput) -> TokenStream {
    let p = quote!(::tools_runtime::__private);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #p::ToolSchema for #ident #ty_generics #where_clause {
            fn input_schema() -> #p::Schema { #p::stub_schema() }
            fn output_schema() -> #p::Schema { #p::stub_schema() }
        }
    }
}
