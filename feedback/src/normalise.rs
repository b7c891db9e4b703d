//! The token stream put in a normal form before it is fingerprinted (issue 61), as JPlag's
//! `--normalize` does: a copy whose statements were reordered, whose loops were rewritten or which
//! was padded with dead code reads as the original again. On the statements of every block:
//! - every `for (A; C; B) S` becomes `A; while (C) { S B; }`, so both loop forms read alike;
//! - a statement that only declares or assigns a name used nowhere else in the file, and an `if` or
//!   `while` on a literal 0 or `false`, are dropped: dead code;
//! - each run of simple statements is put in one canonical order that keeps every dependence between
//!   them (a statement that reads or writes a name another one writes stays after it), so that
//!   independent statements read alike in whatever order they were written. Barriers, jumps,
//!   directives and control statements stay where they are, and bound the runs.
//!
//! The statements come from a small reader of C and CUDA, not a compiler's parser: a block is what
//! braces enclose where a statement may start, a simple statement runs to its `;`. Code it reads
//! wrongly is still fingerprinted, only less normalised.

use std::collections::{BTreeMap, BTreeSet};

/// What a token is, for the normal form and for the fingerprints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A keyword, or one of CUDA's words kept as written (`__syncthreads`, `threadIdx`).
    Word,
    /// Any other identifier: the student's own names, fingerprinted as `I`.
    Name,
    /// A number, string or character, fingerprinted as `L`.
    Literal,
    /// An operator or punctuation.
    Punct,
    /// The end of a preprocessor line (never fingerprinted).
    DirectiveEnd,
}

/// One token: its text as written and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub text: &'a str,
    pub kind: Kind,
}

impl<'a> Token<'a> {
    pub const fn new(text: &'a str, kind: Kind) -> Token<'a> {
        Token { text, kind }
    }

    /// As fingerprinted: every name `I`, every literal `L`, the rest as written.
    pub fn shown(&self) -> &'a str {
        match self.kind {
            Kind::Name => "I",
            Kind::Literal => "L",
            _ => self.text,
        }
    }

    fn is(&self, text: &str) -> bool {
        self.text == text && matches!(self.kind, Kind::Punct | Kind::Word)
    }
}

/// A statement as the reader sees it.
#[derive(Debug, Clone)]
enum Statement<'a> {
    /// Tokens up to and including the `;` that ends them.
    Simple(Vec<Token<'a>>),
    /// A preprocessor line, its end included.
    Directive(Vec<Token<'a>>),
    /// `head { body }`: a function, a control statement, a struct or a namespace.
    Block {
        head: Vec<Token<'a>>,
        body: Vec<Statement<'a>>,
    },
}

/// `tokens` in the normal form: loops as `while`, dead statements gone, independent statements in
/// canonical order.
pub fn normalised<'a>(tokens: &[Token<'a>]) -> Vec<Token<'a>> {
    let mut at = 0;
    let statements = read_statements(tokens, &mut at, true);
    let mut statements = statements.into_iter().flat_map(as_while).collect::<Vec<_>>();
    drop_dead_code(&mut statements);
    canonical_order(&mut statements);
    let mut out = Vec::with_capacity(tokens.len());
    flatten(&statements, &mut out);
    out
}

/// The statements from `at` to the `}` that closes their block (consumed), or to the end. At the
/// top level a stray `}` is a statement of its own, so that nothing after it is lost.
fn read_statements<'a>(tokens: &[Token<'a>], at: &mut usize, top: bool) -> Vec<Statement<'a>> {
    let mut statements = Vec::new();
    while let Some(token) = tokens.get(*at) {
        if token.is("}") {
            *at += 1;
            if top {
                statements.push(Statement::Simple(vec![*token]));
                continue;
            }
            return statements;
        }
        if token.is("#") {
            let end = tokens[*at..]
                .iter()
                .position(|token| token.kind == Kind::DirectiveEnd)
                .map_or(tokens.len(), |offset| *at + offset + 1);
            statements.push(Statement::Directive(tokens[*at..end].to_vec()));
            *at = end;
            continue;
        }
        statements.push(read_statement(tokens, at));
    }
    statements
}

