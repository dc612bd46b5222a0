//! The typed model of a `#[derive(ToolSchema)]` input: what serde will read and write, with the
//! spans that diagnostics point at.

use proc_macro2::Span;

/// The two sides of serde: what `Deserialize` reads (tool input) and what `Serialize` writes
/// (tool output).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Side {
    Input,
    Output,
}

/// A name per side, plus the aliases `Deserialize` also accepts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Names {
    pub(crate) ser: String,
    pub(crate) de: String,
    pub(crate) aliases: Vec<String>,
}

impl Names {
    pub(crate) fn on(&self, side: Side) -> &str {
        match side {
            Side::Input => &self.de,
            Side::Output => &self.ser,
        }
    }
}

/// How an enum is written.
#[derive(Clone, Debug)]
pub(crate) enum Repr {
    /// `{"Variant": data}` or `"Variant"` (serde's default).
    External,
    /// `#[serde(tag = "t")]`: `{"t": "Variant", ...fields}`.
    Internal { tag: String },
    /// `#[serde(tag = "t", content = "c")]`: `{"t": "Variant", "c": data}`.
    Adjacent { tag: String, content: String },
    /// `#[serde(untagged)]`: the data alone.
    Untagged,
}

/// When a field is left out of serialized output.
#[derive(Clone, Debug)]
pub(crate) enum SkipIf {
    /// Always written.
    Never,
    /// `skip_serializing_if = "Option::is_none"`: left out exactly when it is `null`.
    IsNone,
    /// Any other predicate: may be left out, and when written it has the full schema.
    Custom,
}

/// One named or positional field.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub(crate) ty: syn::Type,
    pub(crate) doc: Option<String>,
    pub(crate) names: Names,
    /// `#[serde(default)]` on the field or the container: absent input is filled in.
    pub(crate) default: bool,
    pub(crate) skip_ser: bool,
    pub(crate) skip_de: bool,
    pub(crate) skip_ser_if: SkipIf,
    pub(crate) flatten: Option<Span>,
}

/// The shape of a struct or of a variant's data.
#[derive(Clone, Debug)]
pub(crate) enum Style {
    /// Named fields: a JSON object.
    Struct(Vec<Field>),
    /// One unnamed field: the field's own JSON.
    Newtype(Box<Field>),
    /// Several unnamed fields: a positional array, which the subset cannot express.
    Tuple(Span),
    /// No data.
    Unit,
}

/// One enum variant.
#[derive(Clone, Debug)]
pub(crate) struct Variant {
    pub(crate) ident: syn::Ident,
    pub(crate) doc: Option<String>,
    pub(crate) names: Names,
    pub(crate) skip_ser: bool,
    pub(crate) skip_de: bool,
    pub(crate) style: Style,
}

/// The data of the deriving type.
#[derive(Clone, Debug)]
pub(crate) enum Data {
    Struct(Style),
    Enum(Vec<Variant>),
}

/// The deriving type.
#[derive(Clone, Debug)]
pub(crate) struct Container {
    pub(crate) ident: syn::Ident,
    pub(crate) generics: syn::Generics,
    pub(crate) doc: Option<String>,
    pub(crate) deny_unknown_fields: bool,
    pub(crate) repr: Repr,
    pub(crate) transparent: Option<Span>,
    /// `#[serde(from = "T")]`: reads whatever `T` reads.
    pub(crate) from: Option<syn::Type>,
    /// `#[serde(into = "T")]`: writes whatever `T` writes.
    pub(crate) into: Option<syn::Type>,
    pub(crate) data: Data,
}
