//! The board integer: one bit per square of a board's bit layout.
//!
//! 8x8 and 10x10 boards fit a `u64` (ghost bits included); 12x12 needs 78
//! bits, so a `u128`.  The move generator is written once over [`Bitset`] and
//! compiled per variant with the narrowest integer that holds its board, so
//! the small boards keep their 64-bit code.  Positions store every board as a
//! `u128` ([`Wide`]) and hand the generator its own width.

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, Not, Shl, Shr};

/// A set of square bits as wide as any board: what positions and moves store.
pub type Wide = u128;

/// An integer used as a set of square bits.
pub(crate) trait Bitset:
    Copy
    + Eq
    + std::fmt::Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + BitAndAssign
    + BitOrAssign
{
    /// The empty set.
    const ZERO: Self;
    /// The set holding only bit `i`.
    fn bit(i: u32) -> Self;
    /// Number of bits set.
    fn count_ones(self) -> u32;
    /// Index of the lowest bit set (the width if none).
    fn trailing_zeros(self) -> u32;
    /// The set without its lowest bit.
    fn without_lowest(self) -> Self;
    /// The lowest bit alone.
    fn lowest(self) -> Self;
    /// Whether no bit is set.
    #[inline(always)]
    fn is_empty(self) -> bool {
        self == Self::ZERO
    }
    /// The set widened to [`Wide`].
    fn wide(self) -> Wide;
    /// The low bits of a [`Wide`] set (the caller knows the rest are clear).
    fn narrow(w: Wide) -> Self;
}

macro_rules! impl_bitset {
    ($t:ty) => {
        impl Bitset for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn bit(i: u32) -> Self {
                1 << i
            }
            #[inline(always)]
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn without_lowest(self) -> Self {
                self & self.wrapping_sub(1)
            }
            #[inline(always)]
            fn lowest(self) -> Self {
                self & self.wrapping_neg()
            }
            #[inline(always)]
            fn wide(self) -> Wide {
                self as Wide
            }
            #[inline(always)]
            fn narrow(w: Wide) -> Self {
                w as $t
            }
        }
    };
}

impl_bitset!(u64);
impl_bitset!(u128);

/// Iterator over the set bits of a bitboard, lowest first.
#[derive(Clone, Copy)]
pub(crate) struct Bits<B: Bitset>(pub B);

impl<B: Bitset> Iterator for Bits<B> {
    type Item = u32;
    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        if self.0.is_empty() {
            None
        } else {
            let b = self.0.trailing_zeros();
            self.0 = self.0.without_lowest();
            Some(b)
        }
    }
}
