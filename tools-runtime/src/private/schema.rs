//! Schema building for `#[derive(ToolSchema)]` and `#[tool]`: descriptions, enums, `oneOf`,
//! objects with serde's field rules (defaults, skips, aliases, flattening).

use tools_schema::typed::ToolSchema;
use tools_schema::{
    AdditionalProperties, Annotations, ObjectSchema, Schema, SchemaKind, StringSchema,
};

/// Names as code spans in a comma-separated list, for descriptions: `` `a`, `b` ``.
fn code_list<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The larger of two depths, usable in constants.
pub const fn max2(a: usize, b: usize) -> usize {
    if a > b { a } else { b }
}

/// The schema a derive that failed to compile stands in with; never reached at run time.
pub fn stub_schema() -> Schema {
    plain(SchemaKind::Any)
}

fn plain(kind: SchemaKind) -> Schema {
    Schema {
        kind,
        annotations: Annotations::default(),
    }
}

/// `schema` with `doc` as its description (kept as is when `doc` is `None`).
///
/// A field's text wins over its type's, except for the lines that document the variants of a
/// unit enum (see [`variant_lines`]): those stay, after `doc`, so the doc comment of a variant
/// reaches every schema the enum is used in.
pub fn describe(mut schema: Schema, doc: Option<&str>) -> Schema {
    if let Some(doc) = doc {
        let description = match kept_variant_lines(&schema) {
            Some(lines) if !doc.ends_with(lines) => format!("{doc}\n\n{lines}"),
            _ => doc.to_owned(),
        };
        schema.annotations.description = Some(description);
    }
    schema
}

/// The description of a unit enum whose variants carry doc comments: `doc` (the enum's own), a
/// blank line, then one line per documented variant, `` - `name`: text `` (the text on one
/// line). Without documented variants it is `doc`.
pub fn variant_lines(doc: Option<&str>, variants: &[(&str, &str)]) -> Option<String> {
    let lines: Vec<String> = variants
        .iter()
        .map(|(name, text)| format!("- `{name}`: {}", text.replace('\n', " ")))
        .collect();
    match (doc, lines.is_empty()) {
        (doc, true) => doc.map(str::to_owned),
        (Some(doc), false) => Some(format!("{doc}\n\n{}", lines.join("\n"))),
        (None, false) => Some(lines.join("\n")),
    }
}

/// The variant lines [`variant_lines`] wrote at the end of `schema`'s description, when
/// `schema` is a string enum (or a nullable one) and every line of the description's last
/// paragraph names one of its values.
fn kept_variant_lines(schema: &Schema) -> Option<&str> {
    let description = schema.annotations.description.as_deref()?;
    let values = match &schema.kind {
        SchemaKind::String(StringSchema {
            enum_values: Some(values),
            ..
        }) => values,
        SchemaKind::OneOf(alternatives) => alternatives.iter().find_map(|a| match &a.kind {
            SchemaKind::String(StringSchema {
                enum_values: Some(values),
                ..
            }) => Some(values),
            _ => None,
        })?,
        _ => return None,
    };
    let last = description
        .rfind("\n\n")
        .map_or(description, |at| &description[at + 2..]);
    let names_a_value = |line: &str| {
        values.iter().any(|value| {
            line.strip_prefix("- `")
                .and_then(|rest| rest.strip_prefix(value.as_str()))
                .is_some_and(|rest| rest.starts_with("`: "))
        })
    };
    (!last.is_empty() && last.lines().all(names_a_value)).then_some(last)
}

/// A string schema admitting exactly `values`.
pub fn string_enum(values: &[&str], doc: Option<&str>) -> Schema {
    let kind = SchemaKind::String(StringSchema {
        enum_values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
        ..StringSchema::default()
    });
    describe(plain(kind), doc)
}

/// The externally tagged form of a data variant: `{"<name>": data}`.
pub fn external(name: &str, data: Schema, doc: Option<&str>) -> Schema {
    let kind = SchemaKind::Object(ObjectSchema {
        properties: vec![(name.to_owned(), data)],
        required: vec![name.to_owned()],
        additional_properties: AdditionalProperties::Deny,
    });
    describe(plain(kind), doc)
}

/// Exactly one of `alternatives`. A single alternative stands alone; repeated `null`
/// alternatives (untagged unit variants) collapse into one so exact-one matching still holds.
pub fn one_of(alternatives: Vec<Schema>, doc: Option<&str>) -> Schema {
    let mut kept: Vec<Schema> = Vec::with_capacity(alternatives.len());
    for alternative in alternatives {
        let is_null = matches!(alternative.kind, SchemaKind::Null);
        if is_null && kept.iter().any(|k| matches!(k.kind, SchemaKind::Null)) {
            continue;
        }
        kept.push(alternative);
    }
    let schema = if kept.len() == 1 {
        kept.pop().unwrap_or_else(|| plain(SchemaKind::Any))
    } else {
        plain(SchemaKind::OneOf(kept))
    };
    describe(schema, doc)
}

