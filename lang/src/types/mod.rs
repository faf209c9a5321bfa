//! The type system: semantic types and rows, the subtyping lattice, and rendering.

pub mod display;
pub mod lattice;
pub mod ty;

pub use display::{render_row, render_ty};
pub use lattice::{Bounds, Lattice};
pub use ty::*;
