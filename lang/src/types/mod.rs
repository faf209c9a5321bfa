//! The type system: semantic types and rows, the subtyping lattice, and rendering.

pub mod conform;
pub mod display;
pub mod lattice;
pub mod schema;
pub mod subst;
pub mod ty;

pub use display::{render_arg, render_row, render_ty};
pub use lattice::{Bounds, Lattice};
pub use subst::Subst;
pub use ty::*;