/// When a serialized field is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipIf {
    /// Always written.
    Never,
    /// Left out exactly when it is `None`.
    IsNone,
    /// Left out when some predicate holds.
    Custom,
}

/// Removes the `null` alternative from a nullable schema.
fn strip_null(schema: Schema) -> Schema {
    let Schema { kind, annotations } = schema;
    match kind {
        SchemaKind::OneOf(alternatives)
            if alternatives
                .iter()
                .any(|a| matches!(a.kind, SchemaKind::Null)) =>
        {
            let mut rest: Vec<Schema> = alternatives
                .into_iter()
                .filter(|a| !matches!(a.kind, SchemaKind::Null))
                .collect();
            let kind = if rest.len() == 1 {
                rest.pop().map_or(SchemaKind::Any, |s| s.kind)
            } else {
                SchemaKind::OneOf(rest)
            };
            Schema { kind, annotations }
        }
        kind => Schema { kind, annotations },
    }
}

/// Builds an object schema field by field, then merges flattened schemas.
#[derive(Debug)]
pub struct ObjectBuilder {
    properties: Vec<(String, Schema)>,
    required: Vec<String>,
    deny_unknown: bool,
    flattened: Vec<Schema>,
    /// Required fields that serde also accepts under aliases: each entry lists the main name
    /// (as it stands in `required`) and then the aliases.
    alias_groups: Vec<Vec<String>>,
}

/// The most `oneOf` alternatives the required aliases of one object may expand into; beyond
/// it the aliased fields are left out of `required` and their descriptions say so.
const MAX_ALIAS_ALTERNATIVES: usize = 16;

impl ObjectBuilder {
    /// An empty object; `deny_unknown` closes it (`additionalProperties: false`).
    pub fn new(deny_unknown: bool) -> Self {
        ObjectBuilder {
            properties: Vec::new(),
            required: Vec::new(),
            deny_unknown,
            flattened: Vec::new(),
            alias_groups: Vec::new(),
        }
    }

    /// A property with an explicit schema.
    pub fn field(&mut self, name: &str, schema: Schema, required: bool, doc: Option<&str>) {
        if required {
            self.required.push(name.to_owned());
        }
        self.properties
            .push((name.to_owned(), describe(schema, doc)));
    }

    /// A field as `Deserialize` reads it: optional when it has a default or is an `Option`
    /// (then its schema is the present value's). Each alias is a property of its own with the
    /// same schema, since serde accepts the field under any of its names (but under one only:
    /// it rejects a duplicate). A required aliased field becomes "exactly one of the names"
    /// when the object is built.
    pub fn input_field<T: ToolSchema + ?Sized>(
        &mut self,
        name: &str,
        doc: Option<&str>,
        default: bool,
        aliases: &[&str],
    ) {
        // Thin generic shell, non-generic work: many tools share one body.
        let schema = if T::OPTIONAL {
            T::input_field_schema()
        } else {
            T::input_schema()
        };
        self.input_field_with(name, schema, doc, default || T::OPTIONAL, aliases);
    }

    fn input_field_with(
        &mut self,
        name: &str,
        schema: Schema,
        doc: Option<&str>,
        optional: bool,
        aliases: &[&str],
    ) {
        if aliases.is_empty() {
            self.field(name, schema, !optional, doc);
            return;
        }
        let also = code_list(aliases);
        let note = format!("Also accepted as {also}; give the value under one name only.");
        let main_doc = match doc {
            Some(doc) => format!("{doc}\n\n{note}"),
            None => note,
        };
        for alias in aliases {
            let alias_doc = match doc {
                Some(doc) => format!("{doc}\n\nAnother name for `{name}`; give only one of them."),
                None => format!("Another name for `{name}`; give only one of them."),
            };
            self.properties.push((
                (*alias).to_owned(),
                describe(schema.clone(), Some(&alias_doc)),
            ));
        }
        // The main name goes first among the properties' names, as serde documents it.
        let at = self.properties.len() - aliases.len();
        self.properties
            .insert(at, (name.to_owned(), describe(schema, Some(&main_doc))));
        if !optional {
            self.required.push(name.to_owned());
            let mut group = vec![name.to_owned()];
            group.extend(aliases.iter().map(|a| (*a).to_owned()));
            self.alias_groups.push(group);
        }
    }

    /// A field as `Serialize` writes it.
    pub fn output_field<T: ToolSchema + ?Sized>(
        &mut self,
        name: &str,
        doc: Option<&str>,
        skip: SkipIf,
    ) {
        self.output_field_with(name, T::output_schema(), doc, skip);
    }

