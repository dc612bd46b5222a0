//! `#[derive(ToolSchema)]` against serde: every shape-changing attribute, pinned with `insta`
//! and checked for agreement with what serde reads and writes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tools_runtime::ToolSchema;
use tools_runtime::schema::Validator;

/// Input and output schemas of `T`, for a snapshot.
fn both<T: ToolSchema>() -> Value {
    json!({"input": T::input_schema().to_json(), "output": T::output_schema().to_json()})
}

/// Deserializes `value` as `T`, checks it against the input schema, then checks that what serde
/// writes back satisfies the output schema.
fn round_trip<T: ToolSchema + Serialize + serde::de::DeserializeOwned>(value: Value) {
    let input = Validator::from_schema(&T::input_schema()).unwrap();
    assert!(
        input.is_valid(&value),
        "input schema rejects {value}: {:?}",
        input.validate(&value)
    );
    let typed: T = serde_json::from_value(value.clone()).unwrap();
    let written = serde_json::to_value(&typed).unwrap();
    let output = Validator::from_schema(&T::output_schema()).unwrap();
    assert!(
        output.is_valid(&written),
        "output schema rejects {written}: {:?}",
        output.validate(&written)
    );
}

/// Asserts that the input schema rejects `value` and that serde rejects it too.
fn both_reject<T: ToolSchema + serde::de::DeserializeOwned>(value: Value) {
    let input = Validator::from_schema(&T::input_schema()).unwrap();
    assert!(!input.is_valid(&value), "input schema accepts {value}");
    assert!(
        serde_json::from_value::<T>(value.clone()).is_err(),
        "serde accepts {value}"
    );
}

#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "PascalCase")]
struct Pascal {
    first_name: String,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "camelCase")]
struct Camel {
    first_name: String,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
struct Screaming {
    first_name: String,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "kebab-case")]
struct Kebab {
    first_name: String,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
struct ScreamingKebab {
    first_name: String,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "UPPERCASE")]
