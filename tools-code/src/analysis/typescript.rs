//! The pre-run analysis of a TypeScript program with swc (see [the module above](super)).
//!
//! The program is read from the tree the run's own check parses: its types stripped, wrapped
//! as the runtime wraps it (the body of an async arrow function on its first line), parsed as
//! JavaScript and checked to be that function's whole body. The stripped text is kept for the
//! run (`code::prepared`), so a program is stripped and parsed once for both. The
//! tree is read in two passes:
//! the first counts every binding of and assignment to each name and notes declarations of the
//! form `const a = b`; the second finds the uses of `tools` and `callTool` and of the aliases
//! the first pass proved (declared once, from `tools`, `callTool` or another alias, never
//! written again). Names are compared without scopes: a name bound anywhere in the program is
//! treated as bound everywhere, which can only make the set open, never wrongly closed.

use rustc_hash::{FxHashMap, FxHashSet};
use swc_atoms::Atom;
use swc_common::BytePos;
use swc_ecma_ast::{
    ArrayLit, CallExpr, Callee, ClassDecl, ClassExpr, Expr, ExprOrSpread, FnDecl, FnExpr, Lit,
    MemberExpr, MemberProp, ObjectLit, Pat, Prop, PropName, PropOrSpread, UnaryOp, UpdateExpr,
    VarDeclarator, WithStmt,
};
use swc_ecma_visit::{Visit, VisitWith};

use super::{Literal, MAX_ANALYSIS_NESTING, ProgramAnalysis, ToolUse};
use crate::typescript::strip::{PREFIX, StripError, strip_and_parse, strip_program};
use crate::{CodeFailure, CodeFailureKind, CodeLanguage, PreparedProgram};

/// The global object that binds every tool as a member.
const TOOLS: &str = "tools";
/// The global function that calls a tool by name.
const CALL_TOOL: &str = "callTool";
/// Names that reach the global object or make code from text: any reference opens the set.
const ESCAPES: &[&str] = &["globalThis", "eval", "Function"];

/// Analyses `program`: `None` when it is not analysed (nested too deep for the caller's stack,
/// or a parse the run would accept), the run's own syntax failure when it does not parse.
pub(crate) fn analyse(program: &str) -> Option<Result<ProgramAnalysis, CodeFailure>> {
    // The parse the run's own check makes (types stripped, the wrapper checked), made once: the
    // run takes the stripped text instead of stripping the program again.
    let (js, script) = match strip_and_parse(program, MAX_ANALYSIS_NESTING) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => return None,
        Err(error) => return Some(Err(failure_of(error))),
    };
    let mut writes = Writes::default();
    script.visit_with(&mut writes);
    let (tools_root, call_tool_root) = (Atom::from(TOOLS), Atom::from(CALL_TOOL));
    let tools = writes.aliases_of(&tools_root);
    let call_tool = writes.aliases_of(&call_tool_root);
    let mut uses = Uses {
        tools: &tools,
        call_tool: &call_tool,
        found: Vec::new(),
        open: writes.count(&tools_root) > 0 || writes.count(&call_tool_root) > 0,
        lines: Lines::new(program),
    };
    script.visit_with(&mut uses);
    Some(Ok(ProgramAnalysis {
        uses: uses.found,
        open: uses.open,
        prepared: Some(PreparedProgram {
            language: CodeLanguage::TypeScript,
            work: js,
        }),
    }))
}

/// The parse [`analyse`] starts with (the run's own: types stripped, the wrapper checked),
/// alone; whether it gave a tree.
pub(crate) fn parse_only(program: &str) -> bool {
    matches!(strip_and_parse(program, MAX_ANALYSIS_NESTING), Ok(Some(_)))
}

/// The syntax failure the run reports for `program`, if it reports one.
pub(crate) fn syntax_failure(program: &str) -> Option<CodeFailure> {
    strip_program(program).err().map(failure_of)
}

/// The run's syntax failure for a program the stripper refused.
fn failure_of(error: StripError) -> CodeFailure {
    CodeFailure::new(CodeFailureKind::Syntax, error.message, Vec::new())
        .at(error.line, error.column)
}

