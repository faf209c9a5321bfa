//! The tokens of the katari language (`language.md` §3) as the parser sees them.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Token<'s> {
    Ident(&'s str),
    /// An integer literal's digits (no sign).
    Int(&'s str),
    /// A number literal as written (`1.5`, `1e3`).
    Number(&'s str),
    /// A string literal, escapes decoded.
    Str(String),
    /// `f"` opening a template.
    TemplateStart,
    /// Literal text between interpolations, escapes decoded.
    TemplateChunk(String),
    /// `${` inside a template.
    InterpOpen,
    /// The `}` closing an interpolation.
    InterpClose,
    /// The `"` closing a template.
    TemplateEnd,
    /// A line end that the layout pass kept because it ends an item (line mode).
    Newline,
    /// A `{` that opens a bracket-mode brace (record literal, object type, arms, …).
    LBrace,
    /// A `{` that opens a block (line mode inside); produced by the layout pass.
    BlockOpen,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    // Reserved words.
    Agent,
    Request,
    External,
    Primitive,
    Data,
    Type,
    Import,
    From,
    As,
    Use,
    Handler,
    For,
    Parallel,
    If,
    Else,
    Match,
    Case,
    Return,
    Next,
    Break,
    Var,
    Let,
    Then,
    In,
    With,
    Of,
    True,
    False,
    Null,
    /// The lone `_`.
    Underscore,
    // Operators and punctuation.
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    PlusPlus,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Bang,
    Eq,
    FatArrow,
    Arrow,
    QuestionEq,
    Colon,
    Comma,
    Dot,
    Semi,
    Pipe,
    Ellipsis,
    Question,
    At,
}

impl Token<'_> {
    /// The reserved word for an identifier-shaped text, if it is one.
    pub fn keyword(text: &str) -> Option<Token<'static>> {
        Some(match text {
            "agent" => Token::Agent,
            "request" => Token::Request,
            "external" => Token::External,
            "primitive" => Token::Primitive,
            "data" => Token::Data,
            "type" => Token::Type,
            "import" => Token::Import,
            "from" => Token::From,
            "as" => Token::As,
            "use" => Token::Use,
            "handler" => Token::Handler,
            "for" => Token::For,
            "parallel" => Token::Parallel,
            "if" => Token::If,
            "else" => Token::Else,
            "match" => Token::Match,
            "case" => Token::Case,
            "return" => Token::Return,
            "next" => Token::Next,
            "break" => Token::Break,
            "var" => Token::Var,
            "let" => Token::Let,
            "then" => Token::Then,
            "in" => Token::In,
            "with" => Token::With,
            "of" => Token::Of,
            "true" => Token::True,
            "false" => Token::False,
            "null" => Token::Null,
            _ => return None,
        })
    }

    /// Binary and prefix operators after which a line end does not end an item (§4.2).
    pub fn continues_line(&self) -> bool {
        matches!(
            self,
            Token::Plus
                | Token::Minus
                | Token::Star
                | Token::Slash
                | Token::Percent
                | Token::PlusPlus
                | Token::EqEq
                | Token::NotEq
                | Token::Lt
                | Token::Le
                | Token::Gt
                | Token::Ge
                | Token::AndAnd
                | Token::OrOr
                | Token::Bang
                | Token::Eq
        )
    }

    /// Whether the token starts a top-level declaration (used by error recovery, §4.4).
    pub fn starts_declaration(&self) -> bool {
        matches!(
            self,
            Token::At
                | Token::Agent
                | Token::Request
                | Token::External
                | Token::Primitive
                | Token::Data
                | Token::Type
                | Token::Import
        ) || *self == Token::Ident("private")
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Token::Ident(s) => return write!(f, "`{s}`"),
            Token::Int(s) | Token::Number(s) => return write!(f, "`{s}`"),
            Token::Str(_) => "a string",
            Token::TemplateStart => "a template",
            Token::TemplateChunk(_) => "template text",
            Token::InterpOpen => "`${`",
            Token::InterpClose => "`}`",
            Token::TemplateEnd => "the end of a template",
            Token::Newline => "a line end",
            Token::LBrace | Token::BlockOpen => "`{`",
            Token::RBrace => "`}`",
            Token::LParen => "`(`",
            Token::RParen => "`)`",
            Token::LBracket => "`[`",
            Token::RBracket => "`]`",
            Token::Agent => "`agent`",
            Token::Request => "`request`",
            Token::External => "`external`",
            Token::Primitive => "`primitive`",
            Token::Data => "`data`",
            Token::Type => "`type`",
            Token::Import => "`import`",
            Token::From => "`from`",
            Token::As => "`as`",
            Token::Use => "`use`",
            Token::Handler => "`handler`",
            Token::For => "`for`",
            Token::Parallel => "`parallel`",
            Token::If => "`if`",
            Token::Else => "`else`",
            Token::Match => "`match`",
            Token::Case => "`case`",
            Token::Return => "`return`",
            Token::Next => "`next`",
            Token::Break => "`break`",
            Token::Var => "`var`",
            Token::Let => "`let`",
            Token::Then => "`then`",
            Token::In => "`in`",
            Token::With => "`with`",
            Token::Of => "`of`",
            Token::True => "`true`",
            Token::False => "`false`",
            Token::Null => "`null`",
            Token::Underscore => "`_`",
            Token::Plus => "`+`",
            Token::Minus => "`-`",
            Token::Star => "`*`",
            Token::Slash => "`/`",
            Token::Percent => "`%`",
            Token::PlusPlus => "`++`",
            Token::EqEq => "`==`",
            Token::NotEq => "`!=`",
            Token::Lt => "`<`",
            Token::Le => "`<=`",
            Token::Gt => "`>`",
            Token::Ge => "`>=`",
            Token::AndAnd => "`&&`",
            Token::OrOr => "`||`",
            Token::Bang => "`!`",
            Token::Eq => "`=`",
            Token::FatArrow => "`=>`",
            Token::Arrow => "`->`",
            Token::QuestionEq => "`?=`",
            Token::Colon => "`:`",
            Token::Comma => "`,`",
            Token::Dot => "`.`",
            Token::Semi => "`;`",
            Token::Pipe => "`|`",
            Token::Ellipsis => "`...`",
            Token::Question => "`?`",
            Token::At => "`@`",
        };
        f.write_str(s)
    }
}