struct Upper {
    first_name: String,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
enum Lower {
    VeryTasty,
    Plain,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Snake {
    VeryTasty,
    Plain,
}

#[test]
fn rename_all_follows_every_serde_case() {
    let names = |v: Value| -> Vec<String> {
        v["input"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(names(both::<Pascal>()), ["FirstName"]);
    assert_eq!(names(both::<Camel>()), ["firstName"]);
    assert_eq!(names(both::<Screaming>()), ["FIRST_NAME"]);
    assert_eq!(names(both::<Kebab>()), ["first-name"]);
    assert_eq!(names(both::<ScreamingKebab>()), ["FIRST-NAME"]);
    assert_eq!(names(both::<Upper>()), ["FIRST_NAME"]);
    assert_eq!(
        both::<Lower>()["input"]["enum"],
        json!(["verytasty", "plain"])
    );
    assert_eq!(
        both::<Snake>()["input"]["enum"],
        json!(["very_tasty", "plain"])
    );
    round_trip::<Pascal>(json!({"FirstName": "a"}));
    round_trip::<Kebab>(json!({"first-name": "a"}));
    round_trip::<Snake>(json!("very_tasty"));
    both_reject::<Snake>(json!("VeryTasty"));
}

// Sides differ: names, skips and defaults.
#[allow(dead_code)] // `secret` and `cache` are only (de)serialized
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all(serialize = "camelCase", deserialize = "snake_case"))]
struct Sides {
    /// Renamed on output only.
    #[serde(rename(serialize = "Out"))]
    renamed: String,
    #[serde(alias = "nick", alias = "handle")]
    user_name: String,
    #[serde(skip_serializing)]
    secret: Option<String>,
    #[serde(skip_deserializing)]
    computed: u32,
    #[serde(skip)]
    cache: Vec<u8>,
    #[serde(default)]
    retries: u8,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    tags: Vec<String>,
    maybe: Option<bool>,
}

#[test]
fn each_side_gets_its_own_shape() {
    insta::assert_json_snapshot!("sides", both::<Sides>());
    round_trip::<Sides>(json!({"renamed": "r", "user_name": "u", "secret": "s"}));
    round_trip::<Sides>(json!({"renamed": "r", "user_name": "u", "tags": ["a"], "maybe": true}));
    // A present `Option` field holds its value: the schema offers no `null` (leave it out).
    let input = Validator::from_schema(&Sides::input_schema()).unwrap();
    assert!(!input.is_valid(&json!({"renamed": "r", "user_name": "u", "maybe": null})));
    both_reject::<Sides>(json!({"user_name": "u"}));
}

// Aliases: serde reads a field under any of its names, but under one only.
#[derive(Debug, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
struct Aliased {
    /// Required, with two aliases.
    #[serde(alias = "nick", alias = "handle")]
    user_name: String,
    /// Required, with one alias.
    #[serde(alias = "mail")]
    email: String,
    /// Optional, with an alias.
    #[serde(alias = "tel")]
    phone: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct OpenAliased {
    #[serde(alias = "n")]
    name: u8,
}

#[derive(Debug, Serialize, Deserialize, ToolSchema)]
struct WithFlattenedAliases {
    id: u8,
    #[serde(flatten)]
    inner: Option<OpenAliased>,
}

#[test]
fn aliases_are_accepted_where_serde_accepts_them() {
    insta::assert_json_snapshot!("aliased", both::<Aliased>());
    // Every name of each field, in any combination, one name per field.
    for user in ["user_name", "nick", "handle"] {
        for email in ["email", "mail"] {
            round_trip::<Aliased>(json!({user: "u", email: "e"}));
            round_trip::<Aliased>(json!({user: "u", email: "e", "phone": "1"}));
            round_trip::<Aliased>(json!({user: "u", email: "e", "tel": "1"}));
        }
    }
    // Two names of one field: serde rejects the duplicate, and so does the schema.
    both_reject::<Aliased>(json!({"user_name": "u", "nick": "u", "email": "e"}));
    both_reject::<Aliased>(json!({"handle": "u", "nick": "u", "email": "e"}));
    both_reject::<Aliased>(json!({"nick": "u", "email": "e", "mail": "e"}));
    // A missing required field under every name, an alias of the wrong type, an unknown key.
    both_reject::<Aliased>(json!({"email": "e"}));
    both_reject::<Aliased>(json!({"nick": 3, "email": "e"}));
    both_reject::<Aliased>(json!({"nick": "u", "email": "e", "other": 1}));
    // The output side writes the main names only.
    let output = Aliased::output_schema().to_json();
    assert!(output["properties"].get("nick").is_none());
    assert_eq!(output["required"], json!(["user_name", "email", "phone"]));

    // An open object: an alias of the wrong type is not an unknown key to ignore.
    round_trip::<OpenAliased>(json!({"n": 1}));
    round_trip::<OpenAliased>(json!({"name": 1, "other": true}));
    both_reject::<OpenAliased>(json!({"name": 1, "n": "x"}));
    both_reject::<OpenAliased>(json!({"name": 1, "n": 1}));
    both_reject::<OpenAliased>(json!({}));

    // Flattened and optional: the alternatives collapse, the alias stays accepted.
    round_trip::<WithFlattenedAliases>(json!({"id": 1}));
    round_trip::<WithFlattenedAliases>(json!({"id": 1, "n": 2}));
    round_trip::<WithFlattenedAliases>(json!({"id": 1, "name": 2}));
}

// Representations of enums.
#[derive(Serialize, Deserialize, ToolSchema)]
enum External {
    Unit,
    Newtype(u8),
    Struct { x: bool },
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "t")]
enum Internal {
    Unit,
    Newtype(Inner),
    Struct { x: bool },
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    Unit,
    Newtype(u8),
    Struct { x: bool },
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(untagged)]
enum Untagged {
    Flag(bool),
    Point { x: i32, y: i32 },
    Nothing,
}
#[derive(Serialize, Deserialize, ToolSchema)]
struct Inner {
    a: String,
}

#[test]
fn enum_representations() {
    insta::assert_json_snapshot!(
        "enums",
        json!({
            "external": both::<External>(),
            "internal": both::<Internal>(),
            "adjacent": both::<Adjacent>(),
            "untagged": both::<Untagged>(),
        })
    );
    for v in [
        json!("Unit"),
        json!({"Newtype": 3}),
        json!({"Struct": {"x": true}}),
    ] {
        round_trip::<External>(v);
    }
    both_reject::<External>(json!({"Newtype": 3, "Unit": null}));
    for v in [
        json!({"t": "Unit"}),
        json!({"t": "Newtype", "a": "s"}),
        json!({"t": "Struct", "x": true}),
    ] {
        round_trip::<Internal>(v);
    }
    both_reject::<Internal>(json!({"t": "Newtype"}));
    for v in [
        json!({"t": "Unit"}),
        json!({"t": "Newtype", "c": 3}),
        json!({"t": "Struct", "c": {"x": false}}),
    ] {
        round_trip::<Adjacent>(v);
    }
    for v in [json!(true), json!({"x": 1, "y": 2}), json!(null)] {
        round_trip::<Untagged>(v);
    }
    both_reject::<Untagged>(json!("text"));
}

// Containers that take another type's shape.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(transparent)]
struct Meters {
    value: f64,
}
#[derive(Serialize, Deserialize, ToolSchema)]
struct Seconds(u32);
#[derive(Clone, Serialize, Deserialize, ToolSchema)]
#[serde(from = "String", into = "String")]
struct Upcased(String);
impl From<String> for Upcased {
    fn from(s: String) -> Self {
        Upcased(s.to_uppercase())
    }
}
impl From<Upcased> for String {
    fn from(u: Upcased) -> Self {
        u.0
    }
}
#[derive(Serialize, Deserialize, ToolSchema)]
struct Marker;

#[test]
fn transparent_newtype_from_into_unit() {
    assert_eq!(
        both::<Meters>(),
        json!({"input": {"type": "number"}, "output": {"type": "number"}})
    );
    assert_eq!(
        both::<Seconds>()["input"],
        json!({"type": "integer", "minimum": 0, "maximum": 4294967295_u64})
    );
    assert_eq!(
        both::<Upcased>(),
        json!({"input": {"type": "string"}, "output": {"type": "string"}})
    );
    assert_eq!(both::<Marker>()["output"], json!({"type": "null"}));
    round_trip::<Meters>(json!(1.5));
    round_trip::<Upcased>(json!("abc"));
    round_trip::<Marker>(json!(null));
}

// Flattening.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Paging {
    offset: u32,
    #[serde(default)]
    limit: Option<u32>,
}
#[derive(Serialize, Deserialize, ToolSchema)]
struct Listing {
    folder: String,
    #[serde(flatten)]
    paging: Paging,
    #[serde(flatten)]
    filter: Filter,
}
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(tag = "by")]
enum Filter {
    Name { pattern: String },
    Size { min: u64 },
}
#[derive(Serialize, Deserialize, ToolSchema)]
struct Labels {
    id: u32,
    #[serde(flatten)]
    rest: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct MaybePaged {
    q: String,
    #[serde(flatten)]
    paging: Option<Paging>,
}

#[test]
fn flatten_merges_multiplies_and_collects() {
    insta::assert_json_snapshot!(
        "flatten",
        json!({"listing": both::<Listing>(), "labels": both::<Labels>(), "maybe_paged": both::<MaybePaged>()})
    );
    let maybe = MaybePaged::input_schema().to_json();
    assert_eq!(maybe["required"], json!(["q"]));
    assert!(maybe["properties"].get("offset").is_some());
    round_trip::<MaybePaged>(json!({"q": "x"}));
    round_trip::<MaybePaged>(json!({"q": "x", "offset": 2}));
    round_trip::<Listing>(json!({"folder": "/", "offset": 1, "by": "Name", "pattern": "*.rs"}));
    round_trip::<Listing>(json!({"folder": "/", "offset": 1, "limit": 3, "by": "Size", "min": 9}));
    round_trip::<Labels>(json!({"id": 1, "a": "x", "b": "y"}));
    both_reject::<Labels>(json!({"id": 1, "a": 2}));
}

// Closed inputs.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields, default)]
struct Strict {
    a: u8,
    b: String,
}
impl Default for Strict {
    fn default() -> Self {
        Strict {
            a: 1,
            b: String::new(),
        }
    }
}

#[test]
fn deny_unknown_fields_and_container_default() {
    let s = both::<Strict>();
    assert_eq!(s["input"]["additionalProperties"], json!(false));
    assert!(s["input"].get("required").is_none_or(|r| r == &json!([])));
    round_trip::<Strict>(json!({}));
    both_reject::<Strict>(json!({"c": 1}));
}

// Generic types carry their parameters' schemas.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Page<T> {
    items: Vec<T>,
    next: Option<String>,
}