/// One statement from `at` (which is neither `}` nor `#`), at least one token.
fn read_statement<'a>(tokens: &[Token<'a>], at: &mut usize) -> Statement<'a> {
    let mut head: Vec<Token<'a>> = Vec::new();
    let mut depth = 0usize;
    while let Some(&token) = tokens.get(*at) {
        if token.is("{") {
            if depth == 0 && !opens_an_expression(&head) {
                *at += 1;
                let body = read_statements(tokens, at, false);
                return Statement::Block { head, body };
            }
            // An initialiser or a temporary (`= {1, 2}`, `Interval{a, b}`): part of the statement.
            let end = matching_brace(tokens, *at);
            head.extend_from_slice(&tokens[*at..end]);
            *at = end;
            continue;
        }
        if token.is("}") && depth == 0 && !head.is_empty() {
            return Statement::Simple(head); // a statement its block's end cut short
        }
        match token.text {
            "(" | "[" if token.kind == Kind::Punct => depth += 1,
            ")" | "]" if token.kind == Kind::Punct => depth = depth.saturating_sub(1),
            _ => {}
        }
        head.push(token);
        *at += 1;
        if token.is(";") && depth == 0 {
            break;
        }
    }
    Statement::Simple(head)
}

/// Whether a `{` after `head` (outside parentheses) belongs to an expression: after `=`, `,`, `(`,
/// `?`, `:` or `return`, or after a type's name where the statement assigns or returns.
fn opens_an_expression(head: &[Token]) -> bool {
    let Some(last) = head.last() else { return false };
    let assigns = head.iter().any(|token| token.is("=") || token.is("return"));
    ["=", ",", "(", "[", "?", ":", "return"]
        .iter()
        .any(|text| last.is(text))
        || (last.kind == Kind::Name && assigns)
}

/// Where the brace at `open` is closed, one past its `}` (the end of the input if never).
fn matching_brace(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (offset, token) in tokens[open..].iter().enumerate() {
        if token.is("{") {
            depth += 1;
        } else if token.is("}") {
            depth -= 1;
            if depth == 0 {
                return open + offset + 1;
            }
        }
    }
    tokens.len()
}

/// `statement` with every `for (A; C; B) S` in it written `A; while (C) { S B; }` (a missing C reads
/// `true`). Range-based `for` and anything the reader cannot split stays as it is.
fn as_while(statement: Statement) -> Vec<Statement> {
    match statement {
        Statement::Block { head, body } => {
            let body: Vec<Statement> = body.into_iter().flat_map(as_while).collect();
            match for_header(&head) {
                Some((init, condition, step)) if head.len() == init.len() + condition.len() + step.len() + 5 => {
                    while_form(init, condition, step, body)
                }
                _ => vec![Statement::Block { head, body }],
            }
        }
        Statement::Simple(tokens) => match for_header(&tokens) {
            Some((init, condition, step)) => {
                let header = init.len() + condition.len() + step.len() + 5;
                let mut at = 0;
                let body = read_statements(&tokens[header..], &mut at, false);
                let body = body.into_iter().flat_map(as_while).collect();
                while_form(init, condition, step, body)
            }
            None => vec![Statement::Simple(tokens)],
        },
        directive => vec![directive],
    }
}

/// `for ( A ; C ; B )` at the start of `tokens`: A, C and B, where the header has exactly two `;`
/// outside inner parentheses.
type ForHeader<'t, 'a> = (&'t [Token<'a>], &'t [Token<'a>], &'t [Token<'a>]);

fn for_header<'t, 'a>(tokens: &'t [Token<'a>]) -> Option<ForHeader<'t, 'a>> {
    if !(tokens.first()?.is("for") && tokens.get(1)?.is("(")) {
        return None;
    }
    let mut depth = 0usize;
    let mut semicolons = Vec::new();
    for (index, token) in tokens.iter().enumerate().skip(1) {
        if token.is("(") {
            depth += 1;
        } else if token.is(")") {
            depth -= 1;
            if depth == 0 {
                return match semicolons[..] {
                    [first, second] => Some((
                        &tokens[2..first],
                        &tokens[first + 1..second],
                        &tokens[second + 1..index],
                    )),
                    _ => None,
                };
            }
        } else if token.is(";") && depth == 1 {
            semicolons.push(index);
        }
    }
    None
}

