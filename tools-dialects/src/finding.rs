//! What a projection reports: a [`Finding`] per change to the canonical schema, of a [`Class`].

/// What a projection did to one node of the canonical schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Written differently, same meaning (`oneOf` of disjoint alternatives as `anyOf`).
    Lossless,
    /// An annotation the dialect does not take was left out.
    AnnotationDropped,
    /// A constraint was left out: the provider accepts more than the tool does (the tool's own
    /// validation still refuses it).
    Widened,
    /// The provider accepts less than the tool does: some canonical values cannot be sent.
    Narrowed,
    /// A different shape the [`Decoder`] turns back (optional to nullable, map to pairs, ...).
    ///
    /// [`Decoder`]: crate::Decoder
    Reshaped,
    /// The dialect cannot say this; what is sent is a best effort. The [`Policy`] decides.
    ///
    /// [`Policy`]: crate::Policy
    Unrepresentable,
}

/// One change a projection made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// JSON pointer of the canonical schema node or keyword, prefixed with `#` (`#` is the
    /// root).
    pub path: String,
    /// The id of the provider rule ([`rules::RULES`](crate::rules::RULES)).
    pub rule: &'static str,
    /// What kind of change.
    pub class: Class,
    /// What was done, in words.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let class = match self.class {
            Class::Lossless => "lossless",
            Class::AnnotationDropped => "annotation-dropped",
            Class::Widened => "widened",
            Class::Narrowed => "narrowed",
            Class::Reshaped => "reshaped",
            Class::Unrepresentable => "unrepresentable",
        };
        write!(
            f,
            "{} [{class}, {}]: {}",
            self.path, self.rule, self.message
        )
    }
}
