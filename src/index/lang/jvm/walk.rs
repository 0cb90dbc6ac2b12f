//! The walk state Java and Kotlin share: both read brace-delimited type bodies off one stack of
//! open frames, with an enum's constants read before its members. Each language adds its own
//! walk (`run` and the declarations it knows) as methods on [`Walk`] for its marker type.

use std::marker::PhantomData;

use super::{Dialect, Parsed, Src};
use crate::index::facts::{FileFacts, SymbolKind};
use crate::index::lex::{Syntax, lex};

/// An open type body.
pub struct Frame {
    /// Index in `model.types`.
    pub ty: usize,
    /// Index in `facts.symbols`.
    pub sym: usize,
    /// Still reading an enum's constants (before its `;`).
    pub enum_phase: bool,
    /// Token index of the closing brace.
    pub close: usize,
}

/// A walk over one file: its tokens, what it found so far, and the open type bodies. `L`
/// marks the language whose methods read it.
pub struct Walk<'s, 'a, L> {
    pub src: &'s Src<'a>,
    pub out: Parsed<'a>,
    pub stack: Vec<Frame>,
    lang: PhantomData<L>,
}

/// Lexes `text` as `syntax`, walks it with `run` and finishes its facts.
pub fn extract<L>(
    text: &str,
    syntax: Syntax,
    dialect: Dialect,
    run: impl FnOnce(&mut Walk<'_, '_, L>),
) -> FileFacts {
    let lx = lex(syntax, text);
    let src = Src::new(&lx, dialect);
    let mut walk = Walk {
        src: &src,
        out: Parsed::default(),
        stack: Vec::new(),
        lang: PhantomData,
    };
    run(&mut walk);
    walk.out.finish(&src)
}

impl<L> Walk<'_, '_, L> {
    /// Whether the innermost open body is an enum still reading its constants.
    pub fn in_enum_phase(&self) -> bool {
        self.stack.last().is_some_and(|f| f.enum_phase)
    }

    /// The innermost open type (its index in `model.types`) and its qualified name.
    pub fn container(&self) -> (Option<usize>, Option<String>) {
        self.out.container(self.stack.last().map(|f| f.ty))
    }

    /// Records a symbol declared in the innermost open type (or at top level); returns its
    /// index in `facts.symbols`.
    pub fn push_member(
        &mut self,
        name: &str,
        kind: SymbolKind,
        lines: (u32, u32),
        doc_line: Option<u32>,
    ) -> usize {
        let container = self.container().1;
        self.out
            .facts
            .push_symbol(name, kind, lines, doc_line, container)
    }

    /// The innermost open enum has read its constants: members follow.
    pub fn end_enum_phase(&mut self) {
        if let Some(f) = self.stack.last_mut() {
            f.enum_phase = false;
        }
    }

    /// The `}` at token `i`: when it is the innermost body's own brace, that body ends there
    /// (a stray one closes nothing).
    pub fn close_body(&mut self, i: usize) {
        if self.stack.last().is_some_and(|f| f.close == i)
            && let Some(f) = self.stack.pop()
        {
            self.out.facts.symbols[f.sym].end_line = self.src.toks[i].line;
        }
    }
}