    fn output_field_with(&mut self, name: &str, schema: Schema, doc: Option<&str>, skip: SkipIf) {
        let (schema, required) = match skip {
            SkipIf::Never => (schema, true),
            SkipIf::IsNone => (strip_null(schema), false),
            SkipIf::Custom => (schema, false),
        };
        self.field(name, schema, required, doc);
    }

    /// A tag property admitting `names[0]` (and, on input, the aliases after it).
    pub fn tag(&mut self, tag: &str, names: &[&str]) {
        let kind = match names {
            [one] => SchemaKind::String(StringSchema {
                const_value: Some((*one).to_owned()),
                ..StringSchema::default()
            }),
            many => SchemaKind::String(StringSchema {
                enum_values: Some(many.iter().map(|n| (*n).to_owned()).collect()),
                ..StringSchema::default()
            }),
        };
        self.field(tag, plain(kind), true, None);
    }

    /// Merges the properties of a `#[serde(flatten)]` field (or an internally tagged newtype
    /// variant) into this object when the schema is built.
    pub fn flatten(&mut self, schema: Schema) {
        self.flattened.push(schema);
    }

    /// The finished schema, described by `doc`.
    pub fn build(mut self, doc: Option<&str>) -> Schema {
        let alternatives: usize = self.alias_groups.iter().map(Vec::len).product();
        let groups = if alternatives > MAX_ALIAS_ALTERNATIVES {
            // Too many combinations: each aliased field is optional in the schema, and its
            // description says that one of its names is required.
            for group in &self.alias_groups {
                self.required.retain(|r| r != &group[0]);
                let names = code_list(group);
                let rule = format!("Required under exactly one of the names {names}.");
                for (prop, schema) in &mut self.properties {
                    if group.contains(prop) {
                        let text = match schema.annotations.description.take() {
                            Some(d) => format!("{d} {rule}"),
                            None => rule.clone(),
                        };
                        schema.annotations.description = Some(text);
                    }
                }
            }
            Vec::new()
        } else {
            std::mem::take(&mut self.alias_groups)
        };
        let base = ObjectSchema {
            properties: self.properties,
            required: self.required,
            additional_properties: if self.deny_unknown {
                AdditionalProperties::Deny
            } else {
                AdditionalProperties::Allow
            },
        };
        let mut objects = vec![base];
        // A required aliased field: one alternative per name, each requiring that name in the
        // main name's place. Every alternative lists all the names, so giving two of them
        // matches two alternatives and fails `oneOf`, as serde rejects the duplicate.
        for group in groups {
            let mut next = Vec::with_capacity(objects.len() * group.len());
            for object in &objects {
                for chosen in &group {
                    let mut alternative = object.clone();
                    for required in &mut alternative.required {
                        if *required == group[0] {
                            required.clone_from(chosen);
                        }
                    }
                    next.push(alternative);
                }
            }
            objects = next;
        }
        for flat in self.flattened {
            objects = merge_flattened(objects, flat);
        }
        let schema = if objects.len() == 1 {
            objects
                .pop()
                .map_or_else(|| plain(SchemaKind::Any), |o| plain(SchemaKind::Object(o)))
        } else {
            plain(SchemaKind::OneOf(
                objects
                    .into_iter()
                    .map(|o| plain(SchemaKind::Object(o)))
                    .collect(),
            ))
        };
        describe(schema, doc)
    }
}