/// `A; while (C) { body B; }` from a `for`'s parts.
fn while_form<'a>(
    init: &[Token<'a>],
    condition: &[Token<'a>],
    step: &[Token<'a>],
    mut body: Vec<Statement<'a>>,
) -> Vec<Statement<'a>> {
    const SEMICOLON: Token = Token::new(";", Kind::Punct);
    let mut out = Vec::new();
    if !init.is_empty() {
        out.push(Statement::Simple([init, &[SEMICOLON]].concat()));
    }
    if !step.is_empty() {
        body.push(Statement::Simple([step, &[SEMICOLON]].concat()));
    }
    let mut head = vec![Token::new("while", Kind::Word), Token::new("(", Kind::Punct)];
    if condition.is_empty() {
        head.push(Token::new("true", Kind::Word));
    } else {
        head.extend_from_slice(condition);
    }
    head.push(Token::new(")", Kind::Punct));
    out.push(Statement::Block { head, body });
    out
}

/// Drops dead statements until none is left: a simple statement whose names it writes are used
/// nowhere else in the file, and a statement under `if` or `while` on a literal 0 or `false`.
fn drop_dead_code(statements: &mut Vec<Statement>) {
    let mut counts = BTreeMap::new();
    count_names(statements, &mut counts);
    while drop_dead_once(statements, &mut counts) {}
}

fn count_names<'a>(statements: &[Statement<'a>], counts: &mut BTreeMap<&'a str, usize>) {
    let mut tokens = Vec::new();
    flatten(statements, &mut tokens);
    for token in tokens.iter().filter(|token| token.kind == Kind::Name) {
        *counts.entry(token.text).or_default() += 1;
    }
}

/// One pass of [`drop_dead_code`]; whether anything was dropped.
fn drop_dead_once<'a>(statements: &mut Vec<Statement<'a>>, counts: &mut BTreeMap<&'a str, usize>) -> bool {
    let mut dropped = false;
    let mut kept = Vec::with_capacity(statements.len());
    for mut statement in statements.drain(..) {
        if is_dead(&statement, counts) {
            let mut gone = BTreeMap::new();
            count_names(std::slice::from_ref(&statement), &mut gone);
            for (name, count) in gone {
                counts.entry(name).and_modify(|left| *left -= count);
            }
            dropped = true;
            continue;
        }
        if let Statement::Block { body, .. } = &mut statement {
            dropped |= drop_dead_once(body, counts);
        }
        kept.push(statement);
    }
    *statements = kept;
    dropped
}

fn is_dead(statement: &Statement, counts: &BTreeMap<&str, usize>) -> bool {
    match statement {
        Statement::Simple(tokens) if !is_fence(tokens) => {
            let (writes, _) = effects(tokens);
            !writes.is_empty()
                && writes.iter().all(|name| {
                    let here = tokens
                        .iter()
                        .filter(|token| token.kind == Kind::Name && token.text == *name)
                        .count();
                    counts.get(name) == Some(&here)
                })
        }
        Statement::Simple(tokens) | Statement::Block { head: tokens, .. } => never_runs(tokens),
        Statement::Directive(_) => false,
    }
}

/// `if (0)`, `if (false)`, `while (0)`, `while (false)` at the start of `tokens`.
fn never_runs(tokens: &[Token]) -> bool {
    matches!(tokens, [keyword, open, value, close, ..]
        if (keyword.is("if") || keyword.is("while")) && open.is("(") && close.is(")")
            && (value.text == "0" || value.is("false")))
}

/// Words a statement may not be moved across: control flow and CUDA's barriers and fences.
const FENCES: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "return",
    "break",
    "continue",
    "goto",
    "__syncthreads",
    "__syncwarp",
    "__threadfence",
    "__threadfence_block",
];

fn is_fence(tokens: &[Token]) -> bool {
    tokens
        .iter()
        .any(|token| token.kind == Kind::Word && FENCES.contains(&token.text))
}

/// The assignment operators, whose left side a statement writes.
const ASSIGNMENTS: &[&str] = &["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="];

/// The names a simple statement writes (the one it declares or assigns, or steps with `++`/`--`)
/// and the names it reads. A store into an element or a member (`as[y][x] = v`, `c(r, k) = s`)
/// writes the array's name.
fn effects<'a>(tokens: &[Token<'a>]) -> (BTreeSet<&'a str>, BTreeSet<&'a str>) {
    let mut depth = 0usize;
    let mut assignment = None;
    for (index, token) in tokens.iter().enumerate() {
        match token.text {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            text if depth == 0 && token.kind == Kind::Punct && ASSIGNMENTS.contains(&text) => {
                assignment = Some(index);
                break;
            }
            _ => {}
        }
    }
    let written = match assignment {
        Some(index) if is_declaration(&tokens[..index]) => declared(&tokens[..index]),
        Some(index) => names(&tokens[..index]).next(),
        None if tokens.iter().any(|token| token.is("++") || token.is("--")) => names(tokens).next(),
        None if is_declaration(tokens) => declared(tokens),
        None => None,
    };
    let mut reads: BTreeSet<&str> = names(tokens).collect();
    let plain = assignment.is_some_and(|index| tokens[index].text == "=");
    if let (Some(name), true) = (written, plain || assignment.is_none()) {
        // Read too where it also stands on the right of its own `=` (`x = x + 1`).
        let right = assignment.map_or(&[][..], |index| &tokens[index + 1..]);
        if !names(right).any(|read| read == name) {
            reads.remove(name);
        }
    }
    (written.into_iter().collect(), reads)
}