#[test]
fn generic_types() {
    let s = both::<Page<u8>>();
    assert_eq!(
        s["input"]["properties"]["items"]["items"]["maximum"],
        json!(255)
    );
    assert_eq!(
        both::<Page<bool>>()["input"]["properties"]["items"]["items"],
        json!({"type": "boolean"})
    );
    round_trip::<Page<bool>>(json!({"items": [true]}));
}

// Documentation becomes descriptions; a field's text wins over its type's.
#[derive(Serialize, Deserialize, ToolSchema)]
struct Documented {
    /// Where to look.
    ///
    /// Relative to the workspace.
    inner: Inner,
}

#[test]
fn doc_comments_become_descriptions() {
    let s = both::<Documented>();
    assert_eq!(
        s["input"]["properties"]["inner"]["description"],
        json!("Where to look.\n\nRelative to the workspace.")
    );
}

// The doc comments of unit variants reach every schema the enum is used in, after a field's
// or a parameter's own text, and from there the SDKs and the docs.
/// How much care a change takes.
#[derive(Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "snake_case")]
enum Care {
    /// Be aware.
    Aware,
    /// Stop and look
    /// twice.
    Careful,
    Plain,
}

#[derive(Serialize, Deserialize, ToolSchema)]
struct Noticed {
    /// How careful to be.
    care: Care,
    bare: Care,
    maybe: Option<Care>,
    /// Or not at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<Care>,
}

