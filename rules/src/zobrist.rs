//! Zobrist keys for incremental position hashing.

/// SplitMix64: a fixed, well-mixed key stream, so hashes are stable across runs and builds.
const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

const fn make_keys() -> [[u64; 128]; 4] {
    let mut keys = [[0u64; 128]; 4];
    let mut state = 0x007A_1111_u64;
    let mut kind = 0;
    while kind < 4 {
        let mut bit = 0;
        while bit < 128 {
            let (s, k) = splitmix(state);
            state = s;
            keys[kind][bit] = k;
            bit += 1;
        }
        kind += 1;
    }
    keys
}

/// Keys indexed by `[color * 2 + is_king][bit]`.
pub(crate) const PIECE_KEYS: [[u64; 128]; 4] = make_keys();

/// Key xor-ed in when white is to move.
pub(crate) const WHITE_TO_MOVE: u64 = splitmix(0x00C0_FFEE).1;

/// Key of one piece.
#[inline(always)]
pub(crate) fn piece(color: usize, king: bool, bit: u32) -> u64 {
    PIECE_KEYS[color * 2 + king as usize][bit as usize]
}

const fn make_offending_keys() -> [u64; 128] {
    let mut keys = [0u64; 128];
    let mut state = 0x4855_4646_u64;
    let mut bit = 0;
    while bit < 128 {
        let (s, k) = splitmix(state);
        state = s;
        keys[bit] = k;
        bit += 1;
    }
    keys
}

/// Keys of the offending pieces (huffing), indexed by bit.
const OFFENDING_KEYS: [u64; 128] = make_offending_keys();

/// Key of a set of offending pieces.
#[inline]
pub(crate) fn offending(bits: crate::bitset::Wide) -> u64 {
    let mut h = 0;
    let mut b = bits;
    while b != 0 {
        h ^= OFFENDING_KEYS[b.trailing_zeros() as usize];
        b &= b - 1;
    }
    h
}