/// Pass one: how often each name is bound or assigned, and the `const a = b` declarations.
///
/// Names are swc's interned atoms (a clone is a reference count, a hash is stored), in
/// tables hashed with rustc-hash: the walk visits every name of the program.
#[derive(Default)]
struct Writes {
    counts: FxHashMap<Atom, u32>,
    /// (declared name, the name it was initialised from).
    candidates: Vec<(Atom, Atom)>,
}

impl Writes {
    fn count(&self, name: &Atom) -> u32 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    fn write(&mut self, name: &Atom) {
        *self.counts.entry(name.clone()).or_insert(0) += 1;
    }

    /// `root` (when never written) and every alias proved to hold it.
    fn aliases_of(&self, root: &Atom) -> FxHashSet<Atom> {
        let mut set = FxHashSet::default();
        if self.count(root) > 0 {
            return set;
        }
        set.insert(root.clone());
        loop {
            let before = set.len();
            for (name, from) in &self.candidates {
                if set.contains(from) && self.count(name) == 1 {
                    set.insert(name.clone());
                }
            }
            if set.len() == before {
                return set;
            }
        }
    }
}

impl Visit for Writes {
    fn visit_binding_ident(&mut self, node: &swc_ecma_ast::BindingIdent) {
        self.write(&node.id.sym);
        node.visit_children_with(self);
    }
    fn visit_fn_decl(&mut self, node: &FnDecl) {
        self.write(&node.ident.sym);
        node.visit_children_with(self);
    }
    fn visit_class_decl(&mut self, node: &ClassDecl) {
        self.write(&node.ident.sym);
        node.visit_children_with(self);
    }
    fn visit_fn_expr(&mut self, node: &FnExpr) {
        if let Some(ident) = &node.ident {
            self.write(&ident.sym);
        }
        node.visit_children_with(self);
    }
    fn visit_class_expr(&mut self, node: &ClassExpr) {
        if let Some(ident) = &node.ident {
            self.write(&ident.sym);
        }
        node.visit_children_with(self);
    }
    fn visit_update_expr(&mut self, node: &UpdateExpr) {
        if let Expr::Ident(ident) = unwrap(&node.arg) {
            self.write(&ident.sym);
        }
        node.visit_children_with(self);
    }
    fn visit_var_declarator(&mut self, node: &VarDeclarator) {
        if let (Pat::Ident(name), Some(init)) = (&node.name, &node.init)
            && let Expr::Ident(from) = unwrap(init)
        {
            self.candidates
                .push((name.id.sym.clone(), from.sym.clone()));
        }
        node.visit_children_with(self);
    }
}

/// Pass two: the uses of the tool objects and of `callTool`.
struct Uses<'a> {
    tools: &'a FxHashSet<Atom>,
    call_tool: &'a FxHashSet<Atom>,
    found: Vec<ToolUse>,
    open: bool,
    lines: Lines<'a>,
}

impl Uses<'_> {
    fn is_tools(&self, expr: &Expr) -> bool {
        matches!(unwrap(expr), Expr::Ident(i) if self.tools.contains(&i.sym))
    }

    fn record(&mut self, name: String, at: BytePos, call: bool, args: Option<Literal>) {
        let (line, column) = self.lines.locate(at);
        self.found.push(ToolUse {
            name,
            line,
            column,
            call,
            args,
        });
    }

    /// A member of a tool object: its static name, or the set opens.
    fn tool_member(&mut self, member: &MemberExpr, call: Option<&[ExprOrSpread]>) {
        match static_prop(&member.prop) {
            Some(name) => {
                let args = call.and_then(first_argument);
                self.record(name, member.prop.span_lo(), call.is_some(), args);
            }
            None => {
                self.open = true;
                member.prop.visit_with(self);
            }
        }
        if let Some(args) = call {
            args.visit_with(self);
        }
    }
}