fn names<'t, 'a>(tokens: &'t [Token<'a>]) -> impl Iterator<Item = &'a str> + 't {
    tokens
        .iter()
        .filter(|token| token.kind == Kind::Name)
        .map(|token| token.text)
}

/// Whether `tokens` start a declaration: a keyword (`const`, `int`, `__shared__`), or a type's name
/// followed by a name, `<`, `*` or `&` (`T sum`, `MatrixView<T> m`, `Sphere* s`).
fn is_declaration(tokens: &[Token]) -> bool {
    match tokens {
        [first, ..] if first.kind == Kind::Word => true,
        [first, second, ..] if first.kind == Kind::Name => {
            second.kind == Kind::Name || second.is("<") || second.is("*") || second.is("&")
        }
        _ => false,
    }
}

/// The name a declaration declares: the last name before its first `[`, `(`, `=`, `,` or `;`.
fn declared<'a>(tokens: &[Token<'a>]) -> Option<&'a str> {
    let end = tokens
        .iter()
        .position(|token| ["[", "(", "=", ",", ";"].iter().any(|text| token.is(text)))
        .unwrap_or(tokens.len());
    names(&tokens[..end]).last()
}

/// Each run of movable simple statements in the canonical order that keeps their dependences, in
/// every block.
fn canonical_order(statements: &mut [Statement]) {
    let mut start = 0;
    while start < statements.len() {
        let end = (start..statements.len())
            .find(|&index| !movable(&statements[index]))
            .unwrap_or(statements.len());
        if end - start > 1 {
            let run: Vec<Statement> = statements[start..end].to_vec();
            for (slot, statement) in statements[start..end].iter_mut().zip(in_order(run)) {
                *slot = statement;
            }
        }
        if let Some(Statement::Block { body, .. }) = statements.get_mut(end) {
            canonical_order(body);
        }
        start = end + 1;
    }
}

fn movable(statement: &Statement) -> bool {
    matches!(statement, Statement::Simple(tokens) if !is_fence(tokens))
}

/// `run` sorted topologically (a statement after every earlier one it depends on), the ready
/// statement whose fingerprinted text is smallest first, ties in their written order.
fn in_order(run: Vec<Statement>) -> Vec<Statement> {
    let facts: Vec<_> = run
        .iter()
        .map(|statement| match statement {
            Statement::Simple(tokens) => {
                let key: Vec<&str> = tokens.iter().map(Token::shown).collect();
                (effects(tokens), key.join(" "))
            }
            _ => unreachable!("runs hold simple statements only"),
        })
        .collect();
    let depends = |later: usize, earlier: usize| {
        let ((writes_a, reads_a), _) = &facts[earlier];
        let ((writes_b, reads_b), _) = &facts[later];
        !writes_a.is_disjoint(writes_b) || !writes_a.is_disjoint(reads_b) || !writes_b.is_disjoint(reads_a)
    };
    let mut placed = vec![false; run.len()];
    let mut order = Vec::with_capacity(run.len());
    while order.len() < run.len() {
        let next = (0..run.len())
            .filter(|&index| !placed[index] && (0..index).all(|earlier| placed[earlier] || !depends(index, earlier)))
            .min_by(|&a, &b| facts[a].1.cmp(&facts[b].1).then(a.cmp(&b)))
            .expect("the first unplaced statement is always ready");
        placed[next] = true;
        order.push(next);
    }
    let mut run: Vec<Option<Statement>> = run.into_iter().map(Some).collect();
    order.into_iter().filter_map(|index| run[index].take()).collect()
}

/// The statements' tokens in order, blocks with their braces.
fn flatten<'a>(statements: &[Statement<'a>], out: &mut Vec<Token<'a>>) {
    for statement in statements {
        match statement {
            Statement::Simple(tokens) | Statement::Directive(tokens) => out.extend_from_slice(tokens),
            Statement::Block { head, body } => {
                out.extend_from_slice(head);
                out.push(Token::new("{", Kind::Punct));
                flatten(body, out);
                out.push(Token::new("}", Kind::Punct));
            }
        }
    }
}
