//! Tab completion and call hints over text being typed: what the dotted name before the cursor
//! can become, and which signature and parameter the cursor sits in.

use super::*;

/// What the text before the cursor asks to complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionContext {
    /// Byte offset in the input where the word being completed starts (what a candidate
    /// replaces).
    pub start: usize,
    /// The dotted path before the last `.`, when there is one: `string` in `string.le`,
    /// `p.pos` in `p.pos.x`.
    pub path: Vec<String>,
    /// The partly typed word: `le` in `string.le`, empty right after a `.`.
    pub prefix: String,
}

/// Reads the dotted name ending at `cursor` in `input`.
pub fn completion_context(input: &str, cursor: usize) -> CompletionContext {
    let cursor = floor_char_boundary(input, cursor);
    let before = input.get(..cursor).unwrap_or("");
    let start = word_start(before, cursor);
    let prefix = before.get(start..).unwrap_or("").to_string();
    let mut path = Vec::new();
    let mut end = start;
    while end > 0 && before.get(..end).is_some_and(|s| s.ends_with('.')) {
        let dot = end - 1;
        let seg_start = word_start(before, dot);
        let segment = before.get(seg_start..dot).unwrap_or("");
        if segment.is_empty() || segment.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
        path.insert(0, segment.to_string());
        end = seg_start;
    }
    CompletionContext {
        start,
        path,
        prefix,
    }
}

/// One completion candidate.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub name: String,
    pub kind: NameKind,
    /// The rendered signature or type to show beside the name.
    pub detail: Option<String>,
    pub doc: Option<String>,
}

/// What to offer for the dotted name ending at `cursor` in `input`, with names resolved as at
/// byte `offset` of `file` (for the REPL: the environment's module at its end; for an editor:
/// the cursor in the same file): names in scope for a bare word, a module's members after
/// `qualifier.`, and fields after `value.` or `value.field.`. Candidates start with the typed
/// prefix; the [`CompletionContext`] says which part of the input they replace.
pub fn complete(
    program: &Program,
    checked: &Checked,
    file: FileId,
    offset: u32,
    input: &str,
    cursor: usize,
) -> (CompletionContext, Vec<Candidate>) {
    let ctx = completion_context(input, cursor);
    let Some(module) = module_of_file(program, file) else {
        return (ctx, Vec::new());
    };
    let env = CheckedEnv::new(program, checked, Some(module));
    let scope = names_in_scope(program, checked, file, offset);
    let mut out: Vec<Candidate> = Vec::new();
    if ctx.path.is_empty() {
        for e in scope {
            out.push(Candidate {
                name: e.name,
                kind: e.kind,
                detail: e.signature,
                doc: e.doc,
            });
        }
    } else {
        match resolve_path(program, checked, &env, &scope, &ctx.path) {
            Some(Path::Module(m)) => {
                for m in module_members_of(program, checked, m, module) {
                    out.push(Candidate {
                        name: m.name,
                        kind: m.kind,
                        detail: m.signature,
                        doc: m.doc,
                    });
                }
            }
            Some(Path::Decl(_, Some(ty)) | Path::Value(ty)) => {
                for f in fields(&env, &ty) {
                    let mut detail = render_ty(&env, &f.ty);
                    if f.optional {
                        detail.push_str(" | null");
                    }
                    out.push(Candidate {
                        name: f.name,
                        kind: NameKind::Field,
                        detail: Some(detail),
                        doc: None,
                    });
                }
            }
            Some(Path::Decl(_, None)) | None => {}
        }
    }
    out.retain(|c| c.name.starts_with(&ctx.prefix));
    (ctx, out)
}

/// What a dotted path written in expression position denotes.
enum Path {
    /// A qualifier.
    Module(ModuleId),
    /// A top-level declaration (with its type as a value, when it is one).
    Decl(DeclRef, Option<Ty>),
    /// A local, or a field of a value.
    Value(Ty),
}

/// Resolves `a.b.c` as the resolver would (§2.4): `a` a value and the rest fields, or `a` a
/// qualifier, `b` its member and the rest fields.
fn resolve_path(
    program: &Program,
    checked: &Checked,
    env: &CheckedEnv<'_>,
    scope: &[ScopeEntry],
    path: &[String],
) -> Option<Path> {
    let (first, rest) = path.split_first()?;
    let (mut current, rest) = match scope.iter().find(|e| e.name == *first && e.kind.is_value()) {
        Some(e) => match e.target {
            Target::Decl(r) => (Path::Decl(r, e.ty.clone()), rest),
            _ => (Path::Value(e.ty.clone()?), rest),
        },
        None => {
            let Some(ScopeEntry {
                target: Target::Module(m),
                ..
            }) = scope
                .iter()
                .find(|e| e.name == *first && e.kind == NameKind::Module)
            else {
                return None;
            };
            match rest.split_first() {
                None => return Some(Path::Module(*m)),
                Some((name, rest)) => {
                    let r = program.names.value(*m, name)?;
                    let ty = checked.signatures.get(&r).map(|s| s.agent_ty());
                    (Path::Decl(r, ty), rest)
                }
            }
        }
    };
    for segment in rest {
        let ty = match current {
            Path::Decl(_, Some(ty)) | Path::Value(ty) => ty,
            _ => return None,
        };
        let field = fields(env, &ty).into_iter().find(|f| f.name == *segment)?;
        current = Path::Value(field.ty);
    }
    Some(current)
}

/// The members of a module seen from `from` (see [`module_members`]).
fn module_members_of(
    program: &Program,
    checked: &Checked,
    target: ModuleId,
    from: ModuleId,
) -> Vec<Member> {
    match program.module(target) {
        Some(m) => module_members(program, checked, &m.name, from),
        None => Vec::new(),
    }
}