impl Visit for Uses<'_> {
    fn visit_call_expr(&mut self, node: &CallExpr) {
        if let Callee::Expr(callee) = &node.callee {
            match unwrap(callee) {
                Expr::Member(member) if self.is_tools(&member.obj) => {
                    self.tool_member(member, Some(&node.args));
                    return;
                }
                Expr::Ident(ident) if self.call_tool.contains(&ident.sym) => {
                    let name = match node.args.first() {
                        Some(ExprOrSpread { spread: None, expr }) => static_string(expr),
                        _ => None,
                    };
                    match name {
                        Some(name) => {
                            let at = node.args.first().map_or(node.span.lo, |a| a.expr_lo());
                            let args = match node.args.get(1) {
                                None => Some(Literal::Object(Vec::new())),
                                Some(arg) => argument(arg),
                            };
                            self.record(name, at, true, args);
                        }
                        None => self.open = true,
                    }
                    node.args.visit_with(self);
                    return;
                }
                _ => {}
            }
        }
        node.visit_children_with(self);
    }

    fn visit_member_expr(&mut self, node: &MemberExpr) {
        if self.is_tools(&node.obj) {
            self.tool_member(node, None);
            return;
        }
        if static_prop(&node.prop).as_deref() == Some("constructor") {
            self.open = true;
        }
        node.visit_children_with(self);
    }

    fn visit_expr(&mut self, node: &Expr) {
        match node {
            Expr::Ident(ident) => {
                let name = &ident.sym;
                if self.tools.contains(name)
                    || self.call_tool.contains(name)
                    || ESCAPES.contains(&&**name)
                {
                    self.open = true;
                }
            }
            Expr::This(_) => self.open = true,
            _ => {}
        }
        node.visit_children_with(self);
    }

    fn visit_prop(&mut self, node: &Prop) {
        if let Prop::Shorthand(ident) = node {
            let name = &ident.sym;
            if self.tools.contains(name)
                || self.call_tool.contains(name)
                || ESCAPES.contains(&&**name)
            {
                self.open = true;
            }
        }
        node.visit_children_with(self);
    }

    fn visit_var_declarator(&mut self, node: &VarDeclarator) {
        // `const t = tools`: a proved alias; its initialiser is not an escape.
        if let (Pat::Ident(name), Some(init)) = (&node.name, &node.init)
            && let Expr::Ident(from) = unwrap(init)
        {
            let (name, from) = (&name.id.sym, &from.sym);
            if (self.tools.contains(name) && self.tools.contains(from))
                || (self.call_tool.contains(name) && self.call_tool.contains(from))
            {
                return;
            }
        }
        node.visit_children_with(self);
    }

    fn visit_with_stmt(&mut self, node: &WithStmt) {
        self.open = true;
        node.visit_children_with(self);
    }
}

/// `expr` without parentheses and type-only wrappers.
fn unwrap(mut expr: &Expr) -> &Expr {
    loop {
        expr = match expr {
            Expr::Paren(e) => &e.expr,
            Expr::TsAs(e) => &e.expr,
            Expr::TsNonNull(e) => &e.expr,
            Expr::TsSatisfies(e) => &e.expr,
            Expr::TsTypeAssertion(e) => &e.expr,
            Expr::TsConstAssertion(e) => &e.expr,
            _ => return expr,
        };
    }
}

trait SpanLo {
    fn span_lo(&self) -> BytePos;
}

impl SpanLo for MemberProp {
    fn span_lo(&self) -> BytePos {
        use swc_common::Spanned;
        self.span().lo
    }
}

trait ExprLo {
    fn expr_lo(&self) -> BytePos;
}

impl ExprLo for ExprOrSpread {
    fn expr_lo(&self) -> BytePos {
        use swc_common::Spanned;
        self.expr.span().lo
    }
}

/// The static name of a member: `.name`, `["name"]` or `` [`name`] ``.
fn static_prop(prop: &MemberProp) -> Option<String> {
    match prop {
        MemberProp::Ident(ident) => Some(ident.sym.to_string()),
        MemberProp::Computed(computed) => static_string(&computed.expr),
        MemberProp::PrivateName(_) => None,
    }
}

/// A string known before the run: a string literal or a template without substitutions.
fn static_string(expr: &Expr) -> Option<String> {
    match unwrap(expr) {
        Expr::Lit(Lit::Str(s)) => s.value.as_str().map(str::to_owned),
        Expr::Tpl(tpl) if tpl.exprs.is_empty() => tpl
            .quasis
            .first()
            .and_then(|q| q.cooked.as_ref())
            .and_then(|c| c.as_str())
            .map(str::to_owned),
        _ => None,
    }
}

