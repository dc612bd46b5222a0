//! Generates the definition-building code of a `#[tool]` function or method.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

use super::model::{CallersKey, Concurrency, ParamKind, Receiver, Returns, ToolFn};

/// The runtime's support module, spelled out: for code outside the `const _` block.
fn p_full() -> TokenStream {
    quote!(::tools_runtime::__private)
}

/// The path generated code names the support module by. A method of `#[tools]` spells it out;
/// a free function's parts sit in a `const _: () = { use ... as __p; ... };` block (see
/// [`free`]), which keeps the expansion, and so every build of a crate of many tools, shorter.
fn p_of(tool: &ToolFn) -> TokenStream {
    match tool.receiver {
        Receiver::None => quote!(__p),
        Receiver::Ref => p_full(),
    }
}

fn opt_str(p: &TokenStream, s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(#p::Some(#s)),
        None => quote!(#p::None),
    }
}

/// The expression that builds the tool's `ToolDefinition` (a `Result`). For a method, `self`
/// (an `&Arc<Self>`) is captured by the body.
pub(crate) fn definition(tool: &ToolFn) -> (TokenStream, TokenStream) {
    let p = p_of(tool);
    let name = &tool.name.value;
    let description = tool.description.clone().unwrap_or_default();
    let ident = &tool.ident;

    // Input schema: one property per argument parameter, in order.
    let fields = tool
        .params
        .iter()
        .filter(|param| param.kind == ParamKind::Argument)
        .map(|param| {
            let ty = &param.ty;
            let name = &param.name;
            let doc = opt_str(&p, param.doc.as_deref());
            quote_spanned!(ty.span()=> __o.input_field::<#ty>(#name, #doc, false, &[]);)
        });
    let output_ty = match &tool.returns {
        Returns::Unit => quote!(()),
        Returns::Plain(ty) => quote!(#ty),
        Returns::Result(ty) => quote_spanned!(ty.span()=> <#ty as #p::ToolResult>::Ok),
    };
    let output_span = match &tool.returns {
        Returns::Unit => ident.span(),
        Returns::Plain(ty) | Returns::Result(ty) => ty.span(),
    };
    let output_schema =
        quote_spanned!(output_span=> <#output_ty as #p::ToolSchema>::output_schema());

    // A method's body: read each parameter, call the function, convert the result (a free
    // function's is `start`, below).
    let mut reads = TokenStream::new();
    let mut call_args = Vec::new();
    let method_params = match tool.receiver {
        Receiver::None => &[][..],
        Receiver::Ref => &tool.params[..],
    };
    for (i, param) in method_params.iter().enumerate() {
        let local = format_ident!("__a{}", i);
        let ty = &param.ty;
        let name = &param.name;
        reads.extend(match param.kind {
            ParamKind::Argument => {
                quote_spanned!(ty.span()=> let #local: #ty = #p::arg::<#ty>(&__args, #name)?;)
            }
            ParamKind::Context => quote_spanned!(ty.span()=>
                let #local: #ty = <#ty as #p::FromRunContext>::from_run_context(&__ctx)?;
            ),
        });
        call_args.push(local);
    }
    let call = match tool.receiver {
        Receiver::None => quote!(#ident(#(#call_args),*)),
        Receiver::Ref => quote!(__this.#ident(#(#call_args),*)),
    };
    let convert = match &tool.returns {
        Returns::Unit | Returns::Plain(_) => quote_spanned!(output_span=> #p::ok_value(&__ret)),
        Returns::Result(_) => quote_spanned!(output_span=> match __ret {
            #p::Ok(__v) => #p::ok_value(&__v),
            #p::Err(__e) => {
                #[allow(unused_imports)]
                use #p::{KeepToolError as _, ViaDisplay as _, ViaToolFailure as _};
                #p::Err((&&&#p::ErrorWrap(__e)).into_tool_error())
            }
        }),
    };
    let ret_ty = match &tool.returns {
        Returns::Unit => quote!(()),
        Returns::Plain(ty) | Returns::Result(ty) => quote!(#ty),
    };
    let args_ty = quote!(::std::sync::Arc<#p::serde_json::Value>);
    let execute = match tool.receiver {
        // A free function: `ToolParts::start` (below) reads the arguments and calls it.
        Receiver::None => TokenStream::new(),
        // A method: the future borrows the shared value, so it lives in an async block that
        // owns its `Arc`.
        Receiver::Ref => {
            let call = if tool.is_async {
                quote_spanned!(ident.span()=> #p::require_send(#call).await)
            } else {
                call
            };
            quote! {
                .execute({
                    let __this = ::std::sync::Arc::clone(self);
                    move |__args: #args_ty, __ctx: #p::ToolRunContext| {
                        let __this = ::std::sync::Arc::clone(&__this);
                        async move {
                            #reads
                            let __ret = #call;
                            #convert
                        }
                    }
                })
            }
        }
    };

    let mut output = quote!(#p::Output::json(__output));
    if let Some(render) = &tool.attrs.render {
        output = quote_spanned!(render.span()=> {
            let __render: fn(&#p::serde_json::Value, &#p::serde_json::Value) -> ::std::vec::Vec<#p::ContentBlock> = #render;
            #p::Output::new(__output, __render)
        });
    }
    if let Some(meta) = &tool.attrs.presentation_meta {
        output = quote_spanned!(meta.span()=> {
            let __meta: fn(&#p::serde_json::Value, &#p::serde_json::Value) -> #p::serde_json::Value = #meta;
            (#output).presentation_meta(__meta)
        });
    }

    let mut extra = TokenStream::new();
    if let Some(timeout) = &tool.attrs.timeout
        && let Ok(ms) = timeout.value
    {
        let ms = u64::try_from(ms).unwrap_or(u64::MAX);
        extra.extend(quote!(.timeout(#p::Duration::from_millis(#ms))));
    }
    if let Some(max_total) = &tool.attrs.max_total
        && let Ok(ms) = max_total.value
    {
        let ms = u64::try_from(ms).unwrap_or(u64::MAX);
        extra.extend(quote!(.timeout_resets_on_progress(#p::Duration::from_millis(#ms))));
    }
    if tool.attrs.long_running {
        extra.extend(quote!(.long_running()));
    }
    if let Some(concurrency) = &tool.attrs.concurrency {
        extra.extend(match &concurrency.value {
            Concurrency::Always => quote!(.concurrency_safe(#p::always_concurrency_safe)),
            Concurrency::Classifier(path) => {
                let args: Vec<_> = tool
                    .params
                    .iter()
                    .filter(|param| param.kind == ParamKind::Argument)
                    .collect();
                let types: Vec<&syn::Type> = args.iter().map(|a| &a.ty).collect();
                let locals: Vec<_> = (0..args.len()).map(|i| format_ident!("__c{}", i)).collect();
                let names: Vec<&String> = args.iter().map(|a| &a.name).collect();
                quote! {
                    .concurrency_safe(|__args: &#p::serde_json::Value| -> bool {
                        let __classify: fn(#(&#types),*) -> bool = #path;
                        #(
                            let ::core::option::Option::Some(#locals) = #p::classify_arg::<#types>(__args, #names) else {
                                return false;
                            };
                        )*
                        __classify(#(&#locals),*)
                    })
                }
            }
        });
    }
    if let Some(callers) = &tool.attrs.callers
        && let Some(key) = callers.value
    {
        let variant = match key {
            CallersKey::Any => quote!(Any),
            CallersKey::Direct => quote!(Direct),
            CallersKey::Code => quote!(Code),
        };
        extra.extend(quote!(.callers(#p::Callers::#variant)));
    }
    let hints = &tool.attrs.hints;
    if hints.any() {
        let flag = |hint: &Option<super::model::Spanned<bool>>| match hint {
            Some(h) => {
                let v = h.value;
                quote!(#p::Some(#v))
            }
            None => quote!(#p::None),
        };
        let title = match &hints.title {
            Some(t) => {
                let v = &t.value;
                quote!(#p::Some(::std::string::String::from(#v)))
            }
            None => quote!(#p::None),
        };
        let (read_only, destructive, idempotent, open_world) = (
            flag(&hints.read_only),
            flag(&hints.destructive),
            flag(&hints.idempotent),
            flag(&hints.open_world),
        );
        extra.extend(quote!(.annotations(#p::ToolAnnotations {
            title: #title,
            read_only_hint: #read_only,
            destructive_hint: #destructive,
            idempotent_hint: #idempotent,
            open_world_hint: #open_world,
        })));
    }
    if let Some(present) = &tool.attrs.present_call {
        extra.extend(quote_spanned!(present.span()=> .present_call({
            let __present: fn(&#p::serde_json::Value) -> ::core::option::Option<#p::CallView> = #present;
            __present
        })));
    }
    if let Some(present) = &tool.attrs.present_result {
        extra.extend(quote_spanned!(present.span()=> .present_result({
            let __present: fn(&#p::serde_json::Value, &#p::ResultRecord<'_>) -> ::core::option::Option<#p::ResultView> = #present;
            __present
        })));
    }
    if let Some(finalize) = &tool.attrs.finalize_content {
        extra.extend(quote_spanned!(finalize.span()=> .finalize_content({
            let __finalize: fn(&#p::ToolExecution, &#p::ToolExecutionResult) -> ::core::option::Option<::std::vec::Vec<#p::ContentBlock>> = #finalize;
            __finalize
        })));
    }

    // Starting a call: read each parameter (failing without a future), then call the
    // function. A method of `ToolParts` (see below), since none of it depends on the body.
    let mut free_reads = TokenStream::new();
    let mut locals = Vec::new();
    let mut types = Vec::new();
    for (i, param) in tool.params.iter().enumerate() {
        let local = format_ident!("__a{}", i);
        let ty = &param.ty;
        let name = &param.name;
        let read = match param.kind {
            ParamKind::Argument => quote_spanned!(ty.span()=> #p::arg::<#ty>(&__args, #name)),
            ParamKind::Context => quote_spanned!(ty.span()=>
                <#ty as #p::FromRunContext>::from_run_context(&__ctx)
            ),
        };
        free_reads.extend(quote_spanned!(ty.span()=>
            let #local: #ty = match #read {
                #p::Ok(__v) => __v,
                #p::Err(__e) => return #p::failed(__e),
            };
        ));
        locals.push(local);
        types.push(ty);
    }
    let convert_sig = quote! {
        fn convert(__ret: #ret_ty) -> #p::Result<#p::serde_json::Value, #p::ToolError>
    };
    // An async function's future is boxed by a nested `fn`, compiled beside the body (an
    // edit to the body changes the future's type), so that the methods of `ToolParts` stay
    // untouched by such edits.
    let call = if tool.is_async {
        // Spanned on the name: a future that is not `Send` is reported there.
        let start = quote_spanned! {ident.span()=>
            #p::later::convert_later(
                #ident(#(#locals),*),
                <#p::Anchor as #p::ToolParts<#ident>>::convert,
            )
        };
        quote! {
            fn __call(#(#locals: #types),*) -> #p::BoxBody {
                #start
            }
            __call(#(#locals),*)
        }
    } else {
        quote!(#p::ready(<Self as #p::ToolParts<#ident>>::convert(#ident(#(#locals),*))))
    };

    let input_schema = quote! {{
        let mut __o = #p::parameters();
        #(#fields)*
        __o.build(#p::None)
    }};
    match tool.receiver {
        // A free function: no closures (no closure types and call shims per tool). What does
        // not depend on the function's body (the schemas, the definition, reading the
        // arguments, converting the result) is written as the methods of `ToolParts<holder>`
        // implemented for the runtime's `Anchor`: rustc compiles a method with its `Self`
        // type's module, so these land outside the user's module and are reused as they are
        // when a tool body is edited. Only the nested `fn` that boxes an async function's
        // future stays beside the user's code.
        Receiver::None => {
            let items = quote! {
                #[automatically_derived]
                impl #p::ToolParts<#ident> for #p::Anchor {
                    type Ret = #ret_ty;
                    fn definition() -> #p::Result<#p::ToolDefinition, #p::DefinitionError> {
                        let __output = #output_schema;
                        #p::free_tool(
                            #name,
                            #description,
                            #input_schema,
                            #output,
                            <Self as #p::ToolParts<#ident>>::start,
                        )
                        #extra
                        .build()
                    }
                    // A `match` per argument rather than `?`: no `Try` instantiations.
                    #[allow(clippy::question_mark)]
                    fn start(__args: #args_ty, __ctx: #p::ToolRunContext) -> #p::BoxBody {
                        #free_reads
                        #call
                    }
                    #convert_sig {
                        #convert
                    }
                }
            };
            let full = p_full();
            (
                quote!(<#full::Anchor as #full::ToolParts<#ident>>::definition()),
                items,
            )
        }
        // A method's types may name `Self`, which a nested `fn` cannot: closures here.
        Receiver::Ref => (
            quote! {{
                let __input = #input_schema;
                let __output = #output_schema;
                #p::ToolDefinition::builder(#name)
                    .description(#description)
                    .input_schema(__input)
                    .output(#output)
                    #execute
                    #extra
                    .build()
            }},
            TokenStream::new(),
        ),
    }
}

/// The free-function form: the function itself plus a same-named definition holder.
pub(crate) fn free(item: &super::FnItem, tool: Option<&ToolFn>) -> TokenStream {
    let p = p_full();
    let mut item = item.clone();
    super::parse::strip_param_attrs(&mut item.sig);
    let vis = &item.vis;
    let ident = &item.sig.ident;
    let has_receiver = matches!(item.sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
    if tool.is_none() && has_receiver {
        // A method outside `#[tools]`: the error says where it belongs; a holder struct inside
        // an `impl` block would only add errors.
        return quote!(#item);
    }
    let (body, parts) = match tool {
        Some(tool) => definition(tool),
        // Errors were reported; this stub keeps uses of `ident::definition()` quiet.
        None => (quote!(::core::unreachable!()), TokenStream::new()),
    };
    let doc = format!(
        "The tool definition of the `#[tool]` function `{ident}`: call `{ident}::definition()`."
    );
    quote! {
        #item

        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code, missing_debug_implementations, missing_docs)]
        #vis struct #ident {}

        #[allow(dead_code)]
        impl #ident {
            /// Builds the tool's definition: its schemas, description, body and declarations.
            #vis fn definition() -> ::core::result::Result<#p::ToolDefinition, #p::DefinitionError> {
                #body
            }
        }

        const _: () = {
            use ::tools_runtime::__private as __p;
            #parts
        };
    }
}