/// Merges one flattened schema into every object of `objects`. A flattened `oneOf` of objects
/// (a flattened enum) multiplies the alternatives; a flattened map gives the leftover keys its
/// value schema; anything else leaves the object open.
fn merge_flattened(objects: Vec<ObjectSchema>, flat: Schema) -> Vec<ObjectSchema> {
    // A flattened `Option<T>`: `T`'s fields, none of them required.
    let optional = matches!(&flat.kind, SchemaKind::OneOf(alts)
        if alts.iter().any(|a| matches!(a.kind, SchemaKind::Null)));
    let flat = if optional { strip_null(flat) } else { flat };
    let mut alternatives: Vec<ObjectSchema> = match flat.kind {
        SchemaKind::Object(o) => vec![o],
        SchemaKind::OneOf(alts) if alts.iter().all(|a| matches!(a.kind, SchemaKind::Object(_))) => {
            alts.into_iter()
                .filter_map(|a| match a.kind {
                    SchemaKind::Object(o) => Some(o),
                    _ => None,
                })
                .collect()
        }
        SchemaKind::Null => return objects,
        _ => vec![ObjectSchema {
            properties: Vec::new(),
            required: Vec::new(),
            additional_properties: AdditionalProperties::Allow,
        }],
    };
    if optional {
        for alt in &mut alternatives {
            alt.required.clear();
        }
        // Alternatives that differed only in what they required are now the same; one of each
        // keeps `oneOf` satisfiable.
        let mut kept: Vec<ObjectSchema> = Vec::with_capacity(alternatives.len());
        for alt in alternatives {
            if !kept.contains(&alt) {
                kept.push(alt);
            }
        }
        alternatives = kept;
    }
    let mut out = Vec::with_capacity(objects.len() * alternatives.len());
    for object in &objects {
        for alt in &alternatives {
            let mut merged = object.clone();
            merged.properties.extend(alt.properties.iter().cloned());
            merged.required.extend(alt.required.iter().cloned());
            match &alt.additional_properties {
                AdditionalProperties::Schema(s) => {
                    merged.additional_properties = AdditionalProperties::Schema(s.clone());
                }
                AdditionalProperties::Allow
                    if alt.properties.is_empty()
                        && !matches!(
                            merged.additional_properties,
                            AdditionalProperties::Schema(_)
                        ) =>
                {
                    merged.additional_properties = AdditionalProperties::Allow;
                }
                _ => {}
            }
            out.push(merged);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tools_schema::BooleanSchema;

    fn boolean() -> Schema {
        plain(SchemaKind::Boolean(BooleanSchema::default()))
    }
    #[test]
    fn max2_picks_the_larger() {
        assert_eq!(max2(0, 0), 0);
        assert_eq!(max2(1, 4), 4);
        assert_eq!(max2(4, 1), 4);
    }

    #[test]
    fn one_of_collapses_nulls_and_singletons() {
        let s = one_of(vec![plain(SchemaKind::Null), plain(SchemaKind::Null)], None);
        assert!(matches!(s.kind, SchemaKind::Null));
        let s = one_of(vec![boolean(), plain(SchemaKind::Null)], Some("d"));
        assert!(matches!(s.kind, SchemaKind::OneOf(ref a) if a.len() == 2));
        assert_eq!(s.annotations.description.as_deref(), Some("d"));
    }

    #[test]
    fn flattening_a_oneof_multiplies_alternatives() {
        let mut inner_a = ObjectBuilder::new(false);
        inner_a.tag("kind", &["a"]);
        let mut inner_b = ObjectBuilder::new(false);
        inner_b.tag("kind", &["b"]);
        let flat = plain(SchemaKind::OneOf(vec![
            inner_a.build(None),
            inner_b.build(None),
        ]));
        let mut outer = ObjectBuilder::new(false);
        outer.field("id", boolean(), true, None);
        outer.flatten(flat);
        let s = outer.build(None);
        let SchemaKind::OneOf(alts) = s.kind else {
            panic!("expected oneOf")
        };
        assert_eq!(alts.len(), 2);
        for alt in alts {
            let SchemaKind::Object(o) = alt.kind else {
                panic!("expected object")
            };
            assert_eq!(o.required, vec!["id".to_owned(), "kind".to_owned()]);
        }
    }

    #[test]
    fn required_aliases_beyond_the_limit_are_relaxed_and_described() {
        let mut o = ObjectBuilder::new(true);
        for i in 0..5 {
            let name = format!("f{i}");
            let alias = format!("a{i}");
            o.input_field::<bool>(&name, None, false, &[alias.as_str()]);
        }
        o.input_field::<bool>("plain", None, false, &[]);
        // 2^5 = 32 alternatives is past the limit: one object, only `plain` required.
        let SchemaKind::Object(obj) = o.build(None).kind else {
            panic!("expected one object")
        };
        assert_eq!(obj.required, vec!["plain".to_owned()]);
        assert_eq!(obj.properties.len(), 11);
        let described = obj.properties[0].1.annotations.description.as_deref();
        assert!(
            described
                .is_some_and(|d| d.contains("Required under exactly one of the names `f0`, `a0`")),
            "{described:?}"
        );
    }

    #[test]
    fn required_aliases_within_the_limit_become_alternatives() {
        let mut o = ObjectBuilder::new(false);
        o.input_field::<bool>("x", None, false, &["y", "z"]);
        o.input_field::<bool>("w", None, true, &["v"]);
        let SchemaKind::OneOf(alts) = o.build(None).kind else {
            panic!("expected oneOf")
        };
        let required: Vec<Vec<String>> = alts
            .iter()
            .map(|a| match &a.kind {
                SchemaKind::Object(o) => o.required.clone(),
                _ => panic!("expected objects"),
            })
            .collect();
        assert_eq!(required, vec![vec!["x"], vec!["y"], vec!["z"]]);
    }

    #[test]
    fn a_flattened_map_takes_the_leftover_keys() {
        let mut outer = ObjectBuilder::new(false);
        outer.field("id", boolean(), true, None);
        outer.flatten(<std::collections::HashMap<String, bool>>::output_schema());
        let SchemaKind::Object(o) = outer.build(None).kind else {
            panic!("expected object")
        };
        assert!(matches!(
            o.additional_properties,
            AdditionalProperties::Schema(_)
        ));
    }
}