/// The arguments a tool's binding receives from a call's argument list: `{}` when there is
/// none, `None` when the first is spread.
fn first_argument(args: &[ExprOrSpread]) -> Option<Literal> {
    match args.first() {
        None => Some(Literal::Object(Vec::new())),
        Some(arg) => argument(arg),
    }
}

fn argument(arg: &ExprOrSpread) -> Option<Literal> {
    if arg.spread.is_some() {
        None
    } else {
        Some(literal(&arg.expr))
    }
}

/// What is known of `expr`'s value before the run.
fn literal(expr: &Expr) -> Literal {
    match unwrap(expr) {
        Expr::Lit(Lit::Str(s)) => s
            .value
            .as_str()
            .map_or(Literal::Unknown, |s| Literal::String(s.to_owned())),
        Expr::Lit(Lit::Num(n)) => number(n.value),
        Expr::Lit(Lit::Bool(b)) => Literal::Bool(b.value),
        Expr::Lit(Lit::Null(_)) => Literal::Null,
        Expr::Tpl(_) => static_string(expr).map_or(Literal::Unknown, Literal::String),
        Expr::Unary(u) if u.op == UnaryOp::Minus => match unwrap(&u.arg) {
            Expr::Lit(Lit::Num(n)) => number(-n.value),
            _ => Literal::Unknown,
        },
        Expr::Array(array) => array_literal(array),
        Expr::Object(object) => object_literal(object),
        _ => Literal::Unknown,
    }
}

fn number(value: f64) -> Literal {
    const SAFE: f64 = 9_007_199_254_740_992.0; // 2^53
    if !value.is_finite() {
        Literal::Unknown
    } else if value.fract() == 0.0 && value.abs() < SAFE {
        #[allow(clippy::cast_possible_truncation)]
        Literal::Integer(value as i64)
    } else {
        Literal::Number(value)
    }
}

fn array_literal(array: &ArrayLit) -> Literal {
    let mut items = Vec::with_capacity(array.elems.len());
    for elem in &array.elems {
        match elem {
            Some(ExprOrSpread { spread: None, expr }) => items.push(literal(expr)),
            // A hole or a spread: the length and positions are not known.
            _ => return Literal::Unknown,
        }
    }
    Literal::Array(items)
}

fn object_literal(object: &ObjectLit) -> Literal {
    let mut entries = Vec::with_capacity(object.props.len());
    for prop in &object.props {
        let PropOrSpread::Prop(prop) = prop else {
            return Literal::Unknown;
        };
        let (key, value) = match &**prop {
            Prop::Shorthand(ident) => (ident.sym.to_string(), Literal::Unknown),
            Prop::KeyValue(kv) => {
                let key = match &kv.key {
                    PropName::Ident(ident) => ident.sym.to_string(),
                    PropName::Str(s) => match s.value.as_str() {
                        Some(s) => s.to_owned(),
                        None => return Literal::Unknown,
                    },
                    PropName::Num(n) => match number(n.value) {
                        Literal::Integer(i) if i >= 0 => i.to_string(),
                        _ => return Literal::Unknown,
                    },
                    _ => return Literal::Unknown,
                };
                (key, literal(&kv.value))
            }
            // Methods and accessors: not JSON values, and a getter's value is not known.
            _ => return Literal::Unknown,
        };
        // `__proto__: x` sets the prototype; it is not a key.
        if key == "__proto__" {
            return Literal::Unknown;
        }
        entries.push((key, value));
    }
    Literal::Object(entries)
}

/// Byte positions of the wrapped text to lines and columns of the program.
struct Lines<'a> {
    program: &'a str,
    /// The byte offset in the program where each line starts.
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(program: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(program.match_indices('\n').map(|(i, _)| i + 1));
        Lines { program, starts }
    }

    /// The 1-based line and column (in characters) of a position in the wrapped text.
    fn locate(&self, pos: BytePos) -> (u32, u32) {
        let offset = (pos.0 as usize)
            .saturating_sub(1 + PREFIX.len())
            .min(self.program.len());
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let column = self
            .program
            .get(start..offset)
            .map_or(0, |t| t.chars().count())
            + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }
}