/// The call the cursor is inside, for a hint: the callee's signature, its parameters, and which
/// one the argument being typed fills.
#[derive(Clone, Debug)]
pub struct CallHint {
    /// The callee as written: `string.length`, `double`.
    pub callee: String,
    /// The callee's signature without its keyword, rendered relative to the module the input
    /// is typed in: `length(value: string) -> integer`.
    pub signature: String,
    pub doc: Option<String>,
    pub params: Vec<ParamDoc>,
    /// The index in `params` of the parameter whose argument is being typed, once its label
    /// and `=` are written.
    pub active: Option<usize>,
}

/// The hint for the innermost call whose argument list is open at `cursor` in `input`, with
/// names resolved as at byte `offset` of `file` (as for [`complete`]). `None` when the cursor
/// is not directly inside a call's parentheses or the callee is unknown or not callable.
pub fn call_hint(
    program: &Program,
    checked: &Checked,
    file: FileId,
    offset: u32,
    input: &str,
    cursor: usize,
) -> Option<CallHint> {
    let open = open_call(input, cursor)?;
    let callee = callee_before(input, open.paren)?;
    let module = module_of_file(program, file)?;
    let env = CheckedEnv::new(program, checked, Some(module));
    let scope = names_in_scope(program, checked, file, offset);
    let path: Vec<String> = callee.split('.').map(str::to_string).collect();
    let last = path.last().cloned().unwrap_or_default();
    let (signature, doc, params) = match resolve_path(program, checked, &env, &scope, &path)? {
        Path::Module(_) => return None,
        Path::Decl(r, _) => {
            let doc = render::decl_doc(program, checked, &env, r)?;
            let signature = render::short_signature(program, checked, &env, r)?;
            if !NameKind::of_decl(program.decl(r)?)?.is_value() {
                return None;
            }
            (signature, doc.doc, doc.params)
        }
        Path::Value(ty) => {
            let TyKind::Agent(a) = &ty.kind else {
                return None;
            };
            let params = match &a.param.kind {
                TyKind::Object { fields, .. } => fields
                    .iter()
                    .map(|f| ParamDoc {
                        name: f.name.clone(),
                        ty: render_ty(&env, &f.ty),
                        optional: f.optional,
                        default: None,
                        doc: None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (render::callable_from_ty(&env, &last, &ty), None, params)
        }
    };
    let arg = input
        .get(open.arg_start..floor_char_boundary(input, cursor))
        .unwrap_or("");
    let active = argument_label(arg).and_then(|label| params.iter().position(|p| p.name == label));
    Some(CallHint {
        callee,
        signature,
        doc,
        params,
        active,
    })
}

/// An open call: where its `(` is and where the argument being typed starts.
struct OpenCall {
    paren: usize,
    arg_start: usize,
}

/// The innermost bracket open at `cursor`, when it is a `(` (the cursor may be inside a string
/// argument): a forward scan that skips string literals and comments and follows template
/// interpolations.
fn open_call(input: &str, cursor: usize) -> Option<OpenCall> {
    #[derive(Clone, Copy, PartialEq)]
    enum Open {
        Paren { at: usize, arg_start: usize },
        Other(char),
        Interp,
    }
    let before = input.get(..floor_char_boundary(input, cursor))?;
    let mut stack: Vec<Open> = Vec::new();
    let mut in_string = false;
    let mut chars = before.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => in_string = false,
                '$' if chars.peek().is_some_and(|(_, n)| *n == '{') => {
                    chars.next();
                    stack.push(Open::Interp);
                    in_string = false;
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '/' if chars.peek().is_some_and(|(_, n)| *n == '/') => {
                while chars.next_if(|(_, n)| *n != '\n').is_some() {}
            }
            '(' => stack.push(Open::Paren {
                at: i,
                arg_start: i + 1,
            }),
            '[' | '{' => stack.push(Open::Other(c)),
            ')' | ']' => {
                stack.pop();
            }
            // The `}` of an interpolation goes back into its template string.
            '}' => in_string = stack.pop() == Some(Open::Interp),
            ',' => {
                if let Some(Open::Paren { arg_start, .. }) = stack.last_mut() {
                    *arg_start = i + 1;
                }
            }
            _ => {}
        }
    }
    match stack.last() {
        Some(Open::Paren { at, arg_start }) => Some(OpenCall {
            paren: *at,
            arg_start: *arg_start,
        }),
        _ => None,
    }
}

/// The dotted name right before the `(` at `paren`, skipping one explicit generic application
/// (`json.decode[point](`).
fn callee_before(input: &str, paren: usize) -> Option<String> {
    let mut end = paren;
    if input.get(..end)?.ends_with(']') {
        let mut depth = 0usize;
        let mut open = None;
        for (i, c) in input.get(..end)?.char_indices().rev() {
            match c {
                ']' => depth += 1,
                '[' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        open = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        end = open?;
    }
    let ctx = completion_context(input, end);
    if ctx.prefix.is_empty() || ctx.prefix.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut path = ctx.path;
    path.push(ctx.prefix);
    Some(path.join("."))
}

/// The label of an argument being typed: `value` in ` value = "ab`.
fn argument_label(arg: &str) -> Option<&str> {
    let arg = arg.trim_start();
    let len = arg
        .char_indices()
        .find(|(_, c)| !is_ident_char(*c))
        .map_or(arg.len(), |(i, _)| i);
    let (label, rest) = arg.split_at(len);
    let rest = rest.trim_start().strip_prefix('=')?;
    if label.is_empty() || rest.starts_with(['=', '>']) {
        return None;
    }
    Some(label)
}