/// Mixed: the unit variants' lines go with their alternative.
#[derive(Serialize, Deserialize, ToolSchema)]
enum Mixed {
    /// No data.
    Empty,
    /// With data.
    Full(u32),
}

const CARE_LINES: &str = "- `aware`: Be aware.\n- `careful`: Stop and look twice.";

#[test]
fn unit_variant_docs_survive_the_fields_text() {
    let s = both::<Noticed>();
    let input = &s["input"]["properties"];
    assert_eq!(
        input["care"]["description"],
        json!(format!("How careful to be.\n\n{CARE_LINES}"))
    );
    assert_eq!(
        input["bare"]["description"],
        json!(format!("How much care a change takes.\n\n{CARE_LINES}"))
    );
    assert_eq!(
        input["skipped"]["description"],
        json!(format!("Or not at all.\n\n{CARE_LINES}"))
    );
    let output = &s["output"]["properties"];
    assert_eq!(
        output["care"]["description"],
        json!(format!("How careful to be.\n\n{CARE_LINES}"))
    );
    // A nullable enum: the lines sit on the `oneOf` node, beside the field's text.
    assert_eq!(
        output["maybe"]["description"],
        json!(format!("How much care a change takes.\n\n{CARE_LINES}"))
    );
    assert_eq!(
        output["skipped"]["description"],
        json!(format!("Or not at all.\n\n{CARE_LINES}"))
    );
    let mixed = Mixed::input_schema().to_json();
    assert_eq!(
        mixed["description"],
        json!("Mixed: the unit variants' lines go with their alternative.")
    );
    assert_eq!(
        mixed["oneOf"][0],
        json!({"type": "string", "enum": ["Empty"], "description": "- `Empty`: No data."})
    );
    assert_eq!(mixed["oneOf"][1]["description"], json!("With data."));
    round_trip::<Noticed>(json!({"care": "aware", "bare": "plain"}));
}

/// A tool whose parameter is the documented enum.
#[tools_runtime::tool]
fn take_care(
    /// How careful the change must be.
    care: Care,
) -> String {
    match care {
        Care::Aware => "aware",
        Care::Careful => "careful",
        Care::Plain => "plain",
    }
    .to_owned()
}

#[test]
fn unit_variant_docs_reach_the_sdks_and_the_docs() {
    let entry = take_care::definition().unwrap().catalog_entry();
    assert_eq!(
        entry.input_schema["properties"]["care"]["description"],
        json!(format!("How careful the change must be.\n\n{CARE_LINES}"))
    );
    let catalog = tools_schema::Catalog::new(vec![entry]).unwrap();
    for (what, text) in [
        (
            "TypeScript",
            tools_codegen::render_sdk(&catalog, tools_codegen::Language::TypeScript),
        ),
        (
            "Python",
            tools_codegen::render_sdk(&catalog, tools_codegen::Language::Python),
        ),
        ("docs", tools_codegen::render_catalog_markdown(&catalog)),
    ] {
        for line in [
            "Be aware.",
            "Stop and look twice.",
            "How careful the change must be.",
        ] {
            assert!(
                text.contains(line),
                "the {what} text lacks {line:?}:\n{text}"
            );
        }
    }
}
