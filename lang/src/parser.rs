//! The parser (`language.md` §5): chumsky combinators over the laid-out token stream.
//!
//! The layout pass has already removed the line ends that do not matter and marked which `{`
//! opens a block, so the grammar here is close to the EBNF of the spec. Each top-level chunk
//! (§4.4) is parsed on its own: a syntax error produces one K1001 for the broken declaration and
//! parsing resumes with the next chunk.

use chumsky::input::{Input as _, ValueInput};
use chumsky::prelude::*;

use crate::ast::*;
use crate::diag::{Code, Diagnostic};
use crate::layout::layout;
use crate::lexer::lex;
use crate::source::{FileId, Span};
use crate::token::Token;

/// The largest integer that binary64 represents exactly (2^53 − 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The outcome of parsing one file: everything that parsed, plus diagnostics.
#[derive(Debug)]
pub struct Parsed {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the input ended in the middle of a construct (an open bracket, an unfinished
    /// string, a trailing operator). The REPL shows a continuation prompt instead of an error.
    pub incomplete: bool,
    /// The identifiers written directly before a `.`, each once: the module qualifiers the text
    /// may use (the loader reads which prelude modules a program can name from them).
    pub qualifiers: Vec<String>,
}

type Extra<'t, 's> = extra::Err<Rich<'t, Token<'s>, SimpleSpan>>;

fn span(s: SimpleSpan) -> Span {
    Span::new(s.start, s.end)
}

/// Lexes, lays out and parses one source file. Never panics.
pub fn parse(file: FileId, src: &str) -> Parsed {
    let lexed = lex(file, src);
    let mut diagnostics = lexed.diagnostics;
    let mut incomplete = diagnostics
        .iter()
        .any(|d| d.message.starts_with("unterminated"));
    integer_warnings(file, &lexed.tokens, &mut diagnostics);
    let qualifiers = qualifier_words(&lexed.tokens);

    let laid = layout(src, lexed.tokens);
    let tokens: Vec<(Token<'_>, SimpleSpan)> = laid
        .tokens
        .iter()
        .map(|(t, s)| (t.clone(), SimpleSpan::from(s.range())))
        .collect();
    let parser = module_parser();
    let mut module = Module::default();
    for (index, chunk) in laid.chunks.iter().enumerate() {
        if let Some((_, at)) = laid.too_deep.iter().find(|(c, _)| *c == index) {
            diagnostics.push(
                Diagnostic::new(
                    Code::K1001,
                    format!(
                        "brackets nest more than {} levels deep here",
                        crate::layout::MAX_NESTING
                    ),
                    file,
                    *at,
                )
                .with_label("too deeply nested")
                .with_help("split the expression with `let` bindings or helper agents"),
            );
            continue;
        }
        let slice = &tokens[chunk.clone()];
        let eoi = match slice.last() {
            Some((_, s)) => SimpleSpan::from(s.end..s.end),
            None => SimpleSpan::from(src.len()..src.len()),
        };
        let (decls, errors) = parser
            .parse(slice.split_token_span(eoi))
            .into_output_errors();
        match errors.first() {
            // After an unterminated string or comment the lexer has said what is wrong; running
            // out of input is its consequence, not a second problem.
            Some(error) if error.found().is_none() && incomplete => {}
            Some(error) => {
                let at_end = error.found().is_none();
                incomplete |= at_end && chunk.end == tokens.len();
                diagnostics.push(syntax_error(file, error, slice));
            }
            None => module.decls.extend(decls.unwrap_or_default()),
        }
    }
    incomplete |= laid.unclosed;
    Parsed {
        module,
        diagnostics,
        incomplete,
        qualifiers,
    }
}

/// The distinct identifiers that a `.` follows directly (comments and white space between them
/// are not tokens; string literals are one token, so mentions inside them do not count).
fn qualifier_words(tokens: &[(Token<'_>, Span)]) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for pair in tokens.windows(2) {
        if let [(Token::Ident(word), _), (Token::Dot, _)] = pair
            && !words.iter().any(|w| w == word)
        {
            words.push((*word).to_string());
        }
    }
    words
}

/// K1002 for every integer literal beyond 2^53 − 1 (§3.3).
fn integer_warnings(file: FileId, tokens: &[(Token<'_>, Span)], diagnostics: &mut Vec<Diagnostic>) {
    for (token, s) in tokens {
        if let Token::Int(digits) = token
            && let Ok(value) = digits.parse::<f64>()
            && value > MAX_SAFE_INTEGER
        {
            // Some literals past 2^53-1 are exact (2^53 itself); most round to a neighbour.
            let nearest = crate::number::format_number(value);
            let exact = nearest == digits.trim_start_matches('0');
            let (message, label) = if exact {
                (
                    format!("integer literal {digits} is beyond 2^53-1"),
                    "exact, but integers from here on are not all representable".to_string(),
                )
            } else {
                (
                    format!("integer literal {digits} is beyond 2^53-1 and will be rounded"),
                    format!("rounded to {nearest}"),
                )
            };
            diagnostics.push(
                Diagnostic::new(Code::K1002, message, file, *s)
                .with_label(label)
                .with_help(
                    "integers are binary64 values; write a number literal if rounding is intended",
                ),
            );
        }
    }
}

/// Turns chumsky's first error for a chunk into K1001, with help for the layout mistakes people
/// actually make.
fn syntax_error(
    file: FileId,
    error: &Rich<'_, Token<'_>, SimpleSpan>,
    tokens: &[(Token<'_>, SimpleSpan)],
) -> Diagnostic {
    let at = span(*error.span());
    let found = error.found();
    let mut expected: Vec<String> = error
        .expected()
        .filter(|p| !matches!(p, chumsky::error::RichPattern::SomethingElse))
        .map(|p| p.to_string().replace('\'', ""))
        .collect();
    expected.sort();
    expected.dedup();
    let found_text = match found {
        Some(t) => t.to_string(),
        None => "the end of the input".to_string(),
    };
    let wants_line_end = expected.iter().any(|e| e == "line end");
    let message = match (&error.reason(), expected.len()) {
        (chumsky::error::RichReason::Custom(msg), _) => msg.to_string(),
        _ if wants_line_end && found.is_some() => {
            format!("{found_text} cannot continue this line: an item ends here")
        }
        (_, 0) => format!("unexpected {found_text}"),
        (_, 1..=6) => format!("expected {}, found {found_text}", expected.join(", ")),
        _ => format!("unexpected {found_text}"),
    };
    let mut diag = Diagnostic::new(Code::K1001, message, file, at).with_label(match found {
        Some(_) => "unexpected here",
        None => "input ends here",
    });
    let previous = tokens
        .iter()
        .take_while(|(_, s)| s.end <= at.start as usize)
        .last()
        .map(|(t, _)| t);
    match found {
        Some(Token::Newline)
            if previous.is_some_and(|t| {
                matches!(
                    t,
                    Token::RParen | Token::Ident(_) | Token::RBracket | Token::RBrace
                )
            }) =>
        {
            diag = diag.with_help(
                "a line end ends the item here; continue a line only after an operator, after `=`, or inside brackets (an agent signature may wrap before `with` or after `|`)",
            );
        }
        Some(Token::BlockOpen) if previous == Some(&Token::Newline) => {
            diag = diag
                .with_help("an opening brace must stay on the line of the construct it belongs to");
        }
        Some(Token::Else | Token::Then) if previous == Some(&Token::Newline) => {
            diag = diag.with_help("write `} else {` and `} then (…) {` on one line");
        }
        Some(_) if wants_line_end => {
            diag = diag.with_help("two items on one line must be separated by `;`");
        }
        _ => {}
    }
    diag
}

/// The word that a type position reads as an atom cannot name a declared type (§3.2).
fn check_type_name<'t, 's>(
    name: &Ident,
    emitter: &mut chumsky::input::Emitter<Rich<'t, Token<'s>, SimpleSpan>>,
) {
    if TypeAtom::from_word(&name.text).is_some() {
        emitter.emit(Rich::custom(
            SimpleSpan::from(name.span.range()),
            format!("`{}` is a type-atom word and cannot name a declared type, request or generic parameter", name.text),
        ));
    }
}

/// Builds the parser for one chunk of declarations.
fn module_parser<'t, 's: 't, I>() -> impl Parser<'t, I, Vec<Decl>, Extra<'t, 's>> + Clone
where
    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
{
    let ident =
        select! { Token::Ident(s) = e => Ident { text: s.to_string(), span: span(e.span()) } }
            .labelled("a name");
    let word = |w: &'static str| select! { Token::Ident(s) if s == w => () }.labelled(w);
    let string = select! { Token::Str(s) = e => (s, span(e.span())) }.labelled("a string");
    let nl = just(Token::Newline).labelled("line end");
    let lbrace = just(Token::LBrace).or(just(Token::BlockOpen));

    let doc = just(Token::At)
        .ignore_then(string)
        .map(|(text, span)| Doc { text, span })
        .labelled("a doc annotation");

    // Literals. A sign must touch its digits (`-1`, not `- 1`).
    let unsigned_number = select! {
        Token::Int(s) => LitKind::Int(s.parse::<f64>().unwrap_or(f64::INFINITY)),
        Token::Number(s) => LitKind::Number(s.parse::<f64>().unwrap_or(f64::INFINITY)),
    };
    let sign = just(Token::Minus)
        .to(-1.0)
        .or(just(Token::Plus).to(1.0))
        .map_with(|s, e| (s, e.span()));
    let signed_number = sign
        .or_not()
        .then(unsigned_number.map_with(|n, e| (n, e.span())))
        .validate(
            |(sign, (number, number_span)): (Option<(f64, SimpleSpan)>, (LitKind, SimpleSpan)),
             e,
             emitter| {
                let kind = match sign {
                    None => number,
                    Some((factor, sign_span)) => {
                        if sign_span.end != number_span.start {
                            emitter.emit(Rich::custom(
                                sign_span,
                                "a sign must be written directly before its digits",
                            ));
                        }
                        match number {
                            LitKind::Int(v) => LitKind::Int(factor * v),
                            LitKind::Number(v) => LitKind::Number(factor * v),
                            other => other,
                        }
                    }
                };
                Literal {
                    kind,
                    span: span(e.span()),
                }
            },
        );
    let keyword_literal = select! {
        Token::Str(s) => LitKind::Str(s),
        Token::True => LitKind::Bool(true),
        Token::False => LitKind::Bool(false),
        Token::Null => LitKind::Null,
    };
    let signed_literal = signed_number
        .or(keyword_literal.map_with(|kind, e| Literal {
            kind,
            span: span(e.span()),
        }))
        .labelled("a literal")
        .boxed();

    // ------------------------------------------------------------------------------------
    // Types
    // ------------------------------------------------------------------------------------
    let ty = recursive(|ty| {
        let field_type = ident
            .then(just(Token::Question).or_not())
            .then_ignore(just(Token::Colon))
            .then(ty.clone())
            .map_with(|((name, optional), ty), e| FieldType {
                name,
                optional: optional.is_some(),
                ty,
                span: span(e.span()),
            })
            .boxed();
        let field_types = field_type
            .clone()
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Vec<_>>();
        let type_list = ty
            .clone()
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Vec<_>>();

        let atom_word = select! { Token::Ident(s) = e => (s, e.span()) }
            .then_ignore(just(Token::Dot).not().rewind())
            .try_map(|(s, sp), _| {
                TypeAtom::from_word(s).ok_or_else(|| Rich::custom(sp, "not a type atom"))
            })
            .or(just(Token::Null).to(TypeAtom::Null))
            .map(TypeKind::Atom);
        let named = ident
            .then(just(Token::Dot).ignore_then(ident).or_not())
            .map(|(first, second)| match second {
                Some(name) => TypeKind::Named {
                    qualifier: Some(first),
                    name,
                },
                None => TypeKind::Named {
                    qualifier: None,
                    name: first,
                },
            });
        let object = field_types
            .clone()
            .delimited_by(lbrace.clone(), just(Token::RBrace))
            .map(TypeKind::Object);
        let override_row = lbrace
            .clone()
            .ignore_then(just(Token::Ellipsis))
            .ignore_then(ty.clone())
            .then(
                just(Token::Comma)
                    .ignore_then(ty.clone())
                    .repeated()
                    .collect::<Vec<_>>(),
            )
            .then_ignore(just(Token::Comma).or_not())
            .then_ignore(just(Token::RBrace))
            .map(|(base, entries)| TypeKind::Override {
                base: Box::new(base),
                entries,
            });
        let tuple = type_list
            .clone()
            .delimited_by(just(Token::LBracket), just(Token::RBracket))
            .map(TypeKind::Tuple);
        let paren = ty
            .clone()
            .delimited_by(just(Token::LParen), just(Token::RParen))
            .map(|t: Type| t.kind);

        let applied = recursive(|applied| {
            let agent_type = just(Token::Agent)
                .ignore_then(
                    field_types
                        .clone()
                        .delimited_by(just(Token::LParen), just(Token::RParen))
                        .map(AgentParams::Fields)
                        .or(applied.map(|t| AgentParams::Type(Box::new(t)))),
                )
                .then_ignore(just(Token::Arrow))
                .then(ty.clone())
                .then(just(Token::With).ignore_then(ty.clone()).or_not())
                .map(
                    |((params, ret), effects): ((AgentParams, Type), Option<Type>)| {
                        TypeKind::Agent {
                            params,
                            ret: Box::new(ret),
                            effects: effects.map(Box::new),
                        }
                    },
                );
            let atom = choice((
                agent_type,
                atom_word,
                named,
                override_row,
                object,
                tuple,
                paren,
            ))
            .map_with(|kind, e| Type {
                kind,
                span: span(e.span()),
            })
            .labelled("a type")
            .boxed();
            atom.foldl_with(
                type_list
                    .clone()
                    .delimited_by(just(Token::LBracket), just(Token::RBracket))
                    .repeated(),
                |head, args, e| Type {
                    kind: TypeKind::Apply {
                        head: Box::new(head),
                        args,
                    },
                    span: span(e.span()),
                },
            )
            .boxed()
        });
        let attributed = applied.clone().foldl_with(
            just(Token::Of).ignore_then(applied).repeated(),
            |ty, attr, e| Type {
                kind: TypeKind::Attributed {
                    ty: Box::new(ty),
                    attr: Box::new(attr),
                },
                span: span(e.span()),
            },
        );
        attributed
            .clone()
            .separated_by(just(Token::Pipe))
            .at_least(1)
            .collect::<Vec<_>>()
            .map_with(|mut members, e| {
                if members.len() == 1 {
                    members.pop().unwrap_or(Type {
                        kind: TypeKind::Error,
                        span: span(e.span()),
                    })
                } else {
                    Type {
                        kind: TypeKind::Union(members),
                        span: span(e.span()),
                    }
                }
            })
            .boxed()
    });
    let type_args = ty
        .clone()
        .separated_by(just(Token::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(Token::LBracket), just(Token::RBracket));

    // ------------------------------------------------------------------------------------
    // Patterns
    // ------------------------------------------------------------------------------------
    let pattern = recursive(|pattern| {
        let field_pattern = ident
            .then(just(Token::FatArrow).ignore_then(pattern.clone()).or_not())
            .map_with(|(name, pattern), e| FieldPattern {
                name,
                pattern,
                span: span(e.span()),
            });
        let field_patterns = field_pattern
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Vec<_>>();

        let wildcard = just(Token::Underscore)
            .ignore_then(just(Token::Colon).ignore_then(ty.clone()).or_not())
            .map(PatternKind::Wildcard);
        let filter_tag = select! { Token::Ident(s) = e => (s, e.span()) }
            .try_map(|(s, sp), _| {
                FilterTag::from_word(s).ok_or_else(|| Rich::custom(sp, "not a filter tag"))
            })
            .or(just(Token::Null).to(FilterTag::Null))
            .or(just(Token::Agent).to(FilterTag::Agent));
        let filter = filter_tag
            .then(
                pattern
                    .clone()
                    .delimited_by(just(Token::LParen), just(Token::RParen)),
            )
            .map(|(tag, inner)| PatternKind::Filter {
                tag,
                inner: Box::new(inner),
            });
        let constructor = ident
            .then(just(Token::Dot).ignore_then(ident).or_not())
            .then(type_args.clone().or_not())
            .then(
                field_patterns
                    .clone()
                    .delimited_by(just(Token::LParen), just(Token::RParen)),
            )
            .map(|(((first, second), type_args), fields)| {
                let (qualifier, name) = match second {
                    Some(name) => (Some(first), name),
                    None => (None, first),
                };
                PatternKind::Constructor {
                    qualifier,
                    name,
                    type_args,
                    fields,
                }
            });
        let record = field_patterns
            .delimited_by(lbrace.clone(), just(Token::RBrace))
            .map(PatternKind::Record);
        let tuple = pattern
            .clone()
            .separated_by(just(Token::Comma))
            .allow_trailing()
            .collect::<Vec<_>>()
            .delimited_by(just(Token::LBracket), just(Token::RBracket))
            .map(PatternKind::Tuple);
        let bind = ident
            .then(just(Token::Colon).ignore_then(ty.clone()).or_not())
            .map(|(name, ty)| PatternKind::Bind { name, ty });
        let literal = signed_literal.clone().map(|l| PatternKind::Lit(l.kind));

        choice((wildcard, filter, constructor, record, tuple, literal, bind))
            .map_with(|kind, e| Pattern {
                kind,
                span: span(e.span()),
            })
            .labelled("a pattern")
            .boxed()
    });

    // ------------------------------------------------------------------------------------
    // Parameters and generics
    // ------------------------------------------------------------------------------------
    let binding_param = doc
        .clone()
        .or_not()
        .then(ident)
        .then(
            just(Token::FatArrow)
                .ignore_then(pattern.clone())
                .map(ParamKind::Destructure)
                .or(just(Token::Colon)
                    .ignore_then(ty.clone())
                    .or_not()
                    .then(
                        just(Token::QuestionEq)
                            .ignore_then(signed_literal.clone())
                            .or_not(),
                    )
                    .map(|(ty, default)| ParamKind::Plain { ty, default })),
        )
        .map_with(|((doc, name), kind), e| Param {
            doc,
            name,
            kind,
            span: span(e.span()),
        })
        .boxed();
    let binding_params = binding_param
        .separated_by(just(Token::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(Token::LParen), just(Token::RParen))
        .boxed();
    let sig_param = doc
        .clone()
        .or_not()
        .then(ident)
        .then_ignore(just(Token::Colon))
        .then(ty.clone())
        .then(
            just(Token::QuestionEq)
                .ignore_then(signed_literal.clone())
                .or_not(),
        )
        .map_with(|(((doc, name), ty), default), e| SigParam {
            doc,
            name,
            ty,
            default,
            span: span(e.span()),
        });
    let sig_params = sig_param
        .separated_by(just(Token::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(Token::LParen), just(Token::RParen))
        .boxed();
    let generic_kind = word("effect")
        .to(GenericKind::Effect)
        .or(word("attribute").to(GenericKind::Attribute));
    let generic_param = generic_kind
        .then(ident)
        .or(ident.map(|name| (GenericKind::Type, name)))
        .then(word("extends").ignore_then(ty.clone()).or_not())
        .validate(|((kind, name), bound), e, emitter| {
            check_type_name(&name, emitter);
            GenericParam {
                kind,
                name,
                bound,
                span: span(e.span()),
            }
        });
    let generics = generic_param
        .separated_by(just(Token::Comma))
        .allow_trailing()
        .at_least(1)
        .collect::<Vec<_>>()
        .delimited_by(just(Token::LBracket), just(Token::RBracket))
        .or_not()
        .map(Option::unwrap_or_default)
        .boxed();

    // ------------------------------------------------------------------------------------
    // Expressions, blocks and statements
    // ------------------------------------------------------------------------------------
    let sep = nl.clone().or(just(Token::Semi)).repeated().at_least(1);
    // Agents contain blocks, blocks contain expressions and local agents, expressions contain
    // blocks: three nested `recursive` definitions, whose inner handles are weak references.
    // (`Recursive::declare` + `define` made strong reference cycles that leaked every parser.)
    let agent_decl = recursive(|agent_decl| {
        let block = recursive(|block| {
            let expr = recursive(|expr| {
                let var_binding = just(Token::Var)
                    .ignore_then(ident)
                    .then(just(Token::Colon).ignore_then(ty.clone()).or_not())
                    .then_ignore(just(Token::Eq))
                    .then(expr.clone())
                    .map_with(|((name, ty), init), e| VarBinding {
                        name,
                        ty,
                        init,
                        span: span(e.span()),
                    })
                    .boxed();
                let then_clause = just(Token::Then)
                    .ignore_then(
                        pattern
                            .clone()
                            .delimited_by(just(Token::LParen), just(Token::RParen))
                            .or_not(),
                    )
                    .then(block.clone())
                    .map_with(|(pattern, body), e| ThenClause {
                        pattern,
                        body,
                        span: span(e.span()),
                    })
                    .boxed();
                let for_head = just(Token::Let)
                    .or_not()
                    .ignore_then(pattern.clone())
                    .then_ignore(just(Token::In))
                    .then(expr.clone())
                    .then(
                        just(Token::Comma)
                            .ignore_then(var_binding.clone())
                            .repeated()
                            .collect::<Vec<_>>(),
                    )
                    .then_ignore(just(Token::Comma).or_not())
                    .delimited_by(just(Token::LParen), just(Token::RParen));
                let for_rest = for_head
                    .then(block.clone())
                    .then(then_clause.clone().or_not())
                    .map(|((((pattern, source), vars), body), then)| {
                        (pattern, source, vars, body, then)
                    })
                    .boxed();
                let clause = just(Token::Request)
                    .ignore_then(ident)
                    .then(just(Token::Dot).ignore_then(ident).or_not())
                    .then(type_args.clone().or_not())
                    .then(binding_params.clone())
                    .then(just(Token::Arrow).ignore_then(ty.clone()).or_not())
                    .then(block.clone())
                    .map_with(|(((((first, second), type_args), params), ret), body), e| {
                        let (qualifier, name) = match second {
                            Some(name) => (Some(first), name),
                            None => (None, first),
                        };
                        Clause {
                            qualifier,
                            name,
                            type_args,
                            params,
                            ret,
                            body,
                            span: span(e.span()),
                        }
                    });
                let handler_rest = type_args
                    .clone()
                    .or_not()
                    .then(
                        var_binding
                            .clone()
                            .separated_by(just(Token::Comma))
                            .allow_trailing()
                            .collect::<Vec<_>>()
                            .delimited_by(just(Token::LParen), just(Token::RParen))
                            .or_not(),
                    )
                    .then(
                        clause
                            .repeated()
                            .collect::<Vec<_>>()
                            .delimited_by(just(Token::LBrace), just(Token::RBrace)),
                    )
                    .then(then_clause.clone().or_not())
                    .map(|(((type_args, vars), clauses), then)| {
                        (type_args, vars.unwrap_or_default(), clauses, then)
                    })
                    .boxed();

                let items = expr
                    .clone()
                    .separated_by(just(Token::Comma))
                    .allow_trailing()
                    .collect::<Vec<_>>()
                    .delimited_by(just(Token::LBracket), just(Token::RBracket))
                    .boxed();

                let literal = select! {
                    Token::Int(s) => LitKind::Int(s.parse::<f64>().unwrap_or(f64::INFINITY)),
                    Token::Number(s) => LitKind::Number(s.parse::<f64>().unwrap_or(f64::INFINITY)),
                    Token::Str(s) => LitKind::Str(s),
                    Token::True => LitKind::Bool(true),
                    Token::False => LitKind::Bool(false),
                    Token::Null => LitKind::Null,
                }
                .map(ExprKind::Lit);

                let template_part =
        select! { Token::TemplateChunk(s) = e => TemplatePart::Text(s, span(e.span())) }.or(expr
            .clone()
            .delimited_by(just(Token::InterpOpen), just(Token::InterpClose))
            .map(TemplatePart::Interp));
                let template = template_part
                    .repeated()
                    .collect::<Vec<_>>()
                    .delimited_by(just(Token::TemplateStart), just(Token::TemplateEnd))
                    .map(ExprKind::Template);

                let if_expr = recursive(|if_expr| {
                    just(Token::If)
                        .ignore_then(
                            expr.clone()
                                .delimited_by(just(Token::LParen), just(Token::RParen)),
                        )
                        .then(block.clone())
                        .then(
                            just(Token::Else)
                                .ignore_then(
                                    block
                                        .clone()
                                        .map_with(|b, e| Expr {
                                            kind: ExprKind::Block(b),
                                            span: span(e.span()),
                                        })
                                        .or(if_expr),
                                )
                                .or_not(),
                        )
                        .map_with(|((cond, then), otherwise), e| Expr {
                            kind: ExprKind::If {
                                cond: Box::new(cond),
                                then,
                                otherwise: otherwise.map(Box::new),
                            },
                            span: span(e.span()),
                        })
                        .boxed()
                });

                let arm = just(Token::Case)
                    .ignore_then(pattern.clone())
                    .then_ignore(just(Token::Arrow))
                    .then(expr.clone())
                    .map_with(|(pattern, body), e| Arm {
                        pattern,
                        body,
                        span: span(e.span()),
                    });
                let match_expr = just(Token::Match)
                    .ignore_then(
                        expr.clone()
                            .delimited_by(just(Token::LParen), just(Token::RParen)),
                    )
                    .then(
                        arm.repeated()
                            .collect::<Vec<_>>()
                            .delimited_by(just(Token::LBrace), just(Token::RBrace)),
                    )
                    .map(|(subject, arms)| ExprKind::Match {
                        subject: Box::new(subject),
                        arms,
                    });

                let for_expr = just(Token::For).ignore_then(for_rest.clone()).map(
                    |(pattern, source, vars, body, then)| {
                        ExprKind::For(Box::new(ForExpr {
                            parallel: false,
                            pattern,
                            source,
                            vars,
                            body,
                            then,
                        }))
                    },
                );
                let handler_expr = just(Token::Handler).ignore_then(handler_rest.clone()).map(
                    |(type_args, vars, clauses, then)| {
                        ExprKind::Handler(Box::new(HandlerExpr {
                            parallel: false,
                            type_args,
                            vars,
                            clauses,
                            then,
                        }))
                    },
                );
                let parallel_expr = just(Token::Parallel).ignore_then(choice((
                    items.clone().map(ExprKind::ParallelTuple),
                    just(Token::For).ignore_then(for_rest).map(
                        |(pattern, source, vars, body, then)| {
                            ExprKind::For(Box::new(ForExpr {
                                parallel: true,
                                pattern,
                                source,
                                vars,
                                body,
                                then,
                            }))
                        },
                    ),
                    just(Token::Handler).ignore_then(handler_rest).map(
                        |(type_args, vars, clauses, then)| {
                            ExprKind::Handler(Box::new(HandlerExpr {
                                parallel: true,
                                type_args,
                                vars,
                                clauses,
                                then,
                            }))
                        },
                    ),
                )));

                let agent_expr = word("private")
                    .or_not()
                    .then_ignore(just(Token::Agent))
                    .then(binding_params.clone())
                    .then(just(Token::Arrow).ignore_then(ty.clone()).or_not())
                    .then(just(Token::With).ignore_then(ty.clone()).or_not())
                    .then(block.clone())
                    .map(|((((private, params), ret), effects), body)| {
                        ExprKind::Agent(Box::new(AgentExpr {
                            private: private.is_some(),
                            params,
                            ret,
                            effects,
                            body,
                        }))
                    });

                let entry_key = ident.map(|i| (i.text, i.span)).or(string);
                let entry = entry_key
                    .then_ignore(just(Token::Eq))
                    .then(expr.clone())
                    .map_with(|((key, key_span), value), e| Entry {
                        key,
                        key_span,
                        value,
                        span: span(e.span()),
                    });
                let record = entry
                    .separated_by(just(Token::Comma))
                    .allow_trailing()
                    .collect::<Vec<_>>()
                    .delimited_by(just(Token::LBrace), just(Token::RBrace))
                    .map(ExprKind::Record);

                let primary = choice((
                    literal,
                    template,
                    if_expr.clone().map(Expr::into_kind),
                    match_expr,
                    for_expr,
                    parallel_expr,
                    handler_expr,
                    agent_expr,
                    items.clone().map(ExprKind::Tuple),
                    expr.clone()
                        .delimited_by(just(Token::LParen), just(Token::RParen))
                        .map(Expr::into_kind),
                    record,
                    block.clone().map(ExprKind::Block),
                    ident.map(ExprKind::Name),
                ))
                .map_with(|kind, e| Expr {
                    kind,
                    span: span(e.span()),
                })
                .labelled("an expression")
                .boxed();

                enum Postfix {
                    Call(Vec<Arg>),
                    TypeArgs(Vec<Type>),
                    Field(Ident),
                }
                let arg = ident
                    .then_ignore(just(Token::Eq))
                    .then(just(Token::Underscore).to(None).or(expr.clone().map(Some)))
                    .map_with(|(label, value), e| Arg {
                        label,
                        value,
                        span: span(e.span()),
                    });
                let call_suffix = arg
                    .separated_by(just(Token::Comma))
                    .allow_trailing()
                    .collect::<Vec<_>>()
                    .delimited_by(just(Token::LParen), just(Token::RParen));
                let postfix = primary
                    .foldl_with(
                        choice((
                            call_suffix.map(Postfix::Call),
                            type_args.clone().map(Postfix::TypeArgs),
                            just(Token::Dot).ignore_then(ident).map(Postfix::Field),
                        ))
                        .repeated(),
                        |target, suffix, e| {
                            let kind = match suffix {
                                Postfix::Call(args) => ExprKind::Call {
                                    callee: Box::new(target),
                                    args,
                                },
                                Postfix::TypeArgs(args) => ExprKind::TypeApply {
                                    callee: Box::new(target),
                                    args,
                                },
                                Postfix::Field(field) => ExprKind::Field {
                                    target: Box::new(target),
                                    field,
                                },
                            };
                            Expr {
                                kind,
                                span: span(e.span()),
                            }
                        },
                    )
                    .boxed();

                let prefix_op = just(Token::Bang)
                    .to(UnOp::Not)
                    .or(just(Token::Minus).to(UnOp::Neg))
                    .map_with(|op, e| (op, e.span()));
                let prefix = prefix_op
                    .repeated()
                    .foldr(postfix, |(op, op_span), operand: Expr| {
                        let whole = span(op_span).to(operand.span);
                        Expr {
                            kind: ExprKind::Unary {
                                op,
                                operand: Box::new(operand),
                            },
                            span: whole,
                        }
                    });

                fn binary<'t, 's: 't, I, P, Q>(
                    operand: P,
                    ops: Q,
                ) -> impl Parser<'t, I, Expr, Extra<'t, 's>> + Clone
                where
                    I: ValueInput<'t, Token = Token<'s>, Span = SimpleSpan>,
                    P: Parser<'t, I, Expr, Extra<'t, 's>> + Clone + 't,
                    Q: Parser<'t, I, BinOp, Extra<'t, 's>> + Clone + 't,
                {
                    operand
                        .clone()
                        .foldl(ops.then(operand).repeated(), |left, (op, right)| {
                            let whole = left.span.to(right.span);
                            Expr {
                                kind: ExprKind::Binary {
                                    op,
                                    left: Box::new(left),
                                    right: Box::new(right),
                                },
                                span: whole,
                            }
                        })
                        .boxed()
                }
                let mul = binary(
                    prefix,
                    choice((
                        just(Token::Star).to(BinOp::Mul),
                        just(Token::Slash).to(BinOp::Div),
                        just(Token::Percent).to(BinOp::Mod),
                    )),
                );
                let add = binary(
                    mul,
                    choice((
                        just(Token::PlusPlus).to(BinOp::Concat),
                        just(Token::Plus).to(BinOp::Add),
                        just(Token::Minus).to(BinOp::Sub),
                    )),
                );
                let rel = binary(
                    add,
                    choice((
                        just(Token::Lt).to(BinOp::Lt),
                        just(Token::Le).to(BinOp::Le),
                        just(Token::Gt).to(BinOp::Gt),
                        just(Token::Ge).to(BinOp::Ge),
                    )),
                );
                let eq = binary(
                    rel,
                    just(Token::EqEq)
                        .to(BinOp::Eq)
                        .or(just(Token::NotEq).to(BinOp::NotEq)),
                );
                let and = binary(eq, just(Token::AndAnd).to(BinOp::And));
                binary(and, just(Token::OrOr).to(BinOp::Or))
            });

            // Block items.
            let modifier = ident
                .then_ignore(just(Token::Eq))
                .then(expr.clone())
                .map_with(|(name, value), e| Modifier {
                    name,
                    value,
                    span: span(e.span()),
                });
            let let_or_use = just(Token::Let)
                .ignore_then(pattern.clone())
                .then_ignore(just(Token::Eq))
                .then(
                    just(Token::Use)
                        .ignore_then(expr.clone())
                        .map(|p| (true, p))
                        .or(expr.clone().map(|v| (false, v))),
                )
                .map(|(pattern, (is_use, value))| {
                    if is_use {
                        ItemKind::Use {
                            binder: Some(pattern),
                            provider: value,
                        }
                    } else {
                        ItemKind::Let { pattern, value }
                    }
                });
            let use_stmt =
                just(Token::Use)
                    .ignore_then(expr.clone())
                    .map(|provider| ItemKind::Use {
                        binder: None,
                        provider,
                    });
            let return_stmt = just(Token::Return)
                .ignore_then(expr.clone().or_not())
                .map(ItemKind::Return);
            let next_stmt = just(Token::Next)
                .ignore_then(expr.clone().or_not())
                .then(
                    just(Token::With)
                        .ignore_then(
                            modifier
                                .separated_by(just(Token::Comma))
                                .allow_trailing()
                                .collect::<Vec<_>>()
                                .delimited_by(just(Token::LBrace), just(Token::RBrace)),
                        )
                        .or_not(),
                )
                .map(|(value, updates)| ItemKind::Next { value, updates });
            let break_stmt = just(Token::Break)
                .ignore_then(expr.clone().or_not())
                .map(ItemKind::Break);
            let local_agent = agent_decl.clone().map(|d| ItemKind::Agent(Box::new(d)));
            let item = choice((
                let_or_use,
                use_stmt,
                local_agent,
                return_stmt,
                next_stmt,
                break_stmt,
                expr.clone().map(ItemKind::Expr),
            ))
            .map_with(|kind, e| Item {
                kind,
                span: span(e.span()),
            })
            .labelled("a statement or expression")
            .boxed();
            just(Token::BlockOpen)
                .ignore_then(sep.clone().or_not())
                .ignore_then(
                    item.separated_by(sep.clone())
                        .allow_trailing()
                        .collect::<Vec<_>>(),
                )
                .then_ignore(just(Token::RBrace))
                .map_with(|items, e| Block {
                    items,
                    span: span(e.span()),
                })
                .labelled("a block")
                .boxed()
        });

        doc.clone()
            .or_not()
            .then(word("private").or_not())
            .then_ignore(just(Token::Agent))
            .then(ident)
            .then(generics.clone())
            .then(binding_params.clone())
            .then(just(Token::Arrow).ignore_then(ty.clone()).or_not())
            .then(just(Token::With).ignore_then(ty.clone()).or_not())
            .then(block.clone())
            .map_with(
                |(((((((doc, private), name), generics), params), ret), effects), body), e| {
                    AgentDecl {
                        doc,
                        private: private.is_some(),
                        name,
                        generics,
                        params,
                        ret,
                        effects,
                        body,
                        span: span(e.span()),
                    }
                },
            )
            .boxed()
    });

    // ------------------------------------------------------------------------------------
    // Declarations
    // ------------------------------------------------------------------------------------
    let module_path = ident
        .separated_by(just(Token::Dot))
        .at_least(1)
        .collect::<Vec<_>>()
        .labelled("a module path");
    let import_item = just(Token::Type)
        .or_not()
        .then(ident)
        .map_with(|(is_type, name), e| ImportItem {
            is_type: is_type.is_some(),
            name,
            span: span(e.span()),
        });
    let import = just(Token::Import)
        .ignore_then(
            import_item
                .separated_by(just(Token::Comma))
                .allow_trailing()
                .collect::<Vec<_>>()
                .delimited_by(lbrace.clone(), just(Token::RBrace))
                .then_ignore(just(Token::From))
                .then(module_path.clone())
                .map(|(items, path)| (ImportKind::Names { items }, path))
                .or(module_path
                    .then(just(Token::As).ignore_then(ident).or_not())
                    .map(|(path, alias)| (ImportKind::Qualified { alias }, path))),
        )
        .map_with(|(kind, path), e| {
            Decl::Import(Import {
                kind,
                path,
                span: span(e.span()),
            })
        });
    let synonym = just(Token::Type)
        .ignore_then(ident)
        .then(generics.clone())
        .then_ignore(just(Token::Eq))
        .then(ty.clone())
        .validate(|((name, generics), ty), e, emitter| {
            check_type_name(&name, emitter);
            Decl::Synonym(Synonym {
                name,
                generics,
                ty,
                span: span(e.span()),
            })
        });
    let request = doc
        .clone()
        .or_not()
        .then_ignore(just(Token::Request))
        .then(ident)
        .then(generics.clone())
        .then(sig_params.clone())
        .then_ignore(just(Token::Arrow))
        .then(ty.clone())
        .validate(|((((doc, name), generics), params), ret), e, emitter| {
            check_type_name(&name, emitter);
            Decl::Request(RequestDecl {
                doc,
                name,
                generics,
                params,
                ret,
                span: span(e.span()),
            })
        });
    let external = doc
        .clone()
        .or_not()
        .then_ignore(just(Token::External))
        .then_ignore(just(Token::Agent))
        .then(ident)
        .then(generics.clone())
        .then(sig_params.clone())
        .then_ignore(just(Token::Arrow))
        .then(ty.clone())
        .then(just(Token::With).ignore_then(ty.clone()).or_not())
        .then(just(Token::From).ignore_then(string).or_not())
        .map_with(
            |((((((doc, name), generics), params), ret), effects), from), e| {
                Decl::External(ExternalDecl {
                    doc,
                    name,
                    generics,
                    params,
                    ret,
                    effects,
                    from,
                    span: span(e.span()),
                })
            },
        );
    let primitive = doc
        .clone()
        .or_not()
        .then_ignore(just(Token::Primitive))
        .then_ignore(just(Token::Agent))
        .then(ident)
        .then(generics.clone())
        .then(sig_params.clone())
        .then_ignore(just(Token::Arrow))
        .then(ty.clone())
        .then(just(Token::With).ignore_then(ty.clone()).or_not())
        .map_with(|(((((doc, name), generics), params), ret), effects), e| {
            Decl::Primitive(PrimitiveDecl {
                doc,
                name,
                generics,
                params,
                ret,
                effects,
                span: span(e.span()),
            })
        });
    let data = doc
        .clone()
        .or_not()
        .then_ignore(just(Token::Data))
        .then(ident)
        .then(generics)
        .then(sig_params)
        .validate(|(((doc, name), generics), params), e, emitter| {
            check_type_name(&name, emitter);
            Decl::Data(DataDecl {
                doc,
                name,
                generics,
                params,
                span: span(e.span()),
            })
        });

    choice((
        import,
        synonym,
        request,
        external,
        primitive,
        data,
        agent_decl.map(Decl::Agent),
    ))
    .labelled("a declaration")
    .then_ignore(nl.repeated())
    .repeated()
    .collect::<Vec<_>>()
    .then_ignore(end())
}

#[cfg(test)]
mod tests;
